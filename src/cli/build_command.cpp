#include <algorithm>
#include <iomanip>
#include <iostream>

#include "cli.hpp"
#include "kwheel/factory/pipeline.hpp"
#include "kwheel/hub/hf_config.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

namespace {

// `kwheel build`'s options as parsed: the source, version, lock and project
// straight into the request, the rest into its BuildOptions by request().
struct BuildArgs {
  PipelineRequest request;
  std::string name;
  std::string name_prefix;
  std::string out = "dist";
  std::vector<std::string> variants;
  std::string min_python = "3.9";
  std::string manylinux = "auto";
  std::string macos;
  std::vector<std::string> allow_external;
  int compression_level = 6;
  unsigned jobs = 0;
  bool no_reuse = false;
  SignatureArgs signatures;
  std::string repo_id;  // a directory build's Hub repo id, for hub_kernel.json (kwheel link)
};


PipelineRequest request(const BuildArgs& a, const Output& out) {
  PipelineRequest r = a.request;
  BuildOptions& o = r.options;
  o.name = a.name;
  o.name_prefix = a.name_prefix;
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
  o.write.digest = out.json;  // only --json reports the wheels' sha256
  o.signatures = signature_options(a.signatures);
  if (!a.repo_id.empty()) {
    std::error_code ec;
    if (!fs::is_directory(a.request.source.source, ec))
      throw Error(ErrorKind::usage, "--repo-id names the Hub repo of a build from a directory; a Hub build records the repo it reads");
    check_repo_id(a.repo_id);
    o.source.repo_id = a.repo_id;
  }
  return r;
}

std::string human_size(uint64_t n) {
  std::ostringstream s;
  if (n >= (1u << 20)) s << std::fixed << std::setprecision(1) << n / 1048576.0 << " MiB";
  else if (n >= 1024) s << std::fixed << std::setprecision(1) << n / 1024.0 << " KiB";
  else s << n << " B";
  return s.str();
}

// A built variant's wheel, and what else the build says about it.
void print_built(const VariantResult& v, size_t w) {
  std::cout << v.wheel.filename().string() << " (" << human_size(v.size) << (v.reused ? ", unchanged" : "") << ")";
  const std::string indent(w + 15, ' ');
  if (v.platform && !v.platform->reason.empty()) std::cout << "\n" << indent << "tag " << v.platform->platform_tag << ": " << v.platform->reason;
  if (!v.ignored.empty()) std::cout << "\n" << indent << "left out (" << v.layout << " layout): " << join(v.ignored, ", ");
  std::cout << "\n" << indent << v.signature.describe();
}

// Failed variants first (what to fix), then the others. When the run
// wrote nothing (all or nothing: one failure anywhere), a variant that
// built is "not written": its wheel is not in --out.
void print_table(const BuildReport& report, bool committed) {
  using S = VariantResult::Status;
  size_t w = 7;
  for (const auto& v : report.variants) w = std::max(w, v.variant.size());
  std::vector<const VariantResult*> rows;
  for (const auto& v : report.variants) rows.push_back(&v);
  std::stable_partition(rows.begin(), rows.end(), [](const VariantResult* v) { return v->status == S::failed; });
  std::cout << std::left << std::setw(static_cast<int>(w) + 2) << "VARIANT" << std::setw(13) << "STATUS" << "WHEEL / REASON\n";
  for (const VariantResult* v : rows) {
    const bool unwritten = v->status == S::built && !committed;
    std::cout << std::setw(static_cast<int>(w) + 2) << v->variant << std::setw(13) << (unwritten ? "not written" : status_name(v->status));
    if (unwritten) std::cout << v->wheel.filename().string() << " (built, then discarded with the rest: another variant failed)";
    else if (v->status == S::built) print_built(*v, w);
    else if (v->status == S::failed) std::cout << v->error;
    else std::cout << (v->error.empty() ? "not selected by --variant" : v->error);
    std::cout << "\n";
  }
}

// Each built variant says whether its wheel is in --out ("written"):
// none is when any variant of the run failed.
nlohmann::json kernel_json(const KernelBuild& kb, bool committed) {
  auto j = to_json(kb.staged.report);
  for (auto& v : j["variants"])
    if (v["status"] == "built") v["written"] = committed;
  j["source"] = kb.source.describe();
  if (kb.source.is_hub) {
    const auto& stats = kb.source.client->stats();
    j["transfers"] = {{"requests", stats.requests}, {"retries", stats.retries}, {"bytes_downloaded", stats.bytes}};
  }
  return j;
}

void report(const PipelineResult& result, bool many, const std::string& out_dir, const Output& out) {
  const bool committed = result.committed;
  if (out.json) {
    if (!many) {
      auto j = kernel_json(*result.kernels.front(), committed);
      j["committed"] = committed;
      out.emit_json(j);
      return;
    }
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& kb : result.kernels) {
      kernels.push_back(kernel_json(*kb, committed));
      kernels.back()["committed"] = committed;
    }
    out.emit_json({{"ok", committed}, {"committed", committed}, {"kernels", kernels}});
    return;
  }
  for (const auto& kb : result.kernels) {
    const ResolvedSource& src = kb->source;
    if (out.table()) {
      if (many) std::cout << "== " << src.location << (src.is_hub ? " @ " + src.resolution->commit.substr(0, 12) : "") << "\n";
      print_table(kb->staged.report, committed);
      continue;
    }
    // -q: no table, but what failed is still said, on stderr.
    for (const auto& v : kb->staged.report.variants)
      if (v.status == VariantResult::Status::failed) out.error((many ? src.location + " " : std::string()) + "variant " + v.variant + ": " + v.error);
  }
  if (committed) out.info("wrote " + std::to_string(result.wheels_built()) + " wheel(s) to " + out_dir + "/");
  else out.warn("no wheel was written: fix the variants marked failed (or select others with --variant)");
}

