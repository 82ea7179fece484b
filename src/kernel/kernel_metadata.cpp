#include "kwheel/kernel/kernel_metadata.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "kwheel/base/embedded_data.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/hf_config.hpp"
#include "kwheel/packaging/pep440.hpp"

namespace kwheel {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// metadata.json nests three levels; a hostile file nesting thousands would
// only cost stack and memory in the parser.
constexpr int kMaxDepth = 32;

bool nesting_within(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

class Fields {
 public:
  Fields(const json& object, const std::string& where) : j_(object), where_(where) {}

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    throw Error(ErrorKind::input, where_ + ": metadata.json field '" + key + "' " + why + "; rebuild the kernel with a current kernel-builder");
  }
  const json* get(const std::string& key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  // Every string of metadata.json may reach METADATA, a page, a file name
  // or a terminal: none carries a control character or invalid UTF-8.
  std::string text(const json& v, const std::string& key) const {
    std::string s = v.get<std::string>();
    if (const size_t at = unprintable_at(s); at != std::string::npos)
      fail(key, "holds byte " + hex_offset(static_cast<unsigned char>(s[at])) + " at offset " + std::to_string(at) +
                    ", a control character or not UTF-8; its text must be printable");
    return s;
  }
  std::optional<std::string> string(const std::string& key) const {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(key, "must be a string, not " + std::string(v->type_name()));
    return text(*v, key);
  }
  std::optional<uint64_t> count(const std::string& key) const {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number_unsigned() || v->get<uint64_t>() > kMaxKernelVersion)
      fail(key, "must be an integer from 0 to " + std::to_string(kMaxKernelVersion) + ", not " + v->dump().substr(0, 40));
    return v->get<uint64_t>();
  }
  std::vector<std::string> strings(const std::string& key) const {
    const json* v = get(key);
    if (!v) return {};
    return string_list(*v, key);
  }
  std::vector<std::string> string_list(const json& v, const std::string& key) const {
    if (!v.is_array()) fail(key, "must be a list of strings, not " + std::string(v.type_name()));
    std::vector<std::string> out;
    for (const auto& e : v) {
      if (!e.is_string()) fail(key, "must be a list of strings; it holds " + std::string(e.type_name()));
      out.push_back(text(e, key));
    }
    return out;
  }
  const json* object(const std::string& key) const {
    const json* v = get(key);
    if (v && !v->is_object()) fail(key, "must be an object, not " + std::string(v->type_name()));
    return v;
  }

 private:
  const json& j_;
  std::string where_;
};

// A git branch, tag or commit as a dependency may name one: no spaces,
// controls or "..", as git's own ref rules; a bounded length.
bool is_revision_name(std::string_view r) {
  if (r.empty() || r.size() > 255 || r.find("..") != std::string_view::npos) return false;
  return std::all_of(r.begin(), r.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '/'; }) &&
         std::isalnum(static_cast<unsigned char>(r.front()));
}

KernelDependency parse_dependency(const json& e, const Fields& f) {
  if (!e.is_object()) f.fail("kernel-depends", "must be a list of {repo-id, version|revision} objects");
  KernelDependency dep;
  auto repo = e.find("repo-id");
  if (repo == e.end() || !repo->is_string()) f.fail("kernel-depends", "has an entry without a string 'repo-id'");
  dep.repo_id = f.text(*repo, "kernel-depends");
  // The id names a wheel in Requires-Dist: only the Hub's own id grammar
  // may get there, never a URL, a marker or an extra.
  if (!looks_like_repo_id(dep.repo_id))
    f.fail("kernel-depends", "entry '" + dep.repo_id + "' is not a Hub repo id (ORG/NAME of letters, digits, '.', '_' and '-')");
  auto v = e.find("version");
  auto r = e.find("revision");
  const bool has_v = v != e.end() && !v->is_null(), has_r = r != e.end() && !r->is_null();
  if (has_v == has_r) f.fail("kernel-depends", "entry '" + dep.repo_id + "' needs exactly one of 'version' and 'revision'");
  if (has_v) {
    if (!v->is_number_unsigned() || v->get<uint64_t>() > kMaxKernelVersion)
      f.fail("kernel-depends", "entry '" + dep.repo_id + "' has a version that is not an integer from 0 to " + std::to_string(kMaxKernelVersion));
    dep.version = v->get<uint64_t>();
  } else {
    if (!r->is_string()) f.fail("kernel-depends", "entry '" + dep.repo_id + "' has a revision that is not a string");
    dep.revision = f.text(*r, "kernel-depends");
    if (!is_revision_name(*dep.revision))
      f.fail("kernel-depends", "entry '" + dep.repo_id + "' has revision '" + *dep.revision + "', which is not a branch, tag or commit name");
  }
  return dep;
}

