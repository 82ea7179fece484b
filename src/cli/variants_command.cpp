#include <iomanip>
#include <set>
#include <iostream>

#include "cli.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/wheel/tags.hpp"
#include "kwheel/kernel/variant.hpp"
#include "source.hpp"

namespace kwheel::cli {

namespace {

nlohmann::json variant_json(const std::string& name) {
  auto r = try_parse_variant(name);
  if (!r.variant) return {{"variant", name}, {"valid", false}, {"error", r.error}};
  const Variant& v = *r.variant;
  nlohmann::json j{{"variant", name}, {"valid", true}};
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
  auto args = std::make_shared<SourceArgs>();
  auto* sub = app.add_subcommand("variants", "List the build variants of a kernel repo (Hub or directory) without downloading binaries");
  sub->add_option("source", args->source, "ORG/NAME on the Hub, or a directory holding build/")->required();
  sub->add_option("--version", args->version_spec, "Hub: which release (tag spec or major N)");
  add_hub_flags(sub, *args);
  add_output_flags(sub, out);
  sub->callback([args, &out, &exit_code] {
    ResolvedSource src = resolve_source(*args, out);
    std::set<std::string> names;
    if (src.is_hub && !src.client->config().offline) {
      for (const auto& e : src.tree) {
        if (!e.path.starts_with("build/")) continue;
        auto rest = e.path.substr(6);
        auto slash = rest.find('/');
        names.insert(slash == std::string::npos ? rest : rest.substr(0, slash));
      }
    } else {
      for (const auto& v : group_variants(fetch_source(src, *args, out))) names.insert(v.name);
    }
    nlohmann::json list = nlohmann::json::array();
    bool all_valid = true;
    for (const auto& n : names) {
      list.push_back(variant_json(n));
      all_valid = all_valid && list.back()["valid"].get<bool>();
    }
    if (out.json) {
      out.emit_json({{"source", src.describe()}, {"variants", list}});
    } else {
      size_t w = 7;
      for (const auto& n : names) w = std::max(w, n.size());
      std::cout << std::left << std::setw(static_cast<int>(w) + 2) << "VARIANT" << "DETAILS\n";
      for (const auto& j : list) {
        std::cout << std::setw(static_cast<int>(w) + 2) << j["variant"].get<std::string>();
        if (!j["valid"]) std::cout << "invalid: " << j["error"].get<std::string>();
        else if (j.contains("noarch")) std::cout << "pure Python (" << j["noarch"].get<std::string>() << ")";
        else {
          std::cout << j["framework"].get<std::string>() << " " << j["framework_version"].get<std::string>() << ", "
                    << j["backend"].get<std::string>() << (j.contains("backend_version") ? " " + j["backend_version"].get<std::string>() : "")
                    << ", " << j["cpu"].get<std::string>() << "-" << j["os"].get<std::string>();
          if (j.contains("cxx_abi")) std::cout << ", " << j["cxx_abi"].get<std::string>();
        }
        std::cout << "\n";
      }
    }
    exit_code = all_valid ? 0 : static_cast<int>(ErrorKind::input);
  });
}

}  // namespace kwheel::cli
