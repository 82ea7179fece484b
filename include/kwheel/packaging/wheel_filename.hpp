#pragma once
// Wheel filenames (the binary distribution format spec):
// {name}-{version}(-{build})?-{python tags}-{abi tags}-{platform tags}.whl,
// each tag part a '.'-joined set. PEP 825 appends an optional variant
// label: ...-{platform tags}(-{variant label})?.whl.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

struct WheelFilename {
  std::string name;     // as written (escaped): img2gray
  std::string version;  // as written: 0.1.0+torch2.7.cu126
  std::optional<std::string> build;
  std::vector<std::string> python, abi, platform;
  // The PEP 825 variant label (^[0-9a-z_.]+$; "null" is the null variant);
  // only ever set when parsed with VariantLabels::accept.
  std::optional<std::string> variant;
  // Every python-abi-platform combination.
  std::vector<std::string> tags() const;
};

// Whether a caller takes PEP 825 variant wheels. A variant wheel installs
// only where its variant properties are supported, which a caller that
// does not read variants.json cannot judge: for it, a variant wheel must
// stay an invalid name (skipped or refused), never a plain wheel.
enum class VariantLabels { refuse, accept };

// Throws Error(input) naming the file and what is malformed. Strict, as a
// name read from an index page must be before any part of it is written
// into requirements.txt: only letters, digits and . _ - + ! (a control
// byte, whitespace, '/', '#', ';', '%' or a quote is refused wherever it
// is), a name by PEP 508, a version by PEP 440, a build tag of a digit then
// letters, digits and '_', tags of letters, digits and '_' joined by '.'.
// refuse: the binary distribution format as before PEP 825 (5 or 6 parts,
// a 6th part being a build tag that starts with a digit); the message of a
// name that reads as a variant wheel says so.
// accept: PEP 825's grammar, as uv 0.13.9 reads it
// (crates/uv-distribution-filename/src/wheel.rs): 7 parts are build tag +
// label; of 6 parts, a third part starting with a digit is a build tag,
// otherwise the last part is a label; the Python tag must not start with a
// digit; the label must match ^[0-9a-z_.]+$.
WheelFilename parse_wheel_filename(const std::string& filename, VariantLabels labels = VariantLabels::refuse);

// PEP 825's index-level metadata file of a release:
// "{name}-{version}-variants.json", the name normalised and escaped as in
// wheel names (Foo.Bar -> foo_bar) and the version normalised (uv's
// VariantsJsonFilename Display: as_dist_info_name and Version's Display).
// Throws Error(input) for a name or version that is not valid.
std::string variants_json_filename(std::string_view name, std::string_view version);

}  // namespace kwheel
