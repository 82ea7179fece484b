#include "kwheel/kernel/kernel_layout.hpp"

#include <algorithm>
#include <map>

#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/kernel/package_dir.hpp"
#include "kwheel/packaging/pep440.hpp"

namespace kwheel {

namespace {

std::string top_dir(const std::string& path) {
  auto slash = path.find('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

bool is_top_level_object(const std::string& path) {
  return path.find('/') == std::string::npos && (path.ends_with(".so") || path.ends_with(".pyd") || path.ends_with(".dylib"));
}

// kernel-builder names the extension after the id (`_<name>_<backend>_<hash>`),
// and _ops.py loads it by that name: an id no shared object carries means
// metadata.json describes another build.
void check_id(const VariantInput& v, const KernelMetadata& md) {
  if (!md.id) return;
  std::vector<std::string> objects;
  for (const auto& f : v.files)
    if (is_top_level_object(f.path)) objects.push_back(f.path);
  if (objects.empty()) return;  // noarch: no extension module
  for (const auto& o : objects)
    if (o.starts_with(*md.id + ".")) return;
  std::string list;
  for (const auto& o : objects) list += (list.empty() ? "" : ", ") + o;
  throw Error(ErrorKind::input, "variant '" + v.name + "': metadata.json id '" + *md.id + "' names no extension module here (found " + list +
                                    "); the metadata belongs to another build, rebuild the kernel");
}

// kernel-builder's compatibility directory: <pkg>/__init__.py and nothing
// else that a loader would use.
bool is_compat_dir(const VariantInput& v, const std::string& dir) {
  bool init = false;
  for (const auto& f : v.files) {
    if (top_dir(f.path) != dir || is_bytecode(f.path)) continue;
    if (f.path != dir + "/__init__.py") return false;
    init = true;
  }
  return init;
}

VariantLayout flat(const VariantInput& v, const KernelMetadata* md, const std::string& name) {
  VariantLayout out;
  out.kind = VariantLayoutKind::flat;
  if (md && md->python_name()) out.package = *md->python_name();
  else if (!name.empty()) out.package = wheel_name_component(name);
  else
    throw Error(ErrorKind::input, "variant '" + v.name + "' is flat (its __init__.py is at the top) but has no metadata.json naming the kernel; "
                                  "add kernel-builder's metadata.json or pass --name");
  const bool compat = is_compat_dir(v, out.package);
  if (compat) out.kind = VariantLayoutKind::compat;
  for (const auto& f : v.files) {
    if (is_bytecode(f.path) || (compat && top_dir(f.path) == out.package)) out.left_out.push_back(f.path);
    else out.members.push_back({out.package + "/" + f.path, &f});
  }
  return out;
}

std::string nested_package(const VariantInput& v, const KernelMetadata* md, const std::string& fallback) {
  TopLevelDirs tops;
  for (const auto& f : v.files) tops.add(f.path);
  if (md && md->python_name()) {
    if (tops.dirs.count(*md->python_name())) return *md->python_name();
    if (!tops.packages.empty())
      throw Error(ErrorKind::input, "variant '" + v.name + "': metadata.json names the kernel '" + *md->name + "' but its package directory is '" +
                                        *tops.packages.begin() + "/'; the metadata belongs to another kernel, rebuild it");
  }
  if (auto package = pick_package_dir(tops, fallback, NamedDirectory::any)) return *package;
  const std::string expected = wheel_name_component(fallback);
  std::string found;
  for (const auto& d : tops.dirs) found += (found.empty() ? "" : ", ") + d + "/";
  throw Error(ErrorKind::input, "variant '" + v.name + "': no package directory '" + expected + "/'" +
                                    (found.empty() ? std::string(" and no __init__.py at its top") : " (found " + found + ")") +
                                    "; pass --name to choose the package");
}

// A nested package's own metadata.json (or bundle) beside the variant's:
// the wheel would carry the package's, so it must be the variant's bytes.
void check_same_copy(const VariantInput& v, const RepoFile& top, const RepoFile& packaged) {
  const std::string where = "variant '" + v.name + "'";
  if (top.size == packaged.size && read_small_file(top.source, 1 << 20, where + ": " + top.path) ==
                                       read_small_file(packaged.source, 1 << 20, where + ": " + packaged.path))
    return;
  throw Error(ErrorKind::input, where + ": '" + packaged.path + "' differs from the variant's '" + top.path +
                                    "', so the wheel would carry bytes the build did not verify; rebuild the kernel with a current kernel-builder");
}

VariantLayout nested(const VariantInput& v, const KernelMetadata* md, const std::string& fallback) {
  VariantLayout out;
  out.kind = VariantLayoutKind::nested;
  out.package = nested_package(v, md, fallback);
  const std::string prefix = out.package + "/";
  std::map<std::string, const RepoFile*> by_path;
  for (const auto& f : v.files) by_path[f.path] = &f;
  for (const auto& f : v.files) {
    if (f.path.starts_with(prefix) && !is_bytecode(f.path)) out.members.push_back({f.path, &f});
    // The variant's metadata.json and its signature travel inside the
    // package, where a tool reading site-packages finds and re-verifies them
    // (flat layouts put them there anyway). A package with its own copy
    // must hold the very bytes the build verified.
    else if (f.path == "metadata.json" || f.path == "metadata.json.sigstore") {
      auto own = by_path.find(prefix + f.path);
      if (own == by_path.end()) out.members.push_back({prefix + f.path, &f});
      else check_same_copy(v, f, *own->second);
    } else out.left_out.push_back(f.path);
  }
  return out;
}

}  // namespace

bool is_bytecode(std::string_view path) {
  return path.ends_with(".pyc") || path.starts_with("__pycache__/") || path.find("/__pycache__/") != std::string_view::npos;
}

const char* layout_name(VariantLayoutKind kind) {
  switch (kind) {
    case VariantLayoutKind::nested: return "nested";
    case VariantLayoutKind::compat: return "flat+compat";
    case VariantLayoutKind::flat: return "flat";
  }
  return "?";
}

const RepoFile* find_metadata(const VariantInput& variant) {
  for (const auto& f : variant.files)
    if (f.path == "metadata.json") return &f;
  return nullptr;
}

VariantLayout lay_out_variant(const VariantInput& v, const KernelMetadata* md, const std::string& name, const std::string& fallback) {
  const bool is_flat = std::any_of(v.files.begin(), v.files.end(), [](const RepoFile& f) { return f.path == "__init__.py"; });
  if (md && is_flat) check_id(v, *md);
  VariantLayout out = is_flat ? flat(v, md, name) : nested(v, md, name.empty() ? fallback : name);
  if (auto why = reserved_wheel_path_reason(out.package); !why.empty())
    throw Error(ErrorKind::input, "variant '" + v.name + "': package directory '" + out.package + "/': " + why + "; rename the package directory");
  out.metadata = find_metadata(v);
  return out;
}

}  // namespace kwheel
