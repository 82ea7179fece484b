#include <iomanip>
#include <iostream>

#include "cli.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/build/variant_listing.hpp"
#include "kwheel/wheel/tags.hpp"

namespace kwheel::cli {

namespace {

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
  auto args = std::make_shared<SourceRequest>();
  auto* sub = app.add_subcommand("variants", "List the build variants of a kernel repo (Hub or directory) without downloading binaries");
  sub->add_option("source", args->source, "ORG/NAME on the Hub, or a directory holding build/")->type_name("ORG/NAME|DIR")->required();
  sub->add_option("--version", args->version_spec, "Hub: which release (tag spec or major N)")->type_name("N|SPEC");
  add_hub_flags(sub, *args);
  add_output_flags(sub, out);
  add_examples(sub, {"kwheel variants kernels-community/img2gray              # the highest version vN",
                     "kwheel variants kernels-community/img2gray --version 1  # branch v1",
                     "kwheel variants path/to/repo --json                      # a checkout with build/"});
  sub->callback([args, &out, &exit_code] {
    const VariantListing listing = list_variants(*args, feedback(out));
    nlohmann::json list = nlohmann::json::array();
    for (const auto& v : listing.variants) list.push_back(variant_json(v));
    if (out.json) {
      out.emit_json({{"source", listing.source.describe()}, {"variants", list}});
    } else if (out.quiet) {  // the exit status is the answer; an invalid variant still says why
      for (const auto& j : list)
        if (!j["valid"]) out.error("variant " + j["variant"].get<std::string>() + ": " + j["error"].get<std::string>());
    } else {
      size_t w = 7;
      for (const auto& v : listing.variants) w = std::max(w, v.name.size());
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
    exit_code = listing.all_valid() ? 0 : static_cast<int>(ErrorKind::input);
  });
}

}  // namespace kwheel::cli
