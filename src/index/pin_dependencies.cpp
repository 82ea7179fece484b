#include "kwheel/index/pin_dependencies.hpp"

#include "kwheel/hub/connection.hpp"

#include <set>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/index/index_values.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/pylock.hpp"

namespace kwheel {
using nlohmann::json;

namespace {

// "acme-other (>=1,<2) ; marker" -> "acme-other" and ">=1,<2".
std::pair<std::string, std::string> name_and_specifier(const std::string& requirement) {
  const std::string req = requirement.substr(0, requirement.find(';'));
  const size_t end = req.find_first_of("<>=!~[ (");
  std::string spec = end == std::string::npos ? "" : trim(req.substr(end));
  if (spec.starts_with("[")) spec = trim(spec.substr(spec.find(']') == std::string::npos ? spec.size() : spec.find(']') + 1));
  if (spec.starts_with("(") && spec.ends_with(")")) spec = trim(spec.substr(1, spec.size() - 2));
  return {normalize_name(trim(req.substr(0, end))), spec};
}

// A kernel-depends pinned as the top kernel was, or nullopt when the
// source's project of that name holds no kwheel build (a Python package
// served by the same index, einops say).
std::optional<PinResult> pin_kernel_depends(const PinRequest& base, const std::string& name, const std::string& spec, const std::string& needed_by) {
  PinRequest req = base;
  req.name = name;
  req.version = spec.empty() ? std::nullopt : std::optional(spec);
  req.repo_id.reset();  // a lock names its own kernels' commits, not their dependencies'
  req.commit.reset();
  req.read_requirements = true;
  try {
    PinResult r = pin(req);
    if (!r.label.is_kwheel()) return std::nullopt;
    return r;
  } catch (const Error& e) {
    throw Error(e.kind(), "kernel-depends '" + name + "' of " + needed_by + ": " + e.what(), e.reason());
  }
}

DependencyRequest resolver_request(const PinRequest& base, const std::vector<const PinResult*>& kernels, const DependencyOptions& o) {
  DependencyRequest dr;
  for (const PinResult* k : kernels) {
    dr.kernel_pins.push_back(k->project + "==" + k->version);
    dr.kernel_names.push_back(k->project);
  }
  const bool directory = base.source.find("://") == std::string::npos;
  // The login, if any, travels in ChildToolAccess, never in the URL uv is told.
  const std::string source = directory ? base.source : split_userinfo(base.source).url;
  dr.kernels_source = directory || source.ends_with("/") ? source : source + "/";
  dr.deps_index = o.deps_index;
  if (!base.target.executable.empty()) dr.python = base.target.executable;
  std::string why;
  for (const PinResult* k : kernels) why += (why.empty() ? "" : ", ") + k->project;
  dr.uv = find_uv(o.uv, "pinning the dependencies of " + why);
  dr.access = o.access;
  dr.pylock = o.pylock;
  return dr;
}

}  // namespace

PinnedDependencies pin_dependencies(const PinRequest& base, const std::vector<PinResult>& kernels, const DependencyOptions& o) {
  PinnedDependencies out;
  std::set<std::string> pinned;
  for (const auto& k : kernels) pinned.insert(k.project);
  std::optional<std::set<std::string>> projects;  // listed once, when a requirement first needs it
  bool python_depends = false;
  // Breadth-first over the kernels and the kernels they depend on.
  std::vector<PinResult> queue = kernels;
  for (size_t i = 0; i < queue.size(); ++i) {
    const std::vector<std::string> requirements = queue[i].requires_dist;
    const std::string needed_by = queue[i].project;
    for (const auto& requirement : requirements) {
      const auto [name, spec] = name_and_specifier(requirement);
      if (name == "torch" || pinned.count(name)) continue;
      if (!projects) {
        const auto listed = pin_source_projects(base);
        projects.emplace(listed.begin(), listed.end());
      }
      std::optional<PinResult> kernel = projects->count(name) ? pin_kernel_depends(base, name, spec, needed_by) : std::nullopt;
      if (!kernel) {
        python_depends = true;
        continue;
      }
      pinned.insert(name);
      out.kernel_depends.push_back(*kernel);
      queue.push_back(std::move(*kernel));
    }
  }
  if (!python_depends) return out;
  std::vector<const PinResult*> all;
  for (const auto& k : queue) all.push_back(&k);
  out.resolution = resolve_dependencies(resolver_request(base, all, o));
  return out;
}

namespace {

std::string dependency_line(const ResolvedDependency& d) {
  std::string line = d.name + "==" + d.version + (d.marker.empty() ? "" : " ; " + d.marker);
  for (const auto& h : d.sha256) line += " --hash=sha256:" + h;
  return line;
}

}  // namespace

std::string requirements_with_dependencies(const std::string& kernels_text, const PinnedDependencies& deps, const DependencyOptions& o,
                                           const std::string& kernels_index) {
  if (deps.kernel_depends.empty() && !deps.resolution) return kernels_text;
  std::string header, index_lines, lines;
  std::vector<std::string> options;  // the index lines kwheel chose: the kernels', the dependencies'
  for (const auto& k : deps.kernel_depends) {
    header += requirements_comment("kernel-depends " + k.project + ": " + k.label.describe());
    lines += k.requirement + "\n";
  }
  if (const auto& r = deps.resolution) {
    header += requirements_comment("dependencies resolved by " + r->tool + " (" + r->command + "), for the same target; torch is the environment's: "
                                   "uv was told to exclude it (--excludes), so neither it nor what only it needs is pinned");
    if (o.deps_index && *o.deps_index != kernels_index) {
      options.push_back(std::string(kernels_index.empty() ? "--index-url " : "--extra-index-url ") + display_url(*o.deps_index));
      index_lines = options.back() + "\n";
    }
    for (const auto& d : r->dependencies) lines += dependency_line(d) + "\n";
  }
  // The header joins the comments above the index line; the lines follow the kernels'.
  std::string out;
  bool placed = false;
  for (const auto& line : split(kernels_text, '\n')) {
    if (line.empty()) continue;
    if (!placed && is_pin_index_line(line)) {
      out += header + line + "\n" + index_lines;
      placed = true;
      if (line.starts_with("--")) options.push_back(line);
      continue;
    }
    out += line + "\n";
  }
  if (!placed) out = header + index_lines + out;
  out += lines;
  check_requirements_text(out, options, "the requirements with the kernels' dependencies");
  return out;
}

namespace {

void refuse_credentials(const std::string& url) {
  if (has_userinfo(url))
    throw Error(ErrorKind::input, "pylock.toml would hold a URL with credentials (" + display_url(url) +
                                      " with its user:password@); give the index's login through netrc or keyring instead of the URL");
}

LockedPackage kernel_package(const PinResult& k, const std::string& kernels_index) {
  LockedPackage p;
  p.name = k.project;
  p.version = k.version;
  p.index = kernels_index;
  for (const auto& f : k.files) {
    LockedFile lf;
    lf.name = f.filename;
    if (f.url.find("://") == std::string::npos) lf.path = f.url;
    else lf.url = f.url;
    lf.size = f.size;
    lf.sha256 = f.sha256;
    refuse_credentials(lf.url);
    p.wheels.push_back(std::move(lf));
  }
  return p;
}

}  // namespace

std::string pylock_with_dependencies(const std::vector<PinResult>& kernels, const PinnedDependencies& deps, const std::string& kernels_index,
                                     const std::string& target) {
  refuse_credentials(kernels_index);
  std::vector<LockedPackage> packages;
  for (const auto& k : kernels) packages.push_back(kernel_package(k, kernels_index));
  for (const auto& k : deps.kernel_depends) packages.push_back(kernel_package(k, kernels_index));
  std::vector<std::string> comments{"kwheel pin: " + std::to_string(packages.size()) + " kernel(s) for " + target,
                                    "the kernels' builds are chosen by kwheel's fit rules (their local label names the torch and backend)"};
  std::string requires_python;
  if (const auto& r = deps.resolution) {
    comments.push_back("dependencies resolved by " + r->tool + " (" + r->command + " --format pylock.toml); torch is the environment's:");
    comments.push_back("uv was told to exclude it (--excludes), so neither it nor what only it needs is locked");
    for (const auto& p : r->locked) {
      refuse_credentials(p.index);
      packages.push_back(p);
    }
    requires_python = r->requires_python;
  }
  return pylock_text(comments, "kwheel", requires_python, packages);
}

json to_json(const PinnedDependencies& deps) {
  json kernels = json::array();
  for (const auto& k : deps.kernel_depends) kernels.push_back(to_json(k));
  json list = json::array();
  if (deps.resolution)
    for (const auto& d : deps.resolution->dependencies)
      list.push_back({{"name", d.name}, {"version", d.version}, {"marker", d.marker}, {"hashes", d.sha256}, {"index", d.index}});
  return json{{"kernel_depends", kernels}, {"dependencies", list}, {"resolver", deps.resolution ? json(deps.resolution->tool) : json(nullptr)}};
}

}  // namespace kwheel