KernelDigest parse_digest(const json& d, const Fields& f) {
  KernelDigest digest;
  auto alg = d.find("algorithm");
  if (alg == d.end() || !alg->is_string()) f.fail("digest", "needs a string 'algorithm'");
  digest.algorithm = f.text(*alg, "digest");
  if (digest.algorithm != "sha256" && digest.algorithm != "sha512")
    f.fail("digest", "has algorithm '" + digest.algorithm + "'; kernels knows sha256 and sha512");
  auto files = d.find("files");
  if (files == d.end() || !files->is_object()) f.fail("digest", "needs a 'files' object {path: base64 hash}");
  for (const auto& [path, hash] : files->items()) {
    if (!hash.is_string()) f.fail("digest", "has a non-string hash for '" + path + "'");
    if (unprintable_at(path) != std::string::npos) f.fail("digest", "names a file '" + path + "' with a control character or invalid UTF-8");
    digest.files[path] = f.text(hash, "digest");
  }
  return digest;
}

void parse_backend(const json& b, const Fields& f, KernelMetadata& md) {
  auto type = b.find("type");
  if (type == b.end() || !type->is_string()) f.fail("backend", "needs a string 'type' (cuda, cpu, ...)");
  md.backend = f.text(*type, "backend");
  auto archs = b.find("archs");
  if (archs != b.end() && !archs->is_null()) md.archs = f.string_list(*archs, "backend.archs");
}

}  // namespace

json to_json(const KernelMetadata& md) {
  json j = json::object();
  auto opt = [&](const char* key, const auto& v) { if (v) j[key] = *v; };
  opt("name", md.name);
  opt("id", md.id);
  opt("version", md.version);
  opt("license", md.license);
  opt("upstream", md.upstream);
  opt("source", md.source);
  opt("backend", md.backend);
  j["archs"] = md.archs;
  j["python_depends"] = md.python_depends;
  json deps = json::array();
  for (const auto& d : md.kernel_depends) {
    json e{{"repo_id", d.repo_id}};
    if (d.version) e["version"] = *d.version;
    if (d.revision) e["revision"] = *d.revision;
    deps.push_back(e);
  }
  j["kernel_depends"] = deps;
  j["digest"] = md.digest ? json(md.digest->algorithm) : json(nullptr);
  return j;
}

