#include "kwheel/link/installed_kernels.hpp"

#include <nlohmann/json.hpp>

#include "kwheel/base/embedded_python.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/process.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/wheel/kernel_marker.hpp"

namespace kwheel {

namespace {

std::string string_at(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Where the distribution's origin comes from, or why it has none.
void read_origin(InstalledKernel& k, const nlohmann::json& j) {
  const auto hub = j.find("hub_kernel");
  if (hub != j.end() && hub->is_string()) {
    k.origin_from = kHubKernelFile;
    try {
      k.origin = parse_hub_kernel_json(hub->get<std::string>(), "'" + k.name + "' " + kHubKernelFile);
    } catch (const Error& e) {
      k.why = e.what();
      return;
    }
    if (k.origin->repo_id.empty()) {
      k.why = "built from a directory without --repo-id, so nothing names the Hub repo get_kernel would ask for; "
              "rebuild it with `kwheel build DIR --repo-id ORG/NAME`";
      k.origin.reset();
    }
    return;
  }
  k.origin_from = "METADATA";
  k.origin = origin_from_metadata(parse_metadata_fields(string_at(j, "metadata")));
  if (!k.origin)
    k.why = "it has no " + std::string(kHubKernelFile) + " and its METADATA records no Hub revision and variant "
            "(a build from a directory by an older kwheel); rebuild it with this kwheel";
}

}  // namespace

InstalledKernels parse_installed_kernels(std::string_view answer, const std::string& python) {
  const auto j = nlohmann::json::parse(answer, nullptr, false);
  if (!j.is_object() || !j.contains("kernels") || !j["kernels"].is_array())
    throw Error(ErrorKind::usage, "'" + python + "' did not answer as a Python 3 interpreter listing its distributions");
  InstalledKernels out;
  out.python = string_at(j, "python");
  out.prefix = string_at(j, "prefix");
  for (const auto& e : j["kernels"]) {
    if (!e.is_object()) continue;
    InstalledKernel k;
    k.name = string_at(e, "name");
    k.version = string_at(e, "version");
    k.site = string_at(e, "location");
    if (k.name.empty() || k.site.empty()) continue;
    // The helper's filter is a substring; the marker is decided here (a
    // package whose description mentions hf-kernel is not one).
    const auto hub = e.find("hub_kernel");
    if ((hub == e.end() || !hub->is_string()) && !marks_kernel(parse_metadata_fields(string_at(e, "metadata")))) continue;
    read_origin(k, e);
    out.kernels.push_back(std::move(k));
  }
  return out;
}

InstalledKernels find_installed_kernels(const std::string& python) {
  ProcessResult r;
  try {
    r = run_process({python, "-I", "-c", std::string(embedded_python("find_kernels"))}, isolated_python(std::chrono::seconds(120)));
  } catch (const Error&) {
    throw Error(ErrorKind::usage, "cannot run Python interpreter '" + python + "'; pass --python PATH to the one the kernels are installed in");
  }
  if (r.exit_code != 0)
    throw Error(ErrorKind::usage, "'" + python + "' did not run as a Python 3 interpreter: " + last_lines(r.err, 2));
  return parse_installed_kernels(last_line(r.out), python);
}

}  // namespace kwheel
