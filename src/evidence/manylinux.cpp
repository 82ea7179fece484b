#include "kwheel/evidence/manylinux.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "kwheel/base/error.hpp"

namespace kwheel {
namespace {

// The dynamic loader is never a dependency to judge (auditwheel skips it in
// both DT_NEEDED and version needs).
bool is_loader(const std::string& soname) {
  return soname.find("ld-linux") != std::string::npos || soname == "ld64.so.1" || soname == "ld64.so.2";
}

std::string basename_of(const std::string& path) { return std::filesystem::path(path).filename().string(); }

bool all_numeric(const std::string& v) {
  if (v.empty()) return false;
  bool digit_seen = false;
  for (char c : v) {
    if (c == '.') {
      if (!digit_seen) return false;
      digit_seen = false;
    } else if (c >= '0' && c <= '9') {
      digit_seen = true;
    } else {
      return false;
    }
  }
  return digit_seen;
}

// Families in the order a reader cares about them.
int family_rank(const std::string& family) {
  static const char* order[] = {"GLIBC", "GLIBCXX", "CXXABI", "GCC", "LIBATOMIC", "ZLIB"};
  for (int i = 0; i < 6; ++i) {
    if (family == order[i]) return i;
  }
  return 6;
}

// One needed symbol version, with the first place that asks for it.
struct Requirement {
  std::string full;     // "GLIBC_2.34"
  std::string family;   // "GLIBC"
  std::string version;  // "2.34"
  std::string file;     // the object needing it, by its path in the wheel
  std::string library;  // "libc.so.6"
  std::string symbol;   // an undefined symbol bound to it, if any
};

std::string describe(const Requirement& r) {
  std::string s = r.full + " needed by " + r.file;
  if (!r.symbol.empty()) s += " (symbol `" + r.symbol + "`)";
  return s;
}

// The symbol that makes a version need concrete: a strong reference if one
// exists, since a weak one alone would not stop the library from loading.
std::string symbol_for(const ElfInfo& f, const std::string& library, const std::string& version) {
  std::string weak;
  for (const ElfSymbol& s : f.dynamic_symbols) {
    if (s.defined || s.version != version || s.version_file != library) continue;
    if (s.binding != SymbolBinding::weak) return s.name;
    if (weak.empty()) weak = s.name;
  }
  return weak;
}

std::string max_allowed(const std::set<std::string>& allowed) {
  std::string best;
  for (const std::string& full : allowed) {
    const std::string v = split_symbol_version(full).second;
    if (all_numeric(v) && (best.empty() || compare_versions(v, split_symbol_version(best).second) > 0)) best = full;
  }
  return best;
}

struct Needed {
  std::string soname;
  std::vector<std::string> by;
};

struct Evidence {
  std::vector<Requirement> requirements;  // distinct versions, sorted for reporting
  std::vector<Needed> whitelistable;      // in some manylinux policy's whitelist for the arch
  std::vector<const ElfInfo*> files;      // for the blacklist check
};

struct Violation {
  std::string reason;   // for ManylinuxReport::reason ("GLIBC_2.34 needed by ...")
  std::string problem;  // for ManylinuxReport::problems
};

std::vector<Violation> violations(const ManylinuxPolicy& p, const std::string& arch, const Evidence& ev,
                                  const std::vector<const ManylinuxPolicy*>& ladder) {
  std::vector<Violation> out;
  const std::string tag = p.tag(arch);
  if (!p.is_manylinux()) return out;
  const auto& families = p.symbol_versions.at(arch);
  // auditwheel's policy_is_satisfied: only families the policy knows are
  // judged, and each needed version must be in the policy's set.
  for (const Requirement& r : ev.requirements) {
    const auto fam = families.find(r.family);
    if (fam == families.end() || fam->second.count(r.full) != 0) continue;
    const std::string ceiling = max_allowed(fam->second);
    Violation v;
    v.reason = describe(r);
    v.problem = r.file + " needs " + r.full + (r.symbol.empty() ? "" : " (symbol `" + r.symbol + "`)") + " but " + tag +
                (ceiling.empty() ? " allows no " + r.family + " versions" : " allows at most " + ceiling);
    out.push_back(std::move(v));
  }
  for (const Needed& n : ev.whitelistable) {
    if (p.lib_whitelist.count(n.soname) != 0) continue;
    std::string from;
    for (const ManylinuxPolicy* q : ladder) {  // most compatible first: the oldest that allows it
      if (q->is_manylinux() && q->lib_whitelist.count(n.soname) != 0) {
        from = q->name;
        break;
      }
    }
    Violation v;
    v.reason = n.soname + " needed by " + n.by.front() + " (whitelisted only from " + from + ")";
    v.problem = n.by.front() + " needs " + n.soname + ", which " + tag + " does not whitelist (" + from + " and newer do)";
    out.push_back(std::move(v));
  }
  for (const ElfInfo* f : ev.files) {
    for (const std::string& lib : f->needed) {
      const auto bl = p.blacklist.find(lib);
      if (bl == p.blacklist.end()) continue;
      for (const ElfSymbol& s : f->dynamic_symbols) {
        // auditwheel ignores weak references: they may stay unresolved.
        if (s.defined || s.binding == SymbolBinding::weak) continue;
        if (bl->second.count(s.name) == 0 && bl->second.count("*") == 0) continue;
        Violation v;
        v.reason = "`" + s.name + "` of " + lib + " used by " + f->name + " (blacklisted in " + p.name + ")";
        v.problem = f->name + " uses `" + s.name + "` of " + lib + ", which " + tag + " blacklists";
        out.push_back(std::move(v));
      }
    }
  }
  return out;
}

void add_needed(std::vector<NeededLibrary>& list, const std::string& soname, const std::string& by,
                const std::string& reason = {}) {
  for (NeededLibrary& n : list) {
    if (n.soname == soname) {
      if (std::find(n.needed_by.begin(), n.needed_by.end(), by) == n.needed_by.end()) n.needed_by.push_back(by);
      return;
    }
  }
  list.push_back({soname, {by}, reason});
}

// The facts one object adds to the evidence: its symbol-version needs
// (the first object needing a version is the one reports name) and the
// newest version it needs per family, for itself and for the variant.
LibraryEvidence library_evidence(const ElfInfo& f, std::map<std::string, Requirement>& by_version, ManylinuxReport& report) {
  LibraryEvidence lib;
  lib.file = f.name;
  lib.machine = f.machine;
  lib.needed = f.needed;
  for (const ElfVersionNeed& need : f.version_needs) {
    if (is_loader(need.file)) continue;
    auto& versions = lib.version_needs[need.file];
    for (const std::string& full : need.versions) {
      versions.push_back(full);
      auto [family, version] = split_symbol_version(full);
      if (all_numeric(version)) {
        auto& cur = lib.max_versions[family];
        if (cur.empty() || compare_versions(version, cur) > 0) cur = version;
        auto& all = report.max_versions[family];
        if (all.empty() || compare_versions(version, all) > 0) all = version;
      }
      if (by_version.count(full) == 0) {
        by_version.emplace(full, Requirement{full, family, version, lib.file, need.file, symbol_for(f, need.file, full)});
      }
    }
  }
  return lib;
}

// Where each library an object needs comes from: the variant itself, a
// policy's whitelist (judged per rung later), torch, the caller's
// allowance, or nowhere (external).
struct NeededSources {
  std::set<std::string> internal;               // the variant's own objects, by soname and file name
  std::set<std::string> whitelisted_somewhere;  // in some rung's lib_whitelist
  const TorchProvided& torch;
  const ManylinuxOptions& options;
  TorchTarget target;
};

void classify_needed(const ElfInfo& f, const NeededSources& from, Evidence& ev, ManylinuxReport& report) {
  const std::string& file = f.name;
  for (const std::string& soname : f.needed) {
    if (is_loader(soname) || from.internal.count(soname) != 0) continue;
    if (from.whitelisted_somewhere.count(soname) != 0) {
      auto it = std::find_if(ev.whitelistable.begin(), ev.whitelistable.end(), [&](const Needed& n) { return n.soname == soname; });
      if (it == ev.whitelistable.end()) {
        ev.whitelistable.push_back({soname, {file}});
      } else {
        it->by.push_back(file);
      }
    } else if (const TorchVerdict t = from.torch.judge(soname, from.target); t.kind == TorchVerdict::Kind::provided) {
      add_needed(report.torch_provided, soname, file, t.reason);
    } else if (t.kind == TorchVerdict::Kind::mismatch && from.options.allowed_external.count(soname) == 0) {
      add_needed(report.mismatched, soname, f.name, t.reason);
    } else if (from.options.allowed_external.count(soname) != 0) {
      add_needed(report.allowed_external, soname, file);
    } else {
      add_needed(report.external, soname, file);
    }
  }
}

// Reading phase: every object's facts into the report and the evidence
// the policies are judged against.
Evidence gather_evidence(std::span<const ElfInfo> files, const ManylinuxOptions& options,
                         const std::vector<const ManylinuxPolicy*>& ladder, const TorchProvided& torch, ManylinuxReport& report) {
  // Objects of the variant satisfy each other's DT_NEEDED by soname or file
  // name (the basename: DT_NEEDED names no folder); reports name objects by
  // their path in the wheel, as two may share a basename (sgl-kernel's
  // sm90/ and sm100/common_ops.abi3.so).
  NeededSources from{{}, {}, torch, options, {options.backend, options.torch_minor, options.backend_major}};
  if (!files.empty()) report.warnings = torch.coverage_gaps(from.target);
  for (const ElfInfo& f : files) {
    from.internal.insert(basename_of(f.name));
    if (f.soname) from.internal.insert(*f.soname);
  }
  for (const ManylinuxPolicy* p : ladder) from.whitelisted_somewhere.insert(p->lib_whitelist.begin(), p->lib_whitelist.end());

  Evidence ev;
  std::map<std::string, Requirement> by_version;
  for (const ElfInfo& f : files) {
    ev.files.push_back(&f);
    if (f.machine != options.arch) {
      report.problems.push_back(f.name + " is built for " + f.machine + " but the variant is " + options.arch);
    }
    report.libraries.push_back(library_evidence(f, by_version, report));
    classify_needed(f, from, ev, report);
  }
  for (auto& [_, r] : by_version) ev.requirements.push_back(std::move(r));
  std::sort(ev.requirements.begin(), ev.requirements.end(), [](const Requirement& a, const Requirement& b) {
    if (family_rank(a.family) != family_rank(b.family)) return family_rank(a.family) < family_rank(b.family);
    if (a.family != b.family) return a.family < b.family;
    return compare_versions(a.version, b.version) > 0;  // newest first: the one that matters
  });
  return ev;
}

// The ladder runs from most to least compatible; the first rung with no
// violation is the best policy ("linux" always fits). Sets best_policy
// and the reason it is not the next more compatible one.
const ManylinuxPolicy* judge_best(const std::vector<const ManylinuxPolicy*>& ladder, const std::string& arch, const Evidence& ev,
                                  ManylinuxReport& report) {
  std::size_t best = ladder.size() - 1;
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    if (violations(*ladder[i], arch, ev, ladder).empty()) {
      best = i;
      break;
    }
  }
  const ManylinuxPolicy* best_policy = ladder[best];
  report.best_policy = best_policy->name;
  if (best == 0) {
    report.reason = "every needed symbol version fits " + best_policy->name + ", the most compatible policy";
  } else {
    report.reason = violations(*ladder[best - 1], arch, ev, ladder).front().reason;
  }
  return best_policy;
}

// The policy the wheel claims: the requested one if the evidence allows
// it (each violation is a problem otherwise), else the best; with nothing
// requested, a variant no manylinux policy fits is a problem.
const ManylinuxPolicy* judge_request(const ManylinuxPolicy* best_policy, const ManylinuxOptions& options, const PolicySet& policies,
                                     const std::vector<const ManylinuxPolicy*>& ladder, const Evidence& ev, ManylinuxReport& report) {
  const std::string& arch = options.arch;
  if (options.requested) {
    const ManylinuxPolicy* req = policies.find(*options.requested, arch);
    if (req == nullptr || !req->is_manylinux()) {
      report.problems.push_back("unknown manylinux policy '" + *options.requested + "' for " + arch + " in " +
                                policies.source());
      return best_policy;
    }
    const auto v = violations(*req, arch, ev, ladder);
    for (const Violation& x : v) report.problems.push_back(x.problem);
    return v.empty() ? req : best_policy;
  }
  if (!best_policy->is_manylinux()) {
    const auto v = violations(*ladder[ladder.size() - 2], arch, ev, ladder);
    report.problems.push_back("no manylinux policy fits " + arch + ": " + v.front().problem);
  }
  return best_policy;
}

// The needed libraries a reader sees: the whitelisted ones, and a problem
// for each external one nobody vouched for.
void judge_libraries(const Evidence& ev, const ManylinuxOptions& options, ManylinuxReport& report) {
  for (const Needed& n : ev.whitelistable) {
    for (const std::string& by : n.by) add_needed(report.whitelisted, n.soname, by);
  }
  // One line per object: it names the member to rebuild, the library, the
  // variant, and what the variant's torch provides instead.
  for (const NeededLibrary& n : report.mismatched) {
    for (const std::string& by : n.needed_by) {
      report.problems.push_back(by + " needs " + n.soname + ", but " +
                                (options.variant.empty() ? std::string() : "in " + options.variant + ", ") + n.reason);
    }
  }
  for (const NeededLibrary& n : report.external) {
    std::string by;
    for (const std::string& b : n.needed_by) by += (by.empty() ? "" : ", ") + b;
    report.problems.push_back(n.soname + " needed by " + by + " is not in the manylinux whitelist and not provided by torch" +
                              (options.backend.empty() ? "" : " (" + options.backend + ")") +
                              "; link it statically, drop it, or allow it explicitly");
  }
}

void judge_abi3(std::span<const ElfInfo> files, const ManylinuxOptions& options, const StableAbi& stable_abi, ManylinuxReport& report) {
  report.abi3 = check_abi3(files, stable_abi);
  if (options.require_abi3 && report.abi3.status == Abi3Status::non_stable) {
    for (const Abi3Violation& v : report.abi3.non_stable) {
      report.problems.push_back(v.file + " imports `" + v.symbol + "`, which is not in the Python " + report.abi3.python +
                                " stable ABI, so the wheel cannot be tagged abi3");
    }
  }
}

}  // namespace