int run_build(const BuildArgs& a, const Output& out) {
  check_output_dir("-o", a.out, "the wheels");
  const Feedback fb = feedback(out);  // outlives the download threads
  const PipelineResult result = run_pipeline(request(a, out), fb);
  report(result, a.request.many(), a.out, out);
  return result.exit_code();
}

}  // namespace

void register_build(CLI::App& app, Output& out, int& exit_code) {
  auto args = std::make_shared<BuildArgs>();
  auto* sub = app.add_subcommand("build", "Build one wheel per variant of a kernel repo: a Hub repo id (ORG/NAME), a directory with build/, or every kernel of a lock");
  // A URL pasted for ORG/NAME is refused, and quoted without its password.
  url_option(sub->add_option("source", args->request.source.source, "ORG/NAME on the Hub, or a directory holding build/<variant>/...")->type_name("ORG/NAME|DIR"));
  sub->add_option("--version", args->request.version.version,
                  "Hub: the kernel version N (branch vN; default: the highest), or for old repos a vX.Y.Z tag spec (\">=0.1,<0.2\", 0.1.1). Directory: the wheels' version (required)")->type_name("N|SPEC");
  sub->add_option("--wheel-version", args->request.version.wheel_version, "Override the wheels' version")->type_name("VERSION");
  sub->add_option("--lock", args->request.lock, "Build every kernel of this kernels.lock (either format) at its locked commit, into one --out")->type_name("FILE");
  sub->add_option("--project", args->request.project,
                  "Build a project's kernels: DIR/kernels.lock if there is one, else [tool.kernels.dependencies] of DIR/pyproject.toml")->type_name("DIR");
  add_hub_flags(sub, args->request.source);
  sub->add_option("--name", args->name, "Distribution name (default: the kernel's name from metadata.json, else its package directory)")->type_name("NAME");
  sub->add_option("--name-prefix", args->name_prefix,
                  "Put this before every wheel's name and every kernel-depends requirement (acme- gives acme-img2gray requiring acme-activation), "
                  "so dependencies resolve only to wheels you built; docs/wheel-naming.md")->type_name("PREFIX");
  sub->add_option("-o,--out", args->out, "Output directory")->type_name("DIR")->capture_default_str();
  sub->add_option("--variant", args->variants, "Only variants matching this glob (repeatable)")->type_name("GLOB");
  sub->add_option("--min-python", args->min_python, "Oldest Python the abi3 wheels support")->type_name("X.Y")->capture_default_str();
  sub->add_option("--manylinux", args->manylinux,
                  "Linux platform tag: auto (the oldest policy the .so files satisfy) or 2_N to claim manylinux_2_N and fail if the evidence needs newer")->type_name("auto|2_N")
      ->capture_default_str();
  sub->add_option("--macos", args->macos,
                  "macOS floor of darwin wheels (default: the newest minimum the Mach-O files record); a file needing a newer macOS fails the variant")->type_name("X.Y");
  sub->add_option("--allow-external", args->allow_external, "A library (soname) the kernel may need beyond the policy and torch (repeatable)")->type_name("SONAME");
  sub->add_option("--compression-level", args->compression_level, "Deflate level 0 (store) to 9")->capture_default_str()->check(CLI::Range(0, 9));
  sub->add_option("-j,--jobs", args->jobs, "Deflate workers for the whole run (all wheels, all kernels of a --lock); each kernel gets one wheel writer more, and this many downloads (default: one worker per CPU, 8 downloads)")->type_name("N");
  sub->add_flag("--no-reuse", args->no_reuse, "Rewrite every wheel, even one already in --out from unchanged inputs");
  sub->add_option("--repo-id", args->repo_id,
                  "A build from a directory: the Hub repo (ORG/NAME) get_kernel names it by, recorded in each wheel's hub_kernel.json so that "
                  "`kwheel link` can make it loadable; without it, link skips these wheels")->type_name("ORG/NAME");
  add_signature_flags(sub, args->signatures, true);
  add_output_flags(sub, out);
  add_examples(sub, {"kwheel build kernels-community/img2gray -o dist              # the highest version vN",
                     "kwheel build kernels-community/img2gray --version 1 -o dist  # branch v1",
                     "kwheel build --lock kernels.lock -o dist                     # every locked kernel (or --project DIR)"});
  sub->callback([args, &out, &exit_code] { exit_code = run_build(*args, out); });
}

}  // namespace kwheel::cli
