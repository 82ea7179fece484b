#pragma once
// A built wheel re-labelled as a PEP 825 variant wheel of another version:
// the same package files byte for byte (so `kwheel verify` and the Sigstore
// chain over metadata.json hold as before), a `.dist-info` renamed for the
// new version, METADATA's Version line changed to it, `variant.json` added,
// and RECORD written anew over all of it. Written by the wheel writer, so
// the result is as reproducible as a build.
#include <filesystem>
#include <string>

#include "kwheel/wheel/wheel_reader.hpp"
#include "kwheel/wheel/wheel_writer.hpp"

namespace kwheel {

struct VariantRelabel {
  std::string version;       // the new version, "1+torch2.11"
  std::string label;         // the variant label, "cu130_sm90", "null"
  std::string variant_json;  // the bytes of <dist-info>/variant.json
  // How errors name the wheel re-labelled: the path its user gave
  // ("dist/img2gray-...whl"), not a copy being read or the variant wheel
  // being derived (files the user never saw). The wheel's filename when empty.
  std::string source;
};

// The METADATA the variant wheel carries: `wheel`'s, its header's Version
// field changed to `relabel.version`. Throws Error(input) when it has none.
std::string relabelled_metadata(const WheelArchive& wheel, const VariantRelabel& relabel);

// "{name}-{version}-{python}-{abi}-{platform}-{label}.whl" for `wheel`.
std::string relabelled_filename(const WheelArchive& wheel, const VariantRelabel& relabel);

// Stages the variant wheel in `out_dir` (the caller commits it). Throws
// Error(input) for a wheel whose RECORD does not hold (only what was
// checked is re-labelled), one with a .data directory (named for the old
// version, and a variant wheel's files are the package's byte for byte) or
// a variant.json of its own; Error(input|io) for a member that cannot be
// read or a variant wheel that cannot be written. Each error is one line
// naming `relabel.source`, the reason and the fix.
StagedWheel stage_relabelled(const WheelArchive& wheel, const VariantRelabel& relabel, const std::filesystem::path& out_dir,
                             const WriteOptions& options);

}  // namespace kwheel
