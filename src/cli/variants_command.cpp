#include <iomanip>
#include <iostream>

#include "cli.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/factory/variant_listing.hpp"
#include "kwheel/index/pin.hpp"
#include "kwheel/validate/compat.hpp"
#include "kwheel/validate/interpreter.hpp"
#include "kwheel/wheel/tags.hpp"

namespace kwheel::cli {

namespace {

struct VariantsArgs {
  SourceRequest source;
  TargetArgs target;  // no default interpreter: no flag, no fits column
};

// The fits verdict of a listed variant against `target`, when one was given.
void add_fit(nlohmann::json& j, const ListedVariant& listed, const std::optional<InterpreterInfo>& target) {
  if (!target) return;
  const auto problem = listed.variant ? variant_incompatibility(*listed.variant, *target) : std::optional<std::string>("not a variant name");
  j["fits"] = !problem;
  if (problem) j["reason"] = *problem;
}

std::string details(const nlohmann::json& j) {
  if (!j["valid"]) return "invalid: " + j["error"].get<std::string>();
  if (j.contains("noarch")) return "pure Python (" + j["noarch"].get<std::string>() + ")";
  std::string s = j["framework"].get<std::string>() + " " + j["framework_version"].get<std::string>() + ", " + j["backend"].get<std::string>() +
                  (j.contains("backend_version") ? " " + j["backend_version"].get<std::string>() : "") + ", " + j["cpu"].get<std::string>() + "-" +
                  j["os"].get<std::string>();
  if (j.contains("cxx_abi")) s += ", " + j["cxx_abi"].get<std::string>();
  return s;
}

// VERSION (when several), VARIANT, FITS (when a target was given), DETAILS.
void print_table(const std::vector<std::pair<std::string, nlohmann::json>>& rows, bool versions, bool fits) {
  size_t w = 7;
  for (const auto& [_, j] : rows) w = std::max(w, j["variant"].get<std::string>().size());
  const int vw = 9;
  if (versions) std::cout << std::left << std::setw(vw) << "VERSION";
  std::cout << std::left << std::setw(static_cast<int>(w) + 2) << "VARIANT";
  if (fits) std::cout << "FITS  ";
  std::cout << "DETAILS\n";
  for (const auto& [version, j] : rows) {
    if (versions) std::cout << std::setw(vw) << version;
    std::cout << std::setw(static_cast<int>(w) + 2) << j["variant"].get<std::string>();
    if (fits) std::cout << (j["fits"].get<bool>() ? "\u2705    " : "no    ");
    std::cout << details(j);
    if (fits && !j["fits"].get<bool>()) std::cout << " (" << j["reason"].get<std::string>() << ")";
    std::cout << "\n";
  }
}

nlohmann::json variant_json(const ListedVariant& listed) {
  if (!listed.variant) return {{"variant", listed.name}, {"valid", false}, {"error", listed.error}};
  const Variant& v = *listed.variant;
  nlohmann::json j{{"variant", listed.name}, {"valid", true}};
  if (v.is_noarch()) {
    j["framework"] = "torch";
    j["noarch"] = v.noarch;
  } else {
    j["framework"] = v.framework == Framework::torch ? "torch" : v.framework == Framework::tvm_ffi ? "tvm-ffi" : "torch-stable-abi";
    j["framework_version"] = v.framework_version.str();
    if (v.cxx11_abi) j["cxx_abi"] = *v.cxx11_abi ? "cxx11" : "cxx98";
    j["backend"] = v.backend.name();
    if (v.backend.version) j["backend_version"] = v.backend.version->str();
    j["cpu"] = v.cpu;
    j["os"] = v.os;
  }
  j["local_label"] = local_label(v);
  return j;
}

}  // namespace

void register_variants(CLI::App& app, Output& out, int& exit_code) {
  auto a = std::make_shared<VariantsArgs>();
  auto* sub = app.add_subcommand("variants", "List the build variants of a kernel repo (Hub: every version vN) without downloading binaries; "
                                             "with --python or --torch, which fit that environment");
  url_option(sub->add_option("source", a->source.source, "ORG/NAME on the Hub, or a directory holding build/")->type_name("ORG/NAME|DIR")->required());
  sub->add_option("--version", a->source.version_spec, "Hub: only this release (tag spec or major N); default: every version branch vN")->type_name("N|SPEC");
  add_target_flags(sub, a->target, "Mark the variants that fit this interpreter's Python, platform, torch and CUDA",
                   "Mark the variants that fit torch X.Y (with --cuda X.Y or --cpu)");
  add_hub_flags(sub, a->source);
  add_output_flags(sub, out);
  add_examples(sub, {"kwheel variants kernels-community/img2gray                          # every version vN",
                     "kwheel variants kernels-community/img2gray --python /opt/venv/bin/python  # and which fit it",
                     "kwheel variants path/to/repo --json                                  # a checkout with build/"});
  sub->callback([a, &out, &exit_code] {
    const std::optional<InterpreterInfo> target = described_or_probed(a->target, "variants");
    const VariantListing listing = list_variants(a->source, feedback(out));
    auto listed_json = [&](const std::vector<ListedVariant>& variants) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& v : variants) {
        nlohmann::json j = variant_json(v);
        add_fit(j, v, target);
        list.push_back(std::move(j));
      }
      return list;
    };
    const nlohmann::json list = listed_json(listing.variants);
    nlohmann::json versions = nlohmann::json::array();
    for (const auto& v : listing.versions) versions.push_back({{"version", v.version}, {"ref", v.ref}, {"commit", v.commit}, {"variants", listed_json(v.variants)}});
    if (out.json) {
      nlohmann::json j{{"source", listing.source.describe()}, {"variants", list}};
      if (!listing.versions.empty()) j["versions"] = versions;
      if (target) j["target"] = {{"python", target->python}, {"torch", target->torch.value_or("")}, {"cuda", target->cuda.value_or("")}};
      out.emit_json(j);
    } else if (out.quiet) {  // the exit status is the answer; an invalid variant still says why
      for (const auto& j : list)
        if (!j["valid"]) out.error("variant " + j["variant"].get<std::string>() + ": " + j["error"].get<std::string>());
    } else {
      std::vector<std::pair<std::string, nlohmann::json>> rows;
      if (listing.versions.empty())
        for (const auto& j : list) rows.emplace_back("", j);
      for (const auto& v : versions)
        for (const auto& j : v["variants"]) rows.emplace_back(v["ref"].get<std::string>(), j);
      print_table(rows, !listing.versions.empty(), target.has_value());
    }
    exit_code = listing.all_valid() ? 0 : static_cast<int>(ErrorKind::input);
  });
}

}  // namespace kwheel::cli
