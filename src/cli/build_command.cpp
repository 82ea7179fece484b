#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>

#include "cli.hpp"
#include "kwheel/build/build.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/kernel/kernel_lock.hpp"
#include "kwheel/base/text.hpp"
#include "source.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

namespace {

struct BuildArgs {
  SourceArgs src;
  std::string version;
  std::string wheel_version;
  std::string name;
  std::string out = "dist";
  std::vector<std::string> variants;
  std::string min_python = "3.9";
  std::string manylinux = "auto";
  std::string macos;
  std::vector<std::string> allow_external;
  int compression_level = 6;
  unsigned jobs = 0;
  bool no_reuse = false;
  std::string lock;
  std::string project;
  bool many() const { return !lock.empty() || !project.empty(); }  // a lock's or project's kernels
};

std::string human_size(uint64_t n) {
  std::ostringstream s;
  if (n >= (1u << 20)) s << std::fixed << std::setprecision(1) << n / 1048576.0 << " MiB";
  else if (n >= 1024) s << std::fixed << std::setprecision(1) << n / 1024.0 << " KiB";
  else s << n << " B";
  return s.str();
}

void print_table(const BuildReport& report) {
  size_t w = 7;
  for (const auto& v : report.variants) w = std::max(w, v.variant.size());
  std::cout << std::left << std::setw(static_cast<int>(w) + 2) << "VARIANT" << std::setw(9) << "STATUS" << "WHEEL / REASON\n";
  for (const auto& v : report.variants) {
    std::cout << std::setw(static_cast<int>(w) + 2) << v.variant << std::setw(9) << status_name(v.status);
    if (v.status == VariantResult::Status::built) {
      std::cout << v.wheel.filename().string() << " (" << human_size(v.size) << (v.reused ? ", unchanged" : "") << ")";
      const std::string indent(w + 11, ' ');
      if (!v.platform.is_null() && !v.platform.value("reason", std::string()).empty())
        std::cout << "\n" << indent << "tag " << v.platform["platform_tag"].get<std::string>() << ": " << v.platform["reason"].get<std::string>();
      if (!v.ignored.empty())
        std::cout << "\n" << indent << "left out (" << v.layout << " layout): " << join(v.ignored, ", ");
    }
    else if (v.status == VariantResult::Status::failed)
      std::cout << v.error;
    else
      std::cout << (v.error.empty() ? "not selected by --variant" : v.error);
    std::cout << "\n";
  }
}

// The wheels' version (docs/wheel-naming.md): --wheel-version; a
// directory's --version; an old repo's vX.Y.Z tag; otherwise the integer
// scheme <kernel version>.<history length of the commit>.
void set_version(BuildOptions& o, const BuildArgs& a, const ResolvedSource& src, std::optional<uint64_t> locked_version) {
  if (!a.wheel_version.empty()) {
    o.version = a.wheel_version;
    return;
  }
  if (!src.is_hub) {
    if (a.version.empty())
      throw Error(ErrorKind::usage, "building from directory '" + a.src.source + "' needs --version, e.g. --version 1.0");
    o.version = a.version;
    return;
  }
  const Resolution& r = *src.resolution;
  if (r.version && !r.kernel_version) {
    o.version = *r.version;
    return;
  }
  o.branch_version = r.kernel_version ? r.kernel_version : locked_version;
  // Said before anything is downloaded: without a vN branch, the version
  // can only come from the variants' metadata.json.
  if (!o.branch_version && !src.tree.empty() &&
      std::none_of(src.tree.begin(), src.tree.end(), [](const TreeEntry& e) { return e.path.ends_with("/metadata.json"); }))
    throw Error(ErrorKind::usage, "revision '" + r.requested + "' of " + src.location + " (commit " + r.commit.substr(0, 12) +
                                      ") is not a vN branch, carries no vX.Y.Z tag, and its variants have no metadata.json to say the kernel version; "
                                      "pass --version N (branch vN), --version X.Y.Z (a tag) or --wheel-version X.Y.Z");
  o.build_number = src.client->history_length(r.commit);
}

BuildOptions base_options(const BuildArgs& a) {
  BuildOptions o;
  o.name = a.name;
  o.out_dir = a.out;
  o.variant_globs = a.variants;
  o.tags.min_python = a.min_python;
  o.tags.manylinux = a.manylinux;
  o.tags.macos = a.macos;
  o.allowed_external.insert(a.allow_external.begin(), a.allow_external.end());
  o.write.compression_level = a.compression_level;
  o.write.source_date_epoch = source_date_epoch_from_env();
  o.jobs = a.jobs;
  o.reuse = !a.no_reuse;
  return o;
}

// One kernel, resolved, downloading and staged. Heap-held: the download
// thread refers to `src` for its whole life.
struct KernelBuild {
  ResolvedSource src;
  std::unique_ptr<StreamedSource> files;
  BuildOptions options;
  StagedBuild staged;
};

// A branch vN whose builds say they are another version: the wheels follow
// the commit's own claim (docs/wheel-naming.md), and the user should know.
void warn_version_mismatch(const KernelBuild& kb, const Output& out) {
  if (!kb.src.is_hub || !kb.src.resolution->kernel_version) return;
  for (const auto& v : kb.staged.report.variants)
    if (v.metadata && v.metadata->version && *v.metadata->version != *kb.src.resolution->kernel_version) {
      out.warn("branch " + kb.src.resolution->ref + " of " + kb.src.location + " holds builds whose metadata.json says version " +
               std::to_string(*v.metadata->version) + "; the wheels carry that version");
      return;
    }
}

std::unique_ptr<KernelBuild> stage_kernel(const SourceArgs& sa, const BuildArgs& a, const Output& out, std::optional<uint64_t> locked_version) {
  auto kb = std::make_unique<KernelBuild>();
  kb->src = resolve_source(sa, out);
  kb->options = base_options(a);
  kb->options.fallback_name = kb->src.name;
  set_version(kb->options, a, kb->src, locked_version);
  if (kb->src.is_hub) {
    const std::string& commit = kb->src.resolution->commit;
    kb->options.source = {kb->src.location, commit, kb->src.client->tree_url(commit)};
  }
  kb->files = std::make_unique<StreamedSource>(kb->src, sa, out);
  kb->options.await_inputs = kb->files->awaiter();
  kb->staged = stage_build(group_variants(kb->files->files()), kb->options);
  return kb;
}

// What to build: the one source, or every kernel of a lock (--lock, or
// --project's kernels.lock), or a project's [tool.kernels.dependencies].
struct Target {
  SourceArgs args;
  std::optional<uint64_t> locked_version;
  std::string label;   // names the lock entry in errors; empty for a plain source
};

std::vector<Target> lock_targets(const fs::path& lock, const SourceArgs& base) {
  std::vector<Target> out;
  for (const auto& k : read_kernels_lock(lock)) {
    Target t{base, k.dependency.version, "lock entry '" + k.dependency.repo_id + "' (commit " + k.commit.substr(0, 12) + ") of " + lock.string()};
    t.args.source = k.dependency.repo_id;
    t.args.revision = k.commit;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Target> targets(const BuildArgs& a) {
  const bool many = a.many();
  if (many == !a.src.source.empty())
    throw Error(ErrorKind::usage, "give one of: a source (ORG/NAME or a directory), --lock kernels.lock, or --project DIR");
  if (!many) return {Target{a.src, std::nullopt, ""}};
  if (!a.version.empty() || a.src.revision || !a.wheel_version.empty() || !a.name.empty())
    throw Error(ErrorKind::usage, "--lock and --project build each kernel at its locked or declared version; drop --version, --revision, --wheel-version and --name");
  SourceArgs base = a.src;
  if (!a.lock.empty()) return lock_targets(a.lock, base);
  const fs::path dir = a.project;
  std::error_code ec;
  if (fs::is_regular_file(dir / "kernels.lock", ec)) return lock_targets(dir / "kernels.lock", base);
  std::vector<Target> out;
  for (const auto& d : read_project_dependencies(dir / "pyproject.toml")) {
    Target t{base, d.version, "dependency '" + d.repo_id + "' of " + (dir / "pyproject.toml").string()};
    t.args.source = d.repo_id;
    t.args.version_spec = std::to_string(*d.version);  // kernels 0.17 declares versions only
    out.push_back(std::move(t));
  }
  return out;
}

nlohmann::json kernel_json(const KernelBuild& kb) {
  auto j = to_json(kb.staged.report);
  j["source"] = kb.src.describe();
  if (kb.src.is_hub)
    j["transfers"] = {{"requests", kb.src.client->stats().requests}, {"retries", kb.src.client->stats().retries}, {"bytes_downloaded", kb.src.client->stats().bytes}};
  return j;
}

// Two kernels of one lock whose wheels share a file name would overwrite
// each other in --out.
void check_distinct_wheels(std::vector<std::unique_ptr<KernelBuild>>& builds) {
  std::map<fs::path, std::string> owners;
  for (auto& kb : builds)
    for (auto& v : kb->staged.report.variants) {
      if (v.status != VariantResult::Status::built) continue;
      auto [it, fresh] = owners.emplace(v.wheel, kb->src.location);
      if (fresh || it->second == kb->src.location) continue;
      v.status = VariantResult::Status::failed;
      v.error = "kernel '" + kb->src.location + "' gives the same wheel name as kernel '" + it->second + "' (" + v.wheel.filename().string() + "); build them into different --out";
      v.exit_code = static_cast<int>(ErrorKind::input);
    }
}

void report(const std::vector<std::unique_ptr<KernelBuild>>& builds, const BuildArgs& a, const Output& out, bool committed) {
  const bool many = a.many();
  if (out.json) {
    if (!many) {
      auto j = kernel_json(*builds.front());
      j["committed"] = committed;
      out.emit_json(j);
      return;
    }
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& kb : builds) {
      kernels.push_back(kernel_json(*kb));
      kernels.back()["committed"] = committed;
    }
    out.emit_json({{"ok", committed}, {"committed", committed}, {"kernels", kernels}});
    return;
  }
  size_t built = 0;
  for (const auto& kb : builds) {
    if (many) std::cout << "== " << kb->src.location << (kb->src.is_hub ? " @ " + kb->src.resolution->commit.substr(0, 12) : "") << "\n";
    print_table(kb->staged.report);
    for (const auto& v : kb->staged.report.variants) built += v.status == VariantResult::Status::built;
  }
  if (committed) out.info("wrote " + std::to_string(built) + " wheel(s) to " + a.out + "/");
  else out.warn("no wheel was written: fix the variants marked failed (or select others with --variant)");
}

int run_build(const BuildArgs& a, const Output& out) {
  std::error_code ec;
  const fs::path out_dir = a.out;
  const bool existed = fs::exists(out_dir);
  std::vector<std::unique_ptr<KernelBuild>> builds;
  bool ok = true;
  try {
    for (auto& t : targets(a)) {
      SourceArgs sa = t.args;
      if (a.jobs) sa.jobs = a.jobs;
      const bool is_dir = fs::is_directory(sa.source, ec);
      if (t.label.empty() && !is_dir && !a.version.empty()) sa.version_spec = a.version;
      try {
        builds.push_back(stage_kernel(sa, a, out, t.locked_version));
      } catch (const Error& e) {
        if (t.label.empty()) throw;
        throw Error(e.kind(), t.label + ": " + e.what(), e.reason());
      }
      warn_version_mismatch(*builds.back(), out);
    }
    check_distinct_wheels(builds);
    for (auto& kb : builds) ok = ok && kb->staged.report.ok();
    // A download error fails the run even where no wheel awaited that file.
    if (ok)
      for (auto& kb : builds) kb->files->finish();
  } catch (...) {
    builds.clear();  // removes the staged temps
    if (!existed) fs::remove(out_dir, ec);
    throw;
  }
  if (ok)
    for (auto& kb : builds) commit_build(kb->staged);
  else {
    // Variants that awaited a failed download failed with it; the download
    // error is the run's error, as when it happens before packing starts.
    for (auto& kb : builds) kb->staged.staged.clear();  // removes the staged temps
    if (!existed) fs::remove(out_dir, ec);  // only if empty: leave things as they were
    for (auto& kb : builds) kb->files->finish();
  }
  report(builds, a, out, ok);
  for (auto& kb : builds)
    for (const auto& v : kb->staged.report.variants)
      if (v.status == VariantResult::Status::failed) return v.exit_code ? v.exit_code : static_cast<int>(ErrorKind::input);
  return 0;
}

}  // namespace

void register_build(CLI::App& app, Output& out, int& exit_code) {
  auto args = std::make_shared<BuildArgs>();
  auto* sub = app.add_subcommand("build", "Build one wheel per variant of a kernel repo: a Hub repo id (ORG/NAME), a directory with build/, or every kernel of a lock");
  sub->add_option("source", args->src.source, "ORG/NAME on the Hub, or a directory holding build/<variant>/...");
  sub->add_option("--version", args->version,
                  "Hub: the kernel version N (branch vN; default: the highest), or for old repos a vX.Y.Z tag spec (\">=0.1,<0.2\", 0.1.1). Directory: the wheels' version (required)");
  sub->add_option("--wheel-version", args->wheel_version, "Override the wheels' version");
  sub->add_option("--lock", args->lock, "Build every kernel of this kernels.lock (either format) at its locked commit, into one --out");
  sub->add_option("--project", args->project,
                  "Build a project's kernels: DIR/kernels.lock if there is one, else [tool.kernels.dependencies] of DIR/pyproject.toml");
  add_hub_flags(sub, args->src);
  sub->add_option("--name", args->name, "Distribution name (default: the kernel's name from metadata.json, else its package directory)");
  sub->add_option("-o,--out", args->out, "Output directory")->capture_default_str();
  sub->add_option("--variant", args->variants, "Only variants matching this glob (repeatable)");
  sub->add_option("--min-python", args->min_python, "Oldest Python the abi3 wheels support")->capture_default_str();
  sub->add_option("--manylinux", args->manylinux,
                  "Linux platform tag: auto (the oldest policy the .so files satisfy) or 2_N to claim manylinux_2_N and fail if the evidence needs newer")
      ->capture_default_str();
  sub->add_option("--macos", args->macos,
                  "macOS floor of darwin wheels (default: the newest minimum the Mach-O files record); a file needing a newer macOS fails the variant");
  sub->add_option("--allow-external", args->allow_external, "A library (soname) the kernel may need beyond the policy and torch (repeatable)");
  sub->add_option("--compression-level", args->compression_level, "Deflate level 0 (store) to 9")->capture_default_str();
  sub->add_option("-j,--jobs", args->jobs, "Parallel downloads and wheel writers (default: 8 downloads, one writer per CPU)");
  sub->add_flag("--no-reuse", args->no_reuse, "Rewrite every wheel, even one already in --out from unchanged inputs");
  add_output_flags(sub, out);
  sub->callback([args, &out, &exit_code] { exit_code = run_build(*args, out); });
}

}  // namespace kwheel::cli
