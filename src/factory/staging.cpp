#include "kwheel/factory/staging.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "kwheel/base/error.hpp"
#include "kwheel/base/work_pool.hpp"
#include "kwheel/evidence/macos_tag.hpp"
#include "kwheel/factory/reuse.hpp"
#include "kwheel/factory/signed_metadata.hpp"
#include "kwheel/kernel/variant.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/wheel/deflate_pool.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

void check_options(const BuildOptions& o) {
  if (!o.name.empty() && !is_valid_name(o.name))
    throw Error(ErrorKind::usage, "--name '" + o.name + "' is not a valid distribution name (letters, digits, '-', '_', '.')");
  if (!o.tags.macos.empty() && !parse_macos_version(o.tags.macos))
    throw Error(ErrorKind::usage, "--macos '" + o.tags.macos + "' is not a macOS version; pass e.g. --macos 11.0");
  if (o.version.empty()) {
    if (!o.build_number)
      throw Error(ErrorKind::usage, "the wheels' version is unknown: pass --version X.Y.Z (or --wheel-version) for a directory build");
    return;
  }
  auto v = Version::try_parse(o.version);
  if (!v)
    throw Error(ErrorKind::usage, "--version '" + o.version + "' is not a PEP 440 version; pass e.g. --version 0.1.0");
  if (!v->local().empty())
    throw Error(ErrorKind::usage, "--version '" + o.version + "' has a local label; kwheel adds the torch/backend label itself, pass " + v->public_str());
}

// kernel-builder now names Linux variants without the C++ ABI tag, and one
// repo may carry both spellings of a build: they give one wheel name, and
// kernels prefers the tagless one, so that is the one built.
std::optional<std::string> tagless_twin(const std::string& variant) {
  auto parsed = try_parse_variant(variant);
  if (!parsed.variant || parsed.variant->is_noarch() || parsed.variant->framework != Framework::torch ||
      parsed.variant->cxx11_abi != std::optional<bool>(true))
    return std::nullopt;
  Variant tagless = *parsed.variant;
  tagless.cxx11_abi.reset();
  return tagless.str();
}

bool selected(const std::string& variant, const std::vector<std::string>& globs) {
  if (globs.empty()) return true;
  for (const auto& g : globs)
    if (::fnmatch(g.c_str(), variant.c_str(), 0) == 0) return true;
  return false;
}

// Which variants this run builds (their indices); the others are marked
// filtered in the report, with the reason when it is not --variant.
std::vector<size_t> select_variants(const std::vector<VariantInput>& variants, const BuildOptions& o, BuildReport& report) {
  report.variants.resize(variants.size());
  std::vector<size_t> todo;
  std::set<std::string> names;
  for (const auto& v : variants) names.insert(v.name);
  for (size_t i = 0; i < variants.size(); ++i) {
    auto& r = report.variants[i];
    r.variant = variants[i].name;
    if (auto twin = tagless_twin(variants[i].name); twin && names.count(*twin)) {
      r.status = VariantResult::Status::filtered;
      r.error = "superseded by " + *twin + " (the same build without the ABI tag; kernels 0.17 loads that one)";
    } else if (selected(variants[i].name, o.variant_globs)) {
      todo.push_back(i);
    } else {
      r.status = VariantResult::Status::filtered;
    }
  }
  if (todo.empty()) {
    std::string available;
    for (const auto& v : variants) available += (available.empty() ? "" : ", ") + v.name;
    throw Error(ErrorKind::not_found, variants.empty() ? "the repo has no variants under build/"
                                                       : "no variant matches --variant; available: " + available);
  }
  return todo;
}

void prepare_out_dir(const fs::path& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw Error(ErrorKind::io, "cannot create output directory '" + out_dir.string() + "': " + ec.message());
  // No sweep here: a directory is swept by the first scratch this run makes
  // in it (scratch_owner.hpp), so a run that writes nothing touches nothing.
}

// One variant's wheel, planned and staged (or an up-to-date one in out_dir
// kept); a failure is the variant's, recorded in its report.
void stage_variant(const VariantInput& input, const BuildOptions& o, StagedBuild& build, size_t i) {
  VariantResult& r = build.report.variants[i];
  try {
    if (o.await_inputs) o.await_inputs(input);
    PlannedWheel plan = plan_wheel(input, o);
    r.tags = plan.tags;
    r.version = plan.version;
    r.package = plan.package;
    r.dist_name = plan.dist_name;
    r.layout = layout_name(plan.layout);
    r.metadata = plan.metadata;
    r.signature = plan.signature;
    r.ignored = plan.ignored;
    r.platform = plan.platform;
    r.gpu = plan.gpu;
    r.macos = plan.macos;
    r.cpython_module = plan.cpython_module;
    r.wheel = o.out_dir / plan.filename;
    build.fingerprints[i] = input_fingerprint(plan, o);
    if (auto state = kept_wheel(r.wheel, build.fingerprints[i], o, build.digests_taken[i])) {
      r.sha256 = state->sha256;
      r.size = state->size;
      r.reused = true;
    } else {
      StagedWheel& staged = build.staged[i];
      staged = stage_wheel(plan.contents, r.wheel, o.write);
      if (plan.metadata) verify_digest(input, plan, staged.info);
      r.sha256 = staged.info.sha256;
      r.size = staged.info.size;
    }
    r.status = VariantResult::Status::built;
  } catch (const Error& e) {
    r.status = VariantResult::Status::failed;
    r.error = e.what();
    r.exit_code = e.exit_code();
  }
}

