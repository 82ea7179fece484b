#include <algorithm>
#include <iomanip>
#include <iostream>

#include "cli.hpp"
#include "kwheel/build.hpp"
#include "kwheel/error.hpp"
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
  std::vector<std::string> allow_external;
  int compression_level = 6;
  unsigned jobs = 0;
  bool no_reuse = false;
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
      if (!v.platform.is_null() && !v.platform.value("reason", std::string()).empty())
        std::cout << "\n" << std::string(w + 11, ' ') << "tag " << v.platform["platform_tag"].get<std::string>() << ": "
                  << v.platform["reason"].get<std::string>();
    }
    else if (v.status == VariantResult::Status::failed)
      std::cout << v.error;
    else
      std::cout << "not selected by --variant";
    std::cout << "\n";
  }
}

// The wheels' version: --wheel-version, else what the source says (a
// directory needs --version; a Hub revision the vX.Y.Z tag it resolved to).
std::string wheel_version(const BuildArgs& a, const ResolvedSource& src) {
  if (!a.wheel_version.empty()) return a.wheel_version;
  if (!src.is_hub) {
    if (a.version.empty())
      throw Error(ErrorKind::usage, "building from directory '" + a.src.source + "' needs --version, e.g. --version 0.1.0");
    return a.version;
  }
  if (src.resolution->version) return *src.resolution->version;
  throw Error(ErrorKind::usage, "revision '" + src.resolution->requested + "' of " + a.src.source + " (commit " +
                                    src.resolution->commit.substr(0, 12) +
                                    ") carries no vX.Y.Z tag, so the wheel version is unknown: pass --version SPEC to pick a release, or --wheel-version X.Y.Z");
}

}  // namespace

void register_build(CLI::App& app, Output& out, int& exit_code) {
  auto args = std::make_shared<BuildArgs>();
  auto* sub = app.add_subcommand("build", "Build one wheel per variant of a kernel repo: a Hub repo id (ORG/NAME) or a directory with build/");
  sub->add_option("source", args->src.source, "ORG/NAME on the Hub, or a directory holding build/<variant>/...")->required();
  sub->add_option("--version", args->version,
                  "Directory: the wheels' version (required). Hub: which release, as a vX.Y.Z tag spec (\">=0.1,<0.2\", 0.1.1) or a major N (branch vN)");
  sub->add_option("--wheel-version", args->wheel_version, "Override the wheels' version");
  add_hub_flags(sub, args->src);
  sub->add_option("--name", args->name, "Distribution name (default: the repo's name)");
  sub->add_option("-o,--out", args->out, "Output directory")->capture_default_str();
  sub->add_option("--variant", args->variants, "Only variants matching this glob (repeatable)");
  sub->add_option("--min-python", args->min_python, "Oldest Python the abi3 wheels support")->capture_default_str();
  sub->add_option("--manylinux", args->manylinux,
                  "Linux platform tag: auto (the oldest policy the .so files satisfy) or 2_N to claim manylinux_2_N and fail if the evidence needs newer")
      ->capture_default_str();
  sub->add_option("--allow-external", args->allow_external, "A library (soname) the kernel may need beyond the policy and torch (repeatable)");
  sub->add_option("--compression-level", args->compression_level, "Deflate level 0 (store) to 9")->capture_default_str();
  sub->add_option("-j,--jobs", args->jobs, "Parallel downloads and wheel writers (default: 8 downloads, one writer per CPU)");
  sub->add_flag("--no-reuse", args->no_reuse, "Rewrite every wheel, even one already in --out from unchanged inputs");
  add_output_flags(sub, out);
  sub->callback([args, &out, &exit_code] {
    auto& a = *args;
    SourceArgs src_args = a.src;
    if (a.jobs) src_args.jobs = a.jobs;
    std::error_code ec;
    const bool is_dir = fs::is_directory(a.src.source, ec);
    if (!is_dir && !a.version.empty()) src_args.version_spec = a.version;
    ResolvedSource src = resolve_source(src_args, out);

    BuildOptions o;
    o.version = wheel_version(a, src);
    o.name = a.name.empty() ? src.name : a.name;
    o.out_dir = a.out;
    o.variant_globs = a.variants;
    o.tags.min_python = a.min_python;
    o.tags.manylinux = a.manylinux;
    o.allowed_external.insert(a.allow_external.begin(), a.allow_external.end());
    o.write.compression_level = a.compression_level;
    o.write.source_date_epoch = source_date_epoch_from_env();
    o.jobs = a.jobs;
    o.reuse = !a.no_reuse;

    StreamedSource files(src, src_args, out);
    auto variants = group_variants(files.files());
    o.await_inputs = files.awaiter();
    const bool existed = fs::exists(o.out_dir);
    // A download error fails the run even where no wheel awaited that file.
    o.before_commit = [&files] { files.finish(); };
    BuildReport report;
    try {
      report = build_wheels(variants, o);
    } catch (...) {
      if (!existed) fs::remove(o.out_dir, ec);
      throw;
    }
    if (!report.committed && !existed) fs::remove(o.out_dir, ec);  // only if empty: leave things as they were
    // Variants that awaited a failed download failed with it; the download
    // error is the run's error, as when it happens before packing starts.
    if (!report.committed) files.finish();
    if (out.json) {
      auto j = to_json(report);
      j["source"] = src.describe();
      j["name"] = o.name;
      if (src.is_hub) j["transfers"] = {{"requests", src.client->stats().requests}, {"retries", src.client->stats().retries}, {"bytes_downloaded", src.client->stats().bytes}};
      out.emit_json(j);
    } else {
      print_table(report);
      const auto built = std::count_if(report.variants.begin(), report.variants.end(), [](auto& v) { return v.status == VariantResult::Status::built; });
      if (report.committed) out.info("wrote " + std::to_string(built) + " wheel(s) to " + o.out_dir.string() + "/");
      else out.warn("no wheel was written: fix the variants marked failed (or select others with --variant)");
    }
    exit_code = 0;
    for (const auto& v : report.variants)
      if (v.status == VariantResult::Status::failed && !exit_code) exit_code = v.exit_code ? v.exit_code : static_cast<int>(ErrorKind::input);
  });
}

}  // namespace kwheel::cli
