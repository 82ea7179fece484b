#include "kwheel/factory/pipeline.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "kwheel/base/error.hpp"
#include "kwheel/base/interrupt.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/factory/warm_up.hpp"
#include "kwheel/kernel/kernel_lock.hpp"
#include "kwheel/wheel/deflate_pool.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

// What to build: the one source, or every kernel of a lock (--lock, or
// --project's kernels.lock), or a project's [tool.kernels.dependencies].
struct Target {
  SourceRequest source;
  std::optional<uint64_t> locked_version;
  std::string label;   // names the lock entry in errors; empty for a plain source
};

std::vector<Target> lock_targets(const fs::path& lock, const SourceRequest& base) {
  std::vector<Target> out;
  for (const auto& k : read_kernels_lock(lock)) {
    Target t{base, k.dependency.version, "lock entry '" + k.dependency.repo_id + "' (commit " + k.commit.substr(0, 12) + ") of " + lock.string()};
    t.source.source = k.dependency.repo_id;
    t.source.revision = k.commit;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Target> project_targets(const fs::path& dir, const SourceRequest& base) {
  std::error_code ec;
  if (fs::is_regular_file(dir / "kernels.lock", ec)) return lock_targets(dir / "kernels.lock", base);
  std::vector<Target> out;
  for (const auto& d : read_project_dependencies(dir / "pyproject.toml")) {
    Target t{base, d.version, "dependency '" + d.repo_id + "' of " + (dir / "pyproject.toml").string()};
    t.source.source = d.repo_id;
    t.source.version_spec = std::to_string(*d.version);  // kernels 0.17 declares versions only
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Target> targets(const PipelineRequest& r) {
  const std::string& prefix = r.options.name_prefix;
  if (!prefix.empty() && !is_valid_name_prefix(prefix))
    throw Error(ErrorKind::usage, "--name-prefix '" + prefix + "' is not a name prefix; use letters, digits, '-', '_' and '.', starting with a letter or digit (e.g. acme-)");
  const bool many = r.many();
  if (many == !r.source.source.empty())
    throw Error(ErrorKind::usage, "give one of: a source (ORG/NAME or a directory), --lock kernels.lock, or --project DIR");
  if (!many) return {Target{r.source, std::nullopt, ""}};
  if (!r.version.version.empty() || r.source.revision || !r.version.wheel_version.empty() || !r.options.name.empty())
    throw Error(ErrorKind::usage, "--lock and --project build each kernel at its locked or declared version; drop --version, --revision, --wheel-version and --name");
  std::error_code ec;
  if (!r.lock.empty() && fs::is_directory(r.lock, ec))
    throw Error(ErrorKind::usage, "--lock '" + r.lock + "' is a directory; --lock takes a kernels.lock file (to build the project in that directory: --project " + r.lock + ")");
  if (!r.lock.empty()) return lock_targets(r.lock, r.source);
  return project_targets(r.project, r.source);
}

// A branch vN whose builds say they are another version: the wheels follow
// the commit's own claim (docs/wheel-naming.md), and the user should know.
void warn_version_mismatch(const KernelBuild& kb, const Feedback& feedback) {
  if (!kb.source.is_hub || !kb.source.resolution->kernel_version) return;
  for (const auto& v : kb.staged.report.variants)
    if (v.metadata && v.metadata->version && *v.metadata->version != *kb.source.resolution->kernel_version) {
      feedback.warn("branch " + kb.source.resolution->ref + " of " + kb.source.location + " holds builds whose metadata.json says version " +
                    std::to_string(*v.metadata->version) + "; the wheels carry that version");
      return;
    }
}

// Without a prefix, a kernel-depends requirement names a project that any
// index may serve: one mixed with PyPI can resolve it to a stranger's.
void warn_unprefixed_depends(const KernelBuild& kb, const Feedback& feedback) {
  if (!kb.options.name_prefix.empty()) return;
  for (const auto& v : kb.staged.report.variants)
    if (v.metadata && !v.metadata->kernel_depends.empty()) {
      const auto requirements = kernel_requirements(*v.metadata, "");
      feedback.warn(kb.source.location + " depends on other kernels (Requires-Dist: " + join(requirements, ", ") +
                    "); an index that also serves PyPI may resolve those names to other projects: build every kernel with --name-prefix (docs/wheel-naming.md)");
      return;
    }
}

// A wheel tagged for one CPython because a module is named for it installs
// nowhere else; the user should know why it is not abi3.
void warn_cpython_specific(const KernelBuild& kb, const Feedback& feedback) {
  for (const auto& v : kb.staged.report.variants)
    if (v.status == VariantResult::Status::built && !v.cpython_module.empty())
      feedback.warn("variant '" + v.variant + "' is tagged " + v.tags.python + "-" + v.tags.abi + ", not abi3: '" + v.cpython_module +
                    "' is named for that CPython alone; rename it to <module>.abi3.so if it uses only the stable ABI");
}

// Where manylinux/torch-provided.json does not cover a variant's torch or
// CUDA major, rules decided its libraries: the user should know.
void warn_torch_data_gaps(const KernelBuild& kb, const Feedback& feedback) {
  for (const auto& v : kb.staged.report.variants)
    if (v.platform)
      for (const auto& w : v.platform->warnings) feedback.warn("variant '" + v.variant + "': " + w);
}

// kernels verify-signature would refuse these, and a build says so: a line
// for each variant another signer signed (naming the signer), and one line
// naming a kernel's unsigned variants (most kernels on the Hub today).
void warn_unsigned(const KernelBuild& kb, const Feedback& feedback) {
  std::vector<std::string> unsigned_variants;
  for (const auto& v : kb.staged.report.variants) {
    if (v.status != VariantResult::Status::built || v.signature.signed_by_trusted()) continue;
    if (!v.signature.result) {
      unsigned_variants.push_back(v.variant);
      continue;
    }
    feedback.warn("variant '" + v.variant + "' of " + kb.source.location + " is signed by " + sigstore::describe(v.signature.result->signer) +
                  ", who is not a trusted signer: counted as unsigned (trust it with --trusted-signer, or refuse it with --require-signature)");
  }
  if (unsigned_variants.empty()) return;
  feedback.warn(kb.source.location + ": " + std::to_string(unsigned_variants.size()) + " variant(s) unsigned (no " + kSignatureFile +
                "): " + join(unsigned_variants, ", ") + "; nothing vouches for who built them (refuse such variants with --require-signature)");
}

std::unique_ptr<KernelBuild> stage_kernel(const Target& t, const PipelineRequest& r, const Feedback& feedback) {
  SourceRequest sa = t.source;
  if (r.options.jobs) sa.jobs = r.options.jobs;
  std::error_code ec;
  if (t.label.empty() && !fs::is_directory(sa.source, ec) && !r.version.version.empty()) sa.version_spec = r.version.version;
  auto kb = std::make_unique<KernelBuild>();
  kb->source = resolve_source(sa, feedback);
  kb->options = r.options;
  kb->options.fallback_name = kb->source.name;
  apply_version_rule(kb->options, r.version, kb->source, t.locked_version);
  if (kb->source.is_hub) {
    const std::string& commit = kb->source.resolution->commit;
    kb->options.source = {kb->source.location, commit, kb->source.client->tree_url(commit)};
  }
  kb->files = std::make_unique<StreamedSource>(kb->source, sa, feedback);
  kb->options.await_inputs = kb->files->awaiter();
  kb->staged = stage_build(group_variants(kb->files->files()), kb->options);
  return kb;
}

// The target's wheels, staged; an error names the lock entry it came from.
std::unique_ptr<KernelBuild> stage_target(const Target& t, const PipelineRequest& r, const Feedback& feedback) {
  try {
    auto kb = stage_kernel(t, r, feedback);
    warn_version_mismatch(*kb, feedback);
    warn_unprefixed_depends(*kb, feedback);
    warn_unsigned(*kb, feedback);
    warn_cpython_specific(*kb, feedback);
    warn_torch_data_gaps(*kb, feedback);
    return kb;
  } catch (const Error& e) {
    if (t.label.empty()) throw;
    throw Error(e.kind(), t.label + ": " + e.what(), e.reason());
  }
}

// Stages every target's wheels into `builds`, all kernels at once: their
// downloads and writers run side by side and feed one deflate pool, so a
// lock of N kernels x M variants is one stream of work, not N builds in a
// row. The first failing target, in lock order, is the run's error.
void stage_all(const PipelineRequest& r, const Feedback& feedback, std::vector<std::unique_ptr<KernelBuild>>& builds) {
  const std::vector<Target> all = targets(r);
  builds.resize(all.size());
  std::vector<std::exception_ptr> errors(all.size());
  {
    std::vector<std::jthread> threads;
    for (size_t i = 1; i < all.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          builds[i] = stage_target(all[i], r, feedback);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    try {
      if (!all.empty()) builds[0] = stage_target(all[0], r, feedback);
    } catch (...) {
      errors[0] = std::current_exception();
    }
  }  // joins
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Two kernels of one lock whose wheels share a file name would overwrite
// each other in --out.
void check_distinct_wheels(std::vector<std::unique_ptr<KernelBuild>>& builds) {
  std::map<fs::path, std::string> owners;
  for (auto& kb : builds)
    for (auto& v : kb->staged.report.variants) {
      if (v.status != VariantResult::Status::built) continue;
      auto [it, fresh] = owners.emplace(v.wheel, kb->source.location);
      if (fresh || it->second == kb->source.location) continue;
      v.status = VariantResult::Status::failed;
      v.error = "kernel '" + kb->source.location + "' gives the same wheel name as kernel '" + it->second + "' (" + v.wheel.filename().string() + "); build them into different --out";
      v.exit_code = static_cast<int>(ErrorKind::input);
    }
}

bool all_ok(const std::vector<std::unique_ptr<KernelBuild>>& builds) {
  for (const auto& kb : builds)
    if (!kb->staged.report.ok()) return false;
  return true;
}

// The directories the run will create for out_dir (it and its missing
// parents), outermost first; each is removed again, if empty, when the run
// fails or is interrupted.
struct CreatedDirs {
  std::vector<fs::path> dirs;
  std::vector<std::unique_ptr<RemoveEmptyDirOnInterrupt>> on_interrupt;
  explicit CreatedDirs(const fs::path& out_dir) {
    std::error_code ec;
    fs::path d = fs::absolute(out_dir, ec).lexically_normal();
    if (!d.has_filename()) d = d.parent_path();  // "dist/" names dist
    for (; !ec && d.has_relative_path() && !fs::exists(d, ec); d = d.parent_path()) dirs.insert(dirs.begin(), d);
    for (const auto& dir : dirs) on_interrupt.push_back(std::make_unique<RemoveEmptyDirOnInterrupt>(dir));
  }
  // Puts the output directory back as it was before the run: a directory
  // the run created goes again, but only while empty (fs::remove does not
  // recurse), so nothing another process put there is lost.
  void restore() const {
    std::error_code ec;
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) fs::remove(*it, ec);
  }
};

}  // namespace

std::size_t PipelineResult::wheels_built() const {
  std::size_t built = 0;
  for (const auto& kb : kernels)
    for (const auto& v : kb->staged.report.variants) built += v.status == VariantResult::Status::built;
  return built;
}

int PipelineResult::exit_code() const {
  for (const auto& kb : kernels)
    for (const auto& v : kb->staged.report.variants)
      if (v.status == VariantResult::Status::failed) return v.exit_code ? v.exit_code : static_cast<int>(ErrorKind::input);
  return 0;
}

PipelineResult run_pipeline(const PipelineRequest& request, const Feedback& feedback) {
  const WarmUp warm_up;  // first: it runs while the sources are resolved
  // One deflate pool for the whole run: every wheel of every kernel.
  PipelineRequest r = request;
  const RunPool pool(r.options.write.pool, r.options.write.compression_level, r.options.jobs);
  r.options.write.pool = pool.get();
  const fs::path& out_dir = r.options.out_dir;
  const CreatedDirs created(out_dir);
  PipelineResult result;
  auto& builds = result.kernels;
  bool ok = true;
  try {
    stage_all(r, feedback, builds);
    for (auto& kb : builds) kb->options.write.pool = nullptr;  // the pool ends with this call
    check_distinct_wheels(builds);
    ok = all_ok(builds);
    // A download error fails the run even where no wheel awaited that file.
    if (ok)
      for (auto& kb : builds) kb->files->finish();
  } catch (...) {
    builds.clear();  // removes the staged temps (and waits for the downloads)
    created.restore();
    throw;
  }
  if (ok) {
    for (auto& kb : builds) commit_build(kb->staged);
    result.committed = true;
    return result;
  }
  // Variants that awaited a failed download failed with it; the download
  // error is the run's error, as when it happens before packing starts.
  for (auto& kb : builds) kb->staged.staged.clear();  // removes the staged temps
  created.restore();
  for (auto& kb : builds) kb->files->finish();
  return result;
}

}  // namespace kwheel
