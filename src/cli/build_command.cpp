#include <iomanip>
#include <iostream>

#include "cli.hpp"
#include "kwheel/build.hpp"
#include "kwheel/error.hpp"
#include "kwheel/repo_layout.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

namespace {

struct BuildArgs {
  std::string source;
  std::string version;
  std::string name;
  std::string out = "dist";
  std::vector<std::string> variants;
  std::string min_python = "3.9";
  std::string manylinux = "2_28";
  int compression_level = 6;
  unsigned jobs = 0;
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
    if (v.status == VariantResult::Status::built)
      std::cout << v.wheel.filename().string() << " (" << human_size(v.size) << ")";
    else if (v.status == VariantResult::Status::failed)
      std::cout << v.error;
    else
      std::cout << "not selected by --variant";
    std::cout << "\n";
  }
}

}  // namespace

void register_build(CLI::App& app, Output& out, int& exit_code) {
  auto args = std::make_shared<BuildArgs>();
  auto* sub = app.add_subcommand("build", "Build one wheel per variant of a kernel repo (a directory with build/)");
  sub->add_option("source", args->source, "Kernel repo directory (containing build/<variant>/...)")->required();
  sub->add_option("--version", args->version, "Version of the wheels, e.g. 0.1.0 (required for a directory)");
  sub->add_option("--name", args->name, "Distribution name (default: the repo's name)");
  sub->add_option("-o,--out", args->out, "Output directory")->capture_default_str();
  sub->add_option("--variant", args->variants, "Only variants matching this glob (repeatable)");
  sub->add_option("--min-python", args->min_python, "Oldest Python the abi3 wheels support")->capture_default_str();
  sub->add_option("--manylinux", args->manylinux, "glibc floor of the manylinux tag, e.g. 2_28")->capture_default_str();
  sub->add_option("--compression-level", args->compression_level, "Deflate level 0 (store) to 9")->capture_default_str();
  sub->add_option("-j,--jobs", args->jobs, "Wheels written in parallel (default: CPU count)");
  add_output_flags(sub, out);
  sub->callback([args, &out, &exit_code] {
    const fs::path dir(args->source);
    BuildOptions o;
    o.version = args->version;
    if (o.version.empty())
      throw Error(ErrorKind::usage, "building from directory '" + args->source + "' needs --version, e.g. --version 0.1.0");
    o.name = args->name.empty() ? fs::absolute(dir).lexically_normal().filename().string() : args->name;
    if (o.name.empty()) o.name = fs::absolute(dir).lexically_normal().parent_path().filename().string();
    o.out_dir = args->out;
    o.variant_globs = args->variants;
    o.tags.min_python = args->min_python;
    o.tags.manylinux = args->manylinux;
    o.write.compression_level = args->compression_level;
    o.write.source_date_epoch = source_date_epoch_from_env();
    o.jobs = args->jobs;

    auto variants = group_variants(list_local_repo(dir));
    const bool existed = fs::exists(o.out_dir);
    BuildReport report = build_wheels(variants, o);
    if (!report.committed && !existed) {
      std::error_code ec;
      fs::remove(o.out_dir, ec);  // only if empty: leave things as they were
    }
    if (out.json) {
      auto j = to_json(report);
      j["source"] = {{"type", "directory"}, {"path", args->source}};
      j["name"] = o.name;
      out.emit_json(j);
    } else {
      print_table(report);
      if (report.committed) out.info("wrote " + std::to_string(std::count_if(report.variants.begin(), report.variants.end(), [](auto& v) { return v.status == VariantResult::Status::built; })) + " wheel(s) to " + o.out_dir.string() + "/");
      else out.warn("no wheel was written: fix the variants marked failed (or select others with --variant)");
    }
    exit_code = report.ok() ? 0 : static_cast<int>(ErrorKind::input);
  });
}

}  // namespace kwheel::cli
