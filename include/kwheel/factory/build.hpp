#pragma once
// The build pipeline: variants of a kernel repo in, one wheel per variant
// out. Network and disk front-ends both end here, so a repo gives the same
// bytes whichever way its files arrived.
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kwheel/evidence/gpu_code.hpp"
#include "kwheel/kernel/kernel_layout.hpp"
#include "kwheel/kernel/kernel_metadata.hpp"
#include "kwheel/kernel/kernel_signature.hpp"
#include "kwheel/evidence/macos_tag.hpp"
#include "kwheel/evidence/manylinux.hpp"
#include "kwheel/kernel/repo_layout.hpp"
#include "kwheel/wheel/tags.hpp"
#include "kwheel/wheel/wheel_writer.hpp"

namespace kwheel {

// Where the variants came from, for the wheel's metadata: the Hub commit
// is recorded so a wheel can be traced (and pinned) to it.
struct SourceRecord {
  std::string repo_id;              // "kernels-community/img2gray"; empty for a directory
  std::string commit;               // full sha
  std::string url;                  // browsable tree URL at that commit
};

struct BuildOptions {
  // Distribution name (user spelling). Empty: the kernel's own name, from
  // metadata.json, else the package directory (docs/wheel-naming.md).
  std::string name;
  // Put before the name of every wheel and of every kernel-depends
  // requirement, so that they name only the wheels kwheel built
  // (docs/wheel-naming.md, "Names between kernels"). Empty: none.
  std::string name_prefix;
  std::string fallback_name;        // names a variant nothing else names: the repo's name
  // The wheels' public PEP 440 version, no local label. Empty: integer-
  // versioned kernels get <kernel version>.<build_number>, the kernel
  // version from metadata.json, else from the vN branch (branch_version).
  std::string version;
  std::optional<uint64_t> build_number;     // commits in the history of the commit built
  std::optional<uint64_t> branch_version;   // N of the vN branch the commit was reached by
  SourceRecord source;
  SignatureOptions signatures;      // whose signatures count, and whether one is required
  TagOptions tags;
  WriteOptions write;
  std::filesystem::path out_dir = "dist";
  std::vector<std::string> variant_globs;  // fnmatch patterns; empty = all
  std::set<std::string> allowed_external;  // sonames a kernel may need beyond the policy
  unsigned jobs = 0;                // 0 = hardware concurrency
  // Keep a wheel already in out_dir whose inputs (member files, metadata,
  // options, kwheel version) are unchanged since kwheel wrote it: builds are
  // reproducible, so rewriting it would give the same bytes.
  bool reuse = true;
  // Called by a writer before it reads a variant's files; blocks until they
  // are complete, or throws (the variant fails with that error). Hub builds
  // use it to pack each variant while later ones still download.
  std::function<void(const VariantInput&)> await_inputs;
  // Called once every wheel is staged, before any is committed; throwing
  // leaves out_dir as it was (e.g. a download the build did not need failed).
  std::function<void()> before_commit;
};

struct VariantResult {
  std::string variant;
  enum class Status { built, failed, filtered } status = Status::failed;
  std::string error;                // one line, when failed (or why a variant was skipped)
  int exit_code = 0;                // the failure's ErrorKind, for the CLI
  std::string package;              // top-level package directory used
  std::string dist_name;            // the distribution name the wheel carries
  std::string layout;               // "nested", "flat+compat", "flat"
  std::optional<KernelMetadata> metadata;
  std::filesystem::path wheel;
  std::string sha256;
  uint64_t size = 0;
  WheelTags tags;
  std::string version;              // full version, local label included
  std::vector<std::string> ignored; // variant files not packaged (compat shim, stray files)
  std::optional<ManylinuxReport> platform;  // linux variants: the manylinux evidence and decision
  GpuEvidence gpu;                  // the GPU code its objects carry, audited against backend.archs
  std::optional<MacosReport> macos; // darwin variants: why the macOS tag is what it is
  SignatureVerdict signature;       // metadata.json.sigstore, verified before metadata.json was read
  bool reused = false;              // an up-to-date wheel in out_dir was kept
  std::string cpython_module;       // a member named for one CPython: the wheel is tagged for it, not abi3
};

struct BuildReport {
  std::vector<VariantResult> variants;
  bool ok() const;                  // every selected variant became a wheel
  bool committed = false;           // wheels were moved into out_dir
};

// Plans and writes every selected variant in parallel. Wheels are staged
// beside out_dir and committed only if all selected variants succeed; on
// any failure out_dir is left untouched and the report says why.
// Throws Error(usage) for bad options (version, name, globs).
BuildReport build_wheels(const std::vector<VariantInput>& variants, const BuildOptions& options);

// The two halves of build_wheels, stage_build and commit_build: staging.hpp.

// The wheel's contents for one variant (exposed for tests and `inspect`).
struct PlannedWheel {
  std::string filename;
  WheelContents contents;
  WheelTags tags;
  std::string version;
  std::string dist_name;
  std::string package;
  VariantLayoutKind layout = VariantLayoutKind::nested;
  std::optional<KernelMetadata> metadata;
  std::string metadata_record_hash;  // RECORD's hash of the metadata.json bytes verified and parsed
  SignatureVerdict signature;
  std::vector<std::string> ignored;
  std::map<std::string, std::string> member_sources;  // archive path -> variant-relative path
  std::optional<ManylinuxReport> platform;  // linux variants: why the platform tag is what it is
  GpuEvidence gpu;
  std::optional<MacosReport> macos;
  std::string cpython_module;  // a member named for one CPython, which set the Python tags ("" for abi3)
};
PlannedWheel plan_wheel(const VariantInput& variant, const BuildOptions& options);

nlohmann::json to_json(const VariantResult& result);
nlohmann::json to_json(const BuildReport& report);
const char* status_name(VariantResult::Status status);

}  // namespace kwheel
