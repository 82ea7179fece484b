#pragma once
// The variant index of a site (PEP 825 wheel variants, as uv 0.13.9 reads
// them behind `--preview-features wheel-variants`): one simple index per
// torch version, where every build of a kernel is a variant wheel of one
// version, and uv picks the build that fits the machine's driver and GPU.
//
//   SITE/variants/torch<M.m>/simple/<project>/index.html, index.json
//   SITE/variants/files/<variant wheel>, <wheel>.metadata
//   SITE/variants/files/<name>-<version>-variants.json
//
// Pip skips variant filenames and uv without the preview refuses them, so
// this index stays apart from the sub-indexes pip uses (docs/publishing.md).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/packaging/wheel_variant.hpp"

namespace kwheel::site {
struct PageSink;
}

namespace kwheel {

inline constexpr std::string_view kVariantsDir = "variants";

// A build offered as a variant, and what its label stands for.
struct VariantWheel {
  std::string source;    // the site's wheel it was re-labelled from
  std::string filename;  // the variant wheel
  std::string index;     // "variants/torch2.11"
  std::string version;   // "1+torch2.11"
  std::string label;     // "cu130_sm90", "null"
  VariantProperties properties;
  std::vector<std::string> evidence;   // where cuda_version_lower_bound came from
  std::vector<std::string> unclaimed;  // GPUs the code runs on that no value names
  std::string sha256;
  // What its page lists besides: kept in the site's manifest with the rest,
  // so that a later run lists it without opening the build or the variant.
  uint64_t size = 0;
  std::string requires_python, metadata_sha256;
};

// What an earlier run made of one build (kept in the site's manifest): its
// variant wheel, or why it has none.
struct RecordedVariant {
  std::optional<VariantWheel> wheel;
  std::string left_out;  // the reason, when `wheel` is empty
};

// One wheel of the site, as the variant index reads it.
struct VariantSource {
  std::string filename;
  std::filesystem::path path;  // the copy read: the site being built
  std::string project;         // normalized
  // What errors name: the wheel as its user gave it ("dist/x.whl"), or the
  // site's file for one kept from an earlier run.
  std::filesystem::path given;
  // What the run that wrote the site made of it; used (nothing opened)
  // only where `reuse` is given and the variant wheel is still there.
  const RecordedVariant* recorded = nullptr;
};

// A wheel of the site the variant index does not offer, and why.
struct VariantLeftOut {
  std::string filename;
  std::string reason;
};

struct VariantIndexReport {
  std::vector<std::string> indexes;  // "variants/torch2.11"
  std::vector<VariantWheel> wheels;
  std::vector<VariantLeftOut> left_out;
};

// Writes the variant indexes of `wheels` through `sink` (its root: what
// this run writes; a page its previous site holds byte for byte is kept
// there: site_directory.hpp's PageSink); `base_url` as for the site's pages
// ("" for relative links). A variant wheel `reuse` (the site being updated,
// when the same kwheel wrote it) holds under its name is kept there, not
// derived again: only new builds' variant wheels are written. A wheel that
// cannot be read or re-labelled is an Error naming its `given` path, the
// reason and the fix (the site is then left as it was: build_site).
VariantIndexReport write_variant_indexes(const site::PageSink& sink, const std::vector<VariantSource>& wheels, const std::string& base_url,
                                         const std::filesystem::path& reuse = {});

// "variants/torch2.11" for the torch version "2.11": the index is its
// simple/ below SITE.
std::string variant_index_name(const std::string& torch);

}  // namespace kwheel
