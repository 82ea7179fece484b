#include "kwheel/evidence/manylinux_policy.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
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

std::pair<std::string, std::string> soname_family(std::string_view soname) {
  // The version is what follows the last ".so" when that is all dots and digits.
  for (std::size_t at = soname.rfind(".so"); at != std::string_view::npos; at = at == 0 ? std::string_view::npos : soname.rfind(".so", at - 1)) {
    const std::string_view tail = soname.substr(at + 3);
    if (tail.empty()) return {std::string(soname), ""};
    if (tail.front() != '.' || tail.size() < 2) continue;
    const std::string_view v = tail.substr(1);
    if (v.find_first_not_of("0123456789.") == std::string_view::npos && v.front() != '.' && v.back() != '.')
      return {std::string(soname.substr(0, at + 3)), std::string(v)};
  }
  return {std::string(soname), ""};
}

namespace {

int leading_int(const std::string& v) {
  int n = 0;
  std::from_chars(v.data(), v.data() + v.size(), n);
  return n;
}

std::string join_list(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string out;
  for (const std::string& i : items) out.append(out.empty() ? "" : sep).append(i);
  return out;
}

bool any_backend(const TorchTarget& t) { return t.backend.empty() || t.backend == "any"; }
bool cuda_backend(const TorchTarget& t) { return any_backend(t) || t.backend == "cuda"; }

std::string torch_words(const TorchTarget& t) {
  std::string out = "torch " + t.torch_minor;
  if (t.backend == "cuda" && t.backend_major > 0) out.append(" with CUDA ").append(std::to_string(t.backend_major));
  if (t.backend == "rocm" && t.backend_major > 0) out.append(" with ROCm ").append(std::to_string(t.backend_major));
  return out;
}

TorchVerdict provided(std::string reason) { return {TorchVerdict::Kind::provided, std::move(reason)}; }
TorchVerdict mismatch(std::string reason) { return {TorchVerdict::Kind::mismatch, std::move(reason)}; }

TorchWheel parse_wheel(const json& e, std::string_view origin) {
  TorchWheel w;
  w.minor = e.at("minor").get<std::string>();
  w.version = e.at("version").get<std::string>();
  w.wheel = e.at("wheel").get<std::string>();
  w.sha256 = e.at("sha256").get<std::string>();
  w.cuda = e.at("cuda").get<std::string>();
  w.cuda_major = leading_int(w.cuda);
  if (w.cuda_major <= 0) bad(origin, "torch " + w.minor + " has no CUDA version");
  const json& libs = e.at("torch_lib");
  for (auto& l : string_list(libs.at("any"), origin, "torch " + w.minor + " torch_lib.any")) w.libs_any.insert(std::move(l));
  for (auto& l : string_list(libs.at("cuda"), origin, "torch " + w.minor + " torch_lib.cuda")) w.libs_cuda.insert(std::move(l));
  return w;
}

CudaSonames parse_cuda(const json& e, std::string_view origin) {
  CudaSonames c;
  c.major = e.at("major").get<int>();
  for (const json& p : e.at("packages")) {
    const std::string from = p.at("name").get<std::string>() + " " + p.at("version").get<std::string>();
    for (auto& so : string_list(p.at("sonames"), origin, "CUDA " + std::to_string(c.major) + " " + from)) c.package_of.emplace(std::move(so), from);
  }
  if (c.package_of.empty()) bad(origin, "CUDA " + std::to_string(c.major) + " lists no sonames");
  return c;
}

}  // namespace

TorchProvided TorchProvided::parse(std::string_view json_text, std::string_view origin) {
  const json doc = parse_json(json_text, origin);
  TorchProvided out;
  try {
    for (const json& e : doc.at("libraries")) {
      TorchProvidedLib lib;
      lib.pattern = e.at("pattern").get<std::string>();
      lib.backends = string_list(e.at("backends"), origin, lib.pattern + " backends");
      lib.reason = e.at("reason").get<std::string>();
      lib.fallback = e.value("fallback", false);
      if (lib.reason.empty()) bad(origin, lib.pattern + " has no reason");
      out.libs_.push_back(std::move(lib));
    }
    // Files before the wheel data (hand-written patterns only) stay readable.
    if (doc.contains("torch")) {
      for (const json& e : doc.at("torch")) out.wheels_.push_back(parse_wheel(e, origin));
    }
    if (doc.contains("cuda")) {
      for (const json& e : doc.at("cuda")) out.cuda_.push_back(parse_cuda(e, origin));
    }
    if (doc.contains("rocm")) out.rocm_rule_ = doc.at("rocm").at("rule").get<std::string>();
  } catch (const json::exception& e) {
    bad(origin, std::string("malformed torch-provided entry: ") + e.what());
  }
  for (const TorchWheel& w : out.wheels_) {
    if (out.cuda_for(w.cuda_major) == nullptr) bad(origin, "torch " + w.minor + " is a CUDA " + w.cuda + " build but no \"cuda\" entry has major " + std::to_string(w.cuda_major));
  }
  return out;
}

