#pragma once
// Which files of a build variant make the wheel's one import package. Three
// layouts exist on the Hub (docs/wheel-naming.md):
//   nested  build/<v>/<pkg>/{__init__.py,...}              (until Nov 2025)
//   compat  build/<v>/{__init__.py,...} + <pkg>/__init__.py (Nov 2025 - Jul 2026)
//   flat    build/<v>/{__init__.py,_ops.py,*.so,metadata.json}
// The compat directory is kernel-builder's shim for loaders that expected
// the nested layout; it only re-exports the flat package, so it is left out.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/kernel/kernel_metadata.hpp"
#include "kwheel/kernel/repo_layout.hpp"

namespace kwheel {

enum class VariantLayoutKind { nested, compat, flat };
const char* layout_name(VariantLayoutKind kind);

struct PackagedFile {
  std::string archive_path;   // "img2gray/_ops.py"
  const RepoFile* file;       // points into the VariantInput
};

struct VariantLayout {
  VariantLayoutKind kind = VariantLayoutKind::nested;
  std::string package;                  // the import package, e.g. "img2gray"
  std::vector<PackagedFile> members;    // metadata.json included, as <package>/metadata.json
  std::vector<std::string> left_out;    // variant-relative paths not packaged
  const RepoFile* metadata = nullptr;   // the variant's metadata.json, if any
};

// __pycache__/ and *.pyc: the installer's to write, never packaged, and
// outside kernels' digest.
bool is_bytecode(std::string_view path);

// The variant's metadata.json at its top, if it has one.
const RepoFile* find_metadata(const VariantInput& variant);

// Decides the layout and the package. `metadata` is the parsed
// metadata.json (nullptr when there is none). `name` is --name: it may name
// any variant's package. `fallback` (the repo's name) may only pick among a
// nested variant's directories: a flat variant is named by its metadata,
// never by where it was found. Throws Error(input) naming the variant when
// the files and metadata disagree or a flat variant cannot be named.
VariantLayout lay_out_variant(const VariantInput& variant, const KernelMetadata* metadata, const std::string& name,
                              const std::string& fallback);

}  // namespace kwheel