std::pair<std::string, std::string> split_symbol_version(const std::string& version) {
  const auto us = version.find('_');
  if (us == std::string::npos) return {version, ""};
  return {version.substr(0, us), version.substr(us + 1)};
}

int compare_versions(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i >= a.size()) return -1;
    if (j >= b.size()) return 1;
    const std::size_t ie = std::min(a.find('.', i), a.size());
    const std::size_t je = std::min(b.find('.', j), b.size());
    const std::string_view pa(a.data() + i, ie - i), pb(b.data() + j, je - j);
    unsigned long long na = 0, nb = 0;
    const auto ra = std::from_chars(pa.data(), pa.data() + pa.size(), na);
    const auto rb = std::from_chars(pb.data(), pb.data() + pb.size(), nb);
    const bool num = ra.ec == std::errc() && ra.ptr == pa.data() + pa.size() && rb.ec == std::errc() &&
                     rb.ptr == pb.data() + pb.size() && !pa.empty() && !pb.empty();
    if (num) {
      if (na != nb) return na < nb ? -1 : 1;
    } else if (const int c = pa.compare(pb); c != 0) {
      return c < 0 ? -1 : 1;
    }
    i = ie + 1;
    j = je + 1;
  }
  return 0;
}

ManylinuxReport assess_manylinux(std::span<const ElfInfo> files, const ManylinuxOptions& options,
                                 const PolicySet& policies, const TorchProvided& torch, const StableAbi& stable_abi) {
  const std::string& arch = options.arch;
  const std::vector<const ManylinuxPolicy*> ladder = policies.for_arch(arch);
  if (ladder.empty()) {
    throw Error(ErrorKind::input, "no manylinux policy for architecture '" + arch + "' in " + policies.source());
  }
  ManylinuxReport report;
  report.arch = arch;
  report.policy_source = policies.source();
  if (files.empty()) report.problems.push_back("no shared objects in the variant: nothing to decide a platform tag from");

  const Evidence ev = gather_evidence(files, options, ladder, torch, report);
  const ManylinuxPolicy* best_policy = judge_best(ladder, arch, ev, report);
  const ManylinuxPolicy* chosen = judge_request(best_policy, options, policies, ladder, ev, report);
  report.policy = chosen->name;
  report.platform_tag = chosen->tag(arch);
  report.compressed_tag = compressed_platform_tag(*chosen, arch);
  judge_libraries(ev, options, report);
  judge_abi3(files, options, stable_abi, report);
  return report;
}