TorchProvided TorchProvided::load(const std::filesystem::path& path) { return parse(read_text(path), path.string()); }

const TorchProvided& TorchProvided::builtin() {
  static const TorchProvided set = parse(manylinux_data::torch_provided_json(), "built-in manylinux/torch-provided.json");
  return set;
}

const TorchWheel* TorchProvided::wheel_for(std::string_view minor) const {
  for (const TorchWheel& w : wheels_)
    if (w.minor == minor) return &w;
  return nullptr;
}

const CudaSonames* TorchProvided::cuda_for(int major) const {
  for (const CudaSonames& c : cuda_)
    if (c.major == major) return &c;
  return nullptr;
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

TorchVerdict TorchProvided::judge(std::string_view soname, const TorchTarget& target) const {
  const std::string s(soname);
  if (TorchVerdict v = judge_torch_lib(s, target); v.kind != TorchVerdict::Kind::absent) return v;
  if (cuda_backend(target)) {
    if (TorchVerdict v = judge_cuda(s, target); v.kind != TorchVerdict::Kind::absent) return v;
  }
  if (any_backend(target) || target.backend == "rocm") {
    if (TorchVerdict v = judge_rocm(s, target); v.kind != TorchVerdict::Kind::absent) return v;
  }
  return judge_patterns(s, target, !target.torch_minor.empty() && wheel_for(target.torch_minor) != nullptr);
}

// torch/lib of the target's torch minor, read from its PyPI wheel; with no
// minor given, any covered wheel's.
TorchVerdict TorchProvided::judge_torch_lib(const std::string& soname, const TorchTarget& t) const {
  // Distribution builds of torch (Debian, conda) version the sonames of the
  // same libraries (libtorch_cpu.so.1.13): judged as the wheel's name.
  const size_t versioned = soname.find(".so.");
  const std::string unversioned = versioned == std::string::npos ? soname : soname.substr(0, versioned + 3);
  auto in = [&](const TorchWheel& w, const std::string& name) { return w.libs_any.count(name) != 0 || (cuda_backend(t) && w.libs_cuda.count(name) != 0); };
  auto has = [&](const TorchWheel& w) { return in(w, soname) || in(w, unversioned); };
  const std::string& s = soname;
  if (t.torch_minor.empty()) {
    for (const TorchWheel& w : wheels_)
      if (has(w)) return provided("torch/lib of " + w.wheel + " (and other torch wheels)");
    return {};
  }
  const TorchWheel* w = wheel_for(t.torch_minor);
  if (w == nullptr) return {};
  if (has(*w)) return provided("torch/lib of " + w->wheel);
  std::vector<std::string> others;
  for (const TorchWheel& o : wheels_)
    if (has(o)) others.push_back(o.minor);
  if (others.empty()) return {};
  return mismatch("torch " + t.torch_minor + " ships no " + s + " (torch/lib of " + w->wheel + "); torch " + join_list(others) +
                  " do: build it for one of those torch versions or drop the dependency");
}

// The nvidia-* wheels torch pins, per CUDA major; for a major the data does
// not cover, libraries whose soname major has followed CUDA's in every
// covered major (libcudart, libcublas, libnvrtc, ...) must carry that major.
TorchVerdict TorchProvided::judge_cuda(const std::string& s, const TorchTarget& t) const {
  if (t.backend_major <= 0 || any_backend(t)) {
    for (const CudaSonames& c : cuda_) {
      if (auto it = c.package_of.find(s); it != c.package_of.end())
        return provided(it->second + " wheel, pinned by torch's CUDA " + std::to_string(c.major) + " builds");
    }
    return {};
  }
  const auto [family, version] = soname_family(s);
  std::vector<std::string> same_family;     // in the target's CUDA major
  std::vector<int> majors_with_it;          // covered CUDA majors that provide s itself
  bool tracks_cuda = true, family_known = false;
  for (const CudaSonames& c : cuda_) {
    for (const auto& [so, from] : c.package_of) {
      const auto [f, v] = soname_family(so);
      if (f != family) continue;
      family_known = true;
      tracks_cuda = tracks_cuda && leading_int(v) == c.major;
      if (c.major == t.backend_major) same_family.push_back(so);
    }
    if (c.package_of.count(s) != 0) majors_with_it.push_back(c.major);
  }
  const std::string cuda = std::to_string(t.backend_major);
  if (const CudaSonames* c = cuda_for(t.backend_major)) {
    if (auto it = c->package_of.find(s); it != c->package_of.end())
      return provided(it->second + " wheel, pinned by torch's CUDA " + cuda + " builds");
    if (same_family.empty()) return {};
    std::string fix = "rebuild it against CUDA " + cuda;
    if (!majors_with_it.empty()) fix.append(" or put it in a cu").append(std::to_string(majors_with_it.front())).append("x variant");
    return mismatch(torch_words(t) + " provides " + join_list(same_family) + " (" + c->package_of.at(same_family.front()) + "), not " + s + "; " + fix);
  }
  if (!family_known) return {};
  if (!tracks_cuda) {
    if (!majors_with_it.empty()) return provided("a CUDA " + std::to_string(majors_with_it.front()) + " nvidia wheel's soname; CUDA " + cuda + " is not in the data, whose majors for " + family + " do not follow CUDA's");
    return {};
  }
  const std::string want = family + "." + cuda;
  if (leading_int(version) == t.backend_major) return provided("CUDA " + cuda + "'s " + family + " (rule: its soname major follows CUDA's in every covered CUDA major)");
  return mismatch(torch_words(t) + " provides " + want + " (rule: " + family + "'s soname major follows CUDA's), not " + s +
                  "; rebuild it against CUDA " + cuda + (version.empty() ? "" : " or put it in a cu" + std::to_string(leading_int(version)) + "x variant"));
}

// ROCm torch wheels are not on PyPI, so only the HIP runtime's major is
// checked, by rule: libamdhip64.so.N ships with ROCm N.
TorchVerdict TorchProvided::judge_rocm(const std::string& s, const TorchTarget& t) const {
  const auto [family, version] = soname_family(s);
  if (family != "libamdhip64.so" || version.empty() || t.backend_major <= 0 || any_backend(t)) return {};
  const std::string rocm = std::to_string(t.backend_major);
  if (leading_int(version) == t.backend_major) return provided("bundled in torch/lib of ROCm " + rocm + " torch wheels (" + rocm_rule_ + ")");
  return mismatch(torch_words(t) + " provides libamdhip64.so." + rocm + " (" + rocm_rule_ + "), not " + s + "; rebuild it against ROCm " +
                  rocm + " or put it in a rocm" + std::to_string(leading_int(version)) + "x variant");
}

TorchVerdict TorchProvided::judge_patterns(const std::string& s, const TorchTarget& t, bool covered) const {
  for (const TorchProvidedLib& lib : libs_) {
    if (lib.fallback && covered) continue;
    const bool backend_ok = any_backend(t) || std::any_of(lib.backends.begin(), lib.backends.end(),
                                                         [&](const std::string& b) { return b == "any" || b == t.backend; });
    if (backend_ok && ::fnmatch(lib.pattern.c_str(), s.c_str(), 0) == 0) return provided(lib.reason);
  }
  return {};
}

std::vector<std::string> TorchProvided::coverage_gaps(const TorchTarget& t) const {
  std::vector<std::string> out;
  std::vector<std::string> minors, majors;
  for (const TorchWheel& w : wheels_) minors.push_back(w.minor);
  for (const CudaSonames& c : cuda_) majors.push_back(std::to_string(c.major));
  if (!t.torch_minor.empty() && wheel_for(t.torch_minor) == nullptr)
    out.push_back("manylinux/torch-provided.json covers torch " + join_list(minors) + ", not " + t.torch_minor +
                  ": torch's own libraries are judged by name patterns; run scripts/update-torch-provided");
  if (t.backend == "cuda" && t.backend_major > 0 && cuda_for(t.backend_major) == nullptr)
    out.push_back("manylinux/torch-provided.json covers CUDA " + join_list(majors) + ", not " + std::to_string(t.backend_major) +
                  ": CUDA libraries are judged by the rule that a soname major which followed CUDA's still does");
  return out;
}

}  // namespace kwheel
