#pragma once
// A variant's metadata.json, as kernel-builder writes it and kernels-data
// (kernels 0.17) reads it: name, id, version, license, upstream/source,
// python-depends, kernel-depends, backend {type, archs}, digest, provenance.
// Every field is type-checked; a field kernels requires may be absent,
// since metadata written before 0.17 lacked some, and kwheel says where it
// needs one.
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

// metadata.json is a few KiB; anything near this is not one.
inline constexpr uint64_t kMaxKernelMetadataBytes = 1 << 20;
// A kernel version N is a branch vN; the Hub client reads at most 8 digits
// there, and a requirement's "<N+1>" must not wrap.
inline constexpr uint64_t kMaxKernelVersion = 99999999;

struct KernelDependency {
  std::string repo_id;                  // "kernels-community/activation"
  std::optional<uint64_t> version;      // exactly one of version / revision
  std::optional<std::string> revision;
};

struct KernelDigest {
  std::string algorithm;                        // "sha256" or "sha512"
  std::map<std::string, std::string> files;     // variant-relative path -> standard base64 (padded)
};

struct KernelMetadata {
  std::optional<std::string> name;              // "img2gray", ^[a-z][-a-z0-9]*[a-z0-9]$
  std::optional<std::string> id;                // the ops namespace / module id
  std::optional<uint64_t> version;              // the kernel version N (branch vN)
  std::optional<std::string> license;
  std::optional<std::string> upstream;          // git URLs
  std::optional<std::string> source;
  std::vector<std::string> python_depends;      // names from kernels' python_depends.json
  std::map<std::string, std::vector<std::string>> python_depends_backends;  // older files: per backend
  std::vector<KernelDependency> kernel_depends;
  std::optional<std::string> backend;           // "cuda", "cpu", ...
  std::vector<std::string> archs;               // "8.0", "9.0+PTX", "gfx90a"
  std::optional<KernelDigest> digest;

  // The import name kernels gives the kernel: name with '-' as '_'.
  std::optional<std::string> python_name() const;
};

// Parses metadata.json text. Throws Error(input) naming `where` (e.g.
// "variant 'torch29-cxx11-cpu-x86_64-linux'") and the field at fault.
KernelMetadata parse_kernel_metadata(std::string_view json, const std::string& where);
// Reads and parses a file, refusing one over kMaxKernelMetadataBytes.
KernelMetadata read_kernel_metadata(const std::filesystem::path& file, const std::string& where);
// Its bytes alone, with the same bound: a signature is checked over the
// very bytes that are then parsed.
std::string read_kernel_metadata_text(const std::filesystem::path& file, const std::string& where);

// What --json reports of it: name, id, version, license, backend, archs,
// dependencies and whether it carries a digest (not the digest itself).
nlohmann::json to_json(const KernelMetadata& metadata);

// kernels' name rule: ^[a-z][-a-z0-9]*[a-z0-9]$.
bool is_valid_kernel_name(std::string_view name);

// The pip requirements for the metadata's python-depends (and, for older
// files, python-depends-backends[backend]) under kernels' own mapping
// (kernels-data/python_depends.json): "tvm-ffi" -> "apache-tvm-ffi". A name
// outside the mapping is an Error(input) naming it and the names known.
std::vector<std::string> python_requirements(const KernelMetadata& metadata, const std::string& backend, const std::string& where);

// Requires-Dist for kernel-depends: the dependency's wheel, named as
// kwheel names the wheels of that repo (docs/wheel-naming.md, "Names
// between kernels"): `name_prefix` + the repo's name, PEP 503-normalised,
// within its kernel version: "acme-activation>=1,<2".
std::vector<std::string> kernel_requirements(const KernelMetadata& metadata, std::string_view name_prefix);

// --name-prefix: letters, digits, '-', '_', '.', starting with a letter or
// digit, at most 64 characters; prefix + any kernel name is then a valid
// distribution name.
bool is_valid_name_prefix(std::string_view prefix);

// A git URL (https, git+https, ssh, scp-like git@host:org/repo) as an
// https URL a Project-URL can carry, or nullopt when it has no such form.
std::optional<std::string> browsable_url(std::string_view git_url);

}  // namespace kwheel
