#include "kwheel/evidence/manylinux_policy.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kwheel/base/error.hpp"
#include "kwheel/evidence/manylinux_data.hpp"

namespace kwheel {
namespace {

using nlohmann::json;

[[noreturn]] void bad(std::string_view origin, const std::string& what) {
  throw Error(ErrorKind::input, std::string(origin) + ": " + what);
}

json parse_json(std::string_view text, std::string_view origin) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    bad(origin, std::string("not valid JSON: ") + e.what());
  }
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, path.string() + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> string_list(const json& j, std::string_view origin, const std::string& what) {
  if (!j.is_array()) bad(origin, what + " is not a list");
  std::vector<std::string> out;
  for (const json& s : j) {
    if (!s.is_string()) bad(origin, what + " has a non-string entry");
    out.push_back(s.get<std::string>());
  }
  return out;
}

}  // namespace

PolicySet PolicySet::parse(std::string_view json_text, std::string_view origin) {
  const json doc = parse_json(json_text, origin);
  // Accept both our normalised file and auditwheel's bare list, so a newer
  // auditwheel policy file can be tried as-is.
  const json* list = &doc;
  PolicySet set;
  if (doc.is_object()) {
    if (!doc.contains("policies")) bad(origin, "has no \"policies\" list");
    list = &doc.at("policies");
    set.source_ = doc.value("source", std::string(origin));
  } else {
    set.source_ = std::string(origin);
  }
  if (!list->is_array()) bad(origin, "\"policies\" is not a list");
  try {
    for (const json& p : *list) {
      ManylinuxPolicy policy;
      policy.name = p.at("name").get<std::string>();
      policy.aliases = string_list(p.at("aliases"), origin, policy.name + " aliases");
      policy.priority = p.at("priority").get<int>();
      for (const auto& [arch, families] : p.at("symbol_versions").items()) {
        auto& out = policy.symbol_versions[arch];
        for (const auto& [family, versions] : families.items()) {
          auto& set_out = out[family];
          // auditwheel compares "GLIBC_2.17" against {family + "_" + v}.
          for (const auto& v : string_list(versions, origin, policy.name + " " + family)) set_out.insert(family + "_" + v);
        }
      }
      for (auto& lib : string_list(p.at("lib_whitelist"), origin, policy.name + " lib_whitelist")) {
        policy.lib_whitelist.insert(std::move(lib));
      }
      for (const auto& [lib, symbols] : p.at("blacklist").items()) {
        for (auto& s : string_list(symbols, origin, policy.name + " blacklist")) policy.blacklist[lib].insert(std::move(s));
      }
      set.policies_.push_back(std::move(policy));
    }
  } catch (const json::exception& e) {
    bad(origin, std::string("malformed policy entry: ") + e.what());
  }
  if (std::none_of(set.policies_.begin(), set.policies_.end(), [](const auto& p) { return !p.is_manylinux(); })) {
    bad(origin, "has no \"linux\" base policy");
  }
  std::stable_sort(set.policies_.begin(), set.policies_.end(),
                   [](const ManylinuxPolicy& a, const ManylinuxPolicy& b) { return a.priority > b.priority; });
  return set;
}

PolicySet PolicySet::load(const std::filesystem::path& path) { return parse(read_text(path), path.string()); }

const PolicySet& PolicySet::builtin() {
  static const PolicySet set = parse(manylinux_data::policy_json(), "built-in manylinux/policy.json");
  return set;
}

std::vector<const ManylinuxPolicy*> PolicySet::for_arch(std::string_view arch) const {
  std::vector<const ManylinuxPolicy*> out;
  const ManylinuxPolicy* linux_policy = nullptr;
  for (const ManylinuxPolicy& p : policies_) {
    if (!p.is_manylinux()) {
      linux_policy = &p;
    } else if (p.symbol_versions.count(std::string(arch)) != 0) {
      out.push_back(&p);
    }
  }
  if (out.empty()) return out;
  out.push_back(linux_policy);
  return out;
}

const ManylinuxPolicy* PolicySet::find(std::string_view name, std::string_view arch) const {
  std::string bare(name);
  const std::string suffix = "_" + std::string(arch);
  if (bare.size() > suffix.size() && bare.compare(bare.size() - suffix.size(), suffix.size(), suffix) == 0) {
    bare.resize(bare.size() - suffix.size());
  }
  for (const ManylinuxPolicy* p : for_arch(arch)) {
    if (p->name == bare || std::find(p->aliases.begin(), p->aliases.end(), bare) != p->aliases.end()) return p;
  }
  return nullptr;
}

std::set<std::string> PolicySet::architectures() const {
  std::set<std::string> out;
  for (const ManylinuxPolicy& p : policies_) {
    for (const auto& [arch, _] : p.symbol_versions) out.insert(arch);
  }
  return out;
}

std::string compressed_platform_tag(const ManylinuxPolicy& policy, std::string_view arch) {
  std::vector<std::string> tags{policy.tag(arch)};
  for (const std::string& alias : policy.aliases) tags.push_back(alias + "_" + std::string(arch));
  std::sort(tags.begin(), tags.end());
  std::string out;
  for (const std::string& t : tags) out += (out.empty() ? "" : ".") + t;
  return out;
}

TorchProvided TorchProvided::parse(std::string_view json_text, std::string_view origin) {
  const json doc = parse_json(json_text, origin);
  TorchProvided out;
  try {
    for (const json& e : doc.at("libraries")) {
      TorchProvidedLib lib;
      lib.pattern = e.at("pattern").get<std::string>();
      lib.backends = string_list(e.at("backends"), origin, lib.pattern + " backends");
      lib.reason = e.at("reason").get<std::string>();
      if (lib.reason.empty()) bad(origin, lib.pattern + " has no reason");
      out.libs_.push_back(std::move(lib));
    }
  } catch (const json::exception& e) {
    bad(origin, std::string("malformed torch-provided entry: ") + e.what());
  }
  return out;
}

TorchProvided TorchProvided::load(const std::filesystem::path& path) { return parse(read_text(path), path.string()); }

const TorchProvided& TorchProvided::builtin() {
  static const TorchProvided set = parse(manylinux_data::torch_provided_json(), "built-in manylinux/torch-provided.json");
  return set;
}

const TorchProvidedLib* TorchProvided::match(std::string_view soname, std::string_view backend) const {
  const std::string name(soname);
  for (const TorchProvidedLib& lib : libs_) {
    const bool backend_ok =
        backend.empty() || backend == "any" ||
        std::any_of(lib.backends.begin(), lib.backends.end(), [&](const std::string& b) { return b == "any" || b == backend; });
    if (backend_ok && ::fnmatch(lib.pattern.c_str(), name.c_str(), 0) == 0) return &lib;
  }
  return nullptr;
}

}  // namespace kwheel