bool is_valid_kernel_name(std::string_view name) {
  if (name.size() < 2 || !(name.front() >= 'a' && name.front() <= 'z')) return false;
  if (name.back() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

std::optional<std::string> KernelMetadata::python_name() const {
  if (!name) return std::nullopt;
  std::string out = *name;
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

KernelMetadata parse_kernel_metadata(std::string_view text, const std::string& where) {
  const std::string fix = "; rebuild the kernel with a current kernel-builder";
  if (text.size() > kMaxKernelMetadataBytes)
    throw Error(ErrorKind::input, where + ": metadata.json is " + std::to_string(text.size()) + " bytes, over the 1 MiB limit" + fix);
  if (!nesting_within(text, kMaxDepth))
    throw Error(ErrorKind::input, where + ": metadata.json nests deeper than " + std::to_string(kMaxDepth) + " levels" + fix);
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error(ErrorKind::input, where + ": metadata.json is not valid JSON" + fix);
  if (!j.is_object()) throw Error(ErrorKind::input, where + ": metadata.json must hold a JSON object, not " + std::string(j.type_name()) + fix);
  Fields f(j, where);
  KernelMetadata md;
  md.name = f.string("name");
  if (md.name && !is_valid_kernel_name(*md.name))
    f.fail("name", "is '" + *md.name + "'; kernel names are lowercase letters, digits and '-' (e.g. my-kernel)");
  md.id = f.string("id");
  md.version = f.count("version");
  md.license = f.string("license");
  md.upstream = f.string("upstream");
  md.source = f.string("source");
  md.python_depends = f.strings("python-depends");
  if (const json* pdb = f.object("python-depends-backends"))
    for (const auto& [backend, list] : pdb->items()) md.python_depends_backends[backend] = f.string_list(list, "python-depends-backends." + backend);
  if (const json* kd = f.get("kernel-depends")) {
    if (!kd->is_array()) f.fail("kernel-depends", "must be a list");
    for (const auto& e : *kd) md.kernel_depends.push_back(parse_dependency(e, f));
  }
  if (const json* b = f.object("backend")) parse_backend(*b, f, md);
  if (const json* d = f.object("digest")) md.digest = parse_digest(*d, f);
  return md;
}

KernelMetadata read_kernel_metadata(const fs::path& file, const std::string& where) {
  return parse_kernel_metadata(read_kernel_metadata_text(file, where), where);
}

std::string read_kernel_metadata_text(const fs::path& file, const std::string& where) {
  return read_small_file(file, kMaxKernelMetadataBytes, where + ": metadata.json", "rebuild the kernel with a current kernel-builder");
}

namespace {

const json& depends_policy() {
  static const json policy = json::parse(embedded_data("python_depends"));
  return policy;
}

void add_mapped(const json& table, std::vector<std::string>& out) {
  for (const auto& p : table.value("python", json::array()))
    if (p.contains("pkg") && p["pkg"].is_string()) out.push_back(p["pkg"].get<std::string>());
}

std::string known_names(const std::string& backend) {
  std::set<std::string> names;
  const json& policy = depends_policy();
  for (const auto& [n, _] : policy["general"].items()) names.insert(n);
  if (policy["backends"].contains(backend))
    for (const auto& [n, _] : policy["backends"][backend].items()) names.insert(n);
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

std::vector<std::string> python_requirements(const KernelMetadata& md, const std::string& backend, const std::string& where) {
  std::vector<std::string> deps = md.python_depends;
  if (auto it = md.python_depends_backends.find(backend); it != md.python_depends_backends.end())
    deps.insert(deps.end(), it->second.begin(), it->second.end());
  const json& policy = depends_policy();
  const json& general = policy["general"];
  const json empty = json::object();
  const json& for_backend = policy["backends"].contains(backend) ? policy["backends"][backend] : empty;
  std::vector<std::string> out;
  for (const auto& d : deps) {
    if (general.contains(d)) add_mapped(general[d], out);
    else if (for_backend.contains(d)) add_mapped(for_backend[d], out);
    else
      throw Error(ErrorKind::input, where + ": metadata.json python-depends names '" + d + "', which kernels 0.17 does not know for the " + backend +
                                        " backend (known: " + known_names(backend) + "); fix the kernel's build.toml and rebuild it");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> kernel_requirements(const KernelMetadata& md, std::string_view name_prefix) {
  std::vector<std::string> out;
  for (const auto& d : md.kernel_depends) {
    // repo_id passed looks_like_repo_id, and a prefix is_valid_name_prefix:
    // the normalised name can only be a PEP 508 name.
    const std::string name = normalize_name(std::string(name_prefix) + d.repo_id.substr(d.repo_id.find('/') + 1));
    if (d.version) out.push_back(name + ">=" + std::to_string(*d.version) + ",<" + std::to_string(*d.version + 1));
    else out.push_back(name);
  }
  return out;
}

bool is_valid_name_prefix(std::string_view prefix) {
  return !prefix.empty() && prefix.size() <= 64 && std::isalnum(static_cast<unsigned char>(prefix.front())) &&
         std::all_of(prefix.begin(), prefix.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; });
}

namespace {

// RFC 3986's characters (unreserved, reserved, '%'): a URL that needs
// anything else is not one a Project-URL should carry.
bool is_uri_text(std::string_view u) {
  static constexpr std::string_view kAllowed = "-._~:/?#[]@!$&'()*+,;=%";
  return !u.empty() && u.size() <= 2048 && std::all_of(u.begin(), u.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kAllowed.find(c) != std::string_view::npos;
  });
}

std::optional<std::string> browsable_form(std::string_view url) {
  std::string u(url);
  if (u.starts_with("git+")) u = u.substr(4);
  if (u.starts_with("https://") || u.starts_with("http://")) return u;
  std::string host_path;
  if (u.starts_with("ssh://") || u.starts_with("git://")) {
    host_path = u.substr(u.find("://") + 3);
    if (auto at = host_path.find('@'); at != std::string::npos && at < host_path.find('/')) host_path = host_path.substr(at + 1);
  } else if (auto colon = u.find(':'); colon != std::string::npos && u.find("://") == std::string::npos) {
    std::string host = u.substr(0, colon);  // scp-like: git@github.com:org/repo.git
    if (auto at = host.find('@'); at != std::string::npos) host = host.substr(at + 1);
    host_path = host + "/" + u.substr(colon + 1);
  } else {
    return std::nullopt;
  }
  if (host_path.empty() || host_path.find_first_of(" \t\r\n") != std::string::npos) return std::nullopt;
  return "https://" + host_path;
}

}  // namespace

std::optional<std::string> browsable_url(std::string_view url) {
  auto out = browsable_form(url);
  if (!out || !is_uri_text(*out)) return std::nullopt;
  return out;
}

}  // namespace kwheel