ManylinuxReport decide_manylinux(std::span<const ElfInfo> files, const ManylinuxOptions& options,
                                 const PolicySet& policies, const TorchProvided& torch, const StableAbi& stable_abi) {
  ManylinuxReport report = assess_manylinux(files, options, policies, torch, stable_abi);
  if (!report.ok()) {
    std::string msg = report.problems.front();
    if (report.problems.size() > 1) msg += " (and " + std::to_string(report.problems.size() - 1) + " more problems)";
    throw Error(ErrorKind::policy, msg);
  }
  return report;
}

void to_json(nlohmann::json& j, const Abi3Report& report) {
  nlohmann::json non_stable = nlohmann::json::array();
  for (const Abi3Violation& v : report.non_stable) non_stable.push_back({{"symbol", v.symbol}, {"file", v.file}});
  j = {{"status", std::string(to_string(report.status))},
       {"python", report.python},
       {"python_symbols", report.python_symbols},
       {"non_stable", std::move(non_stable)}};
}

void to_json(nlohmann::json& j, const NeededLibrary& n) {
  j = {{"soname", n.soname}, {"needed_by", n.needed_by}};
  if (!n.reason.empty()) j["reason"] = n.reason;
}

void to_json(nlohmann::json& j, const ManylinuxReport& report) {
  auto libs = [](const std::vector<NeededLibrary>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const NeededLibrary& n : list) out.push_back(n);
    return out;
  };
  nlohmann::json libraries = nlohmann::json::array();
  for (const LibraryEvidence& l : report.libraries) {
    libraries.push_back({{"file", l.file},
                         {"machine", l.machine},
                         {"needed", l.needed},
                         {"version_needs", l.version_needs},
                         {"max_versions", l.max_versions}});
  }
  j = {{"arch", report.arch},
       {"policy", report.policy},
       {"platform_tag", report.platform_tag},
       {"compressed_tag", report.compressed_tag},
       {"best_policy", report.best_policy},
       {"reason", report.reason},
       {"max_versions", report.max_versions},
       {"libraries", std::move(libraries)},
       {"whitelisted", libs(report.whitelisted)},
       {"torch_provided", libs(report.torch_provided)},
       {"allowed_external", libs(report.allowed_external)},
       {"external", libs(report.external)},
       {"mismatched", libs(report.mismatched)},
       {"warnings", report.warnings},
       {"abi3", report.abi3},
       {"problems", report.problems},
       {"ok", report.ok()},
       {"policy_source", report.policy_source}};
}

}  // namespace kwheel