// Runs task(0) .. task(count - 1) on `jobs` threads (0: one per CPU), this
// one included; returns when all are done.
void run_parallel(size_t count, unsigned jobs, const std::function<void(size_t)>& task) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k; (k = next.fetch_add(1)) < count;) task(k);
  };
  jobs = resolve_workers(jobs);
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(count));
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < jobs; ++t) pool.emplace_back(worker);
  worker();
}

// Two variants that map to one filename would overwrite each other.
void check_distinct_names(BuildReport& report, const std::vector<size_t>& todo) {
  std::map<fs::path, std::string> owners;
  for (auto i : todo) {
    auto& r = report.variants[i];
    if (r.status != VariantResult::Status::built) continue;
    auto [it, fresh] = owners.emplace(r.wheel, r.variant);
    if (!fresh) {
      r.status = VariantResult::Status::failed;
      r.error = "variant '" + r.variant + "' gives the same wheel name as '" + it->second + "' (" + r.wheel.filename().string() + ")";
      r.exit_code = static_cast<int>(ErrorKind::input);
    }
  }
}

// One repo is one kernel: its variants' wheels must share a name and a
// version, or an index would list them as different projects or releases.
void check_consistent(BuildReport& report, const std::vector<size_t>& todo) {
  const VariantResult* first = nullptr;
  for (auto i : todo) {
    auto& r = report.variants[i];
    if (r.status != VariantResult::Status::built) continue;
    if (!first) { first = &r; continue; }
    const std::string mine = Version::parse(r.version).public_str(), theirs = Version::parse(first->version).public_str();
    std::string what;
    if (normalize_name(r.dist_name) != normalize_name(first->dist_name)) what = "kernel name ('" + r.dist_name + "' vs '" + first->dist_name + "'); pass --name";
    else if (mine != theirs) what = "version (" + mine + " vs " + theirs + "); fix metadata.json or pass --wheel-version";
    if (what.empty()) continue;
    r.status = VariantResult::Status::failed;
    r.error = "variant '" + r.variant + "' disagrees with '" + first->variant + "' on the " + what;
    r.exit_code = static_cast<int>(ErrorKind::input);
  }
}

}  // namespace

StagedBuild stage_build(const std::vector<VariantInput>& variants, const BuildOptions& options) {
  check_options(options);
  // Writers share one deflate pool: the caller's (a pipeline's, for all its
  // kernels), else one of `jobs` workers for this build.
  BuildOptions o = options;
  const RunPool pool(o.write.pool, o.write.compression_level, o.jobs);
  o.write.pool = pool.get();
  StagedBuild build;
  build.todo = select_variants(variants, o, build.report);
  prepare_out_dir(o.out_dir);
  build.staged.resize(variants.size());
  build.fingerprints.resize(variants.size());
  build.digests_taken.resize(variants.size());
  // One writer more than the pool has workers: writers of equal-sized
  // wheels finish together, and while they close, hash and rename their
  // archives the spare one keeps the workers fed. Stored members (no pool)
  // are the writers' own work: `jobs` of them.
  const unsigned writers = resolve_workers(o.jobs) + (pool.get() ? 1 : 0);
  run_parallel(build.todo.size(), writers, [&](size_t k) {
    const size_t i = build.todo[k];
    stage_variant(variants[i], o, build, i);
  });
  check_consistent(build.report, build.todo);
  check_distinct_names(build.report, build.todo);
  return build;
}

void commit_build(StagedBuild& build) {
  for (auto i : build.todo) {
    auto& r = build.report.variants[i];
    if (r.reused) {
      // Only if the wheel is still the one hashed: another run into this
      // out_dir may have replaced it since.
      const auto& taken = build.digests_taken[i];
      if (taken && stat_identity(r.wheel) == taken->wheel_identity) record_state(r.wheel, *taken);
      continue;
    }
    build.staged[i].commit();
    record_state(r.wheel, {build.fingerprints[i], stat_identity(r.wheel), r.sha256, r.size});
  }
  build.report.committed = true;
}

}  // namespace kwheel
