#include "kwheel/factory/wheel_metadata.hpp"

#include <set>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/wheel/kernel_marker.hpp"

namespace kwheel {
namespace {

std::string describe(const std::string& name, const std::string& package, const Variant& v) {
  return "Build variant `" + v.str() + "` of the " + name +
         " kernel, packaged as a wheel by kwheel.\n\nImport it with `import " + package +
         "`; it needs the torch and compute backend named in this wheel's local version label.\n";
}

std::string backend_of(const Variant& v, const std::optional<KernelMetadata>& md) {
  if (md && md->backend) return *md->backend;
  return v.is_noarch() ? v.noarch : v.backend.name();
}

// The name a requirement is on: "torch==2.10.*" -> "torch".
std::string requirement_name(const std::string& requirement) {
  return normalize_name(requirement.substr(0, requirement.find_first_of("<>=!~;[ ")));
}

// kernel-depends after the framework and python-depends: one whose name is
// already required (org/torch -> "torch>=1,<2") would narrow or replace
// what the kernel needs to run, so it is refused, not merged.
void add_kernel_requirements(std::vector<std::string>& requires_dist, const KernelMetadata& md, const std::string& prefix, const std::string& where) {
  std::set<std::string> taken;
  for (const auto& r : requires_dist) taken.insert(requirement_name(r));
  for (auto& r : kernel_requirements(md, prefix)) {
    if (!taken.insert(requirement_name(r)).second)
      throw Error(ErrorKind::input, where + ": metadata.json field 'kernel-depends' would require '" + r + "', a project the wheel already requires " +
                                        "(its framework, a python-depends, or another kernel-depends of that name); pass --name-prefix so kernel wheels have names of their own");
    requires_dist.push_back(std::move(r));
  }
}

}  // namespace

std::string public_version(const VariantInput& input, const std::optional<KernelMetadata>& md, const BuildOptions& o) {
  if (!o.version.empty()) return Version::parse(o.version).public_str();
  const std::optional<uint64_t> n = md && md->version ? md->version : o.branch_version;
  if (!n)
    throw Error(ErrorKind::input, "variant '" + input.name + "' has no kernel version: " +
                                      std::string(md ? "its metadata.json has no 'version'" : "it has no metadata.json") +
                                      " and the revision was not reached through a vN branch; pass --version N to build branch vN, or --wheel-version X.Y.Z");
  return std::to_string(*n) + "." + std::to_string(*o.build_number);
}

std::string dist_name_of(const VariantLayout& layout, const std::optional<KernelMetadata>& md, const BuildOptions& o) {
  const std::string& own = !o.name.empty() ? o.name : md && md->name ? *md->name : layout.package;
  return o.name_prefix + own;
}

CoreMetadata core_metadata(const PlannedWheel& plan, const Variant& variant, const BuildOptions& o, const std::string& where) {
  CoreMetadata md;
  md.name = plan.dist_name;
  md.version = plan.version;
  // What an index serves (METADATA, PEP 658) says it is a kernel: `pin`
  // without --name pins only such projects (wheel/kernel_marker.hpp).
  md.keywords = {kKernelKeyword};
  md.summary = plan.dist_name + " kernel for " + (variant.is_noarch() ? "torch (" + variant.noarch + ", pure Python)" : variant.str());
  md.requires_python = variant.is_noarch() ? ">=3.9" : ">=" + o.tags.min_python;
  if (!plan.cpython_module.empty()) md.requires_python = "==3." + plan.tags.python.substr(3) + ".*";
  md.requires_dist = {plan.tags.requires_dist};
  if (plan.metadata) {
    for (auto& r : python_requirements(*plan.metadata, backend_of(variant, plan.metadata), where)) md.requires_dist.push_back(r);
    add_kernel_requirements(md.requires_dist, *plan.metadata, o.name_prefix, where);
    if (plan.metadata->license) md.license = *plan.metadata->license;
    if (plan.metadata->upstream)
      if (auto url = browsable_url(*plan.metadata->upstream)) md.project_urls.emplace_back("Upstream", *url);
    if (plan.metadata->source)
      if (auto url = browsable_url(*plan.metadata->source)) md.project_urls.emplace_back("Source", *url);
  }
  if (!o.source.url.empty()) md.project_urls.emplace_back(kHubRevisionLabel, o.source.url);
  md.description = describe(plan.dist_name, plan.package, variant);
  return md;
}

}  // namespace kwheel
