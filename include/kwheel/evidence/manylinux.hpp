#pragma once
// The manylinux decision for one build variant: from the ELF facts of all its
// shared objects, the most compatible PEP 600 policy they satisfy, judged as
// auditwheel judges it (symbol-version sets per family, library whitelist,
// symbol blacklist), plus the libraries torch brings at run time, the abi3
// status, and every reason the requested tag cannot be claimed.
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kwheel/evidence/abi3.hpp"
#include "kwheel/evidence/elf.hpp"
#include "kwheel/evidence/manylinux_policy.hpp"

namespace kwheel {

struct ManylinuxOptions {
  std::string arch;     // the variant's CPU: "x86_64", "aarch64"
  std::string backend;  // "cuda", "rocm", "xpu", "cpu"; "" accepts any backend's torch libraries
  std::string torch_minor;  // "2.15"; "" accepts any covered torch's libraries
  int backend_major = 0;    // 13 for cu130, 7 for rocm70; 0 accepts any major
  std::string variant;      // named in problems where the caller does not: a wheel's label "torch2.10.cu130"
  // Pin the tag ("manylinux_2_28", "manylinux2014", "manylinux_2_28_x86_64");
  // evidence needing a newer policy is then a problem naming the symbol.
  std::optional<std::string> requested;
  std::set<std::string> allowed_external;  // sonames the user vouches for
  bool require_abi3 = false;               // the wheel is tagged abi3
};

struct LibraryEvidence {
  std::string file;     // the object's path in the wheel ("relu/_ops.abi3.so"); its file name for a lone .so
  std::string machine;  // "x86_64"
  std::vector<std::string> needed;
  std::map<std::string, std::vector<std::string>> version_needs;  // soname -> {"GLIBC_2.17", ...}
  std::map<std::string, std::string> max_versions;                // "GLIBC" -> "2.17"
};

struct NeededLibrary {
  std::string soname;
  std::vector<std::string> needed_by;  // the needing objects' paths in the wheel
  std::string reason;                  // torch-provided: why torch brings it; otherwise empty
};

struct ManylinuxReport {
  std::string arch;
  std::string policy;          // chosen: the requested policy if it fits, else best_policy
  std::string platform_tag;    // "manylinux_2_28_x86_64" ("linux_x86_64" when nothing fits)
  std::string compressed_tag;  // with legacy aliases: "manylinux2014_x86_64.manylinux_2_17_x86_64"
  std::string best_policy;     // most compatible policy the evidence allows
  // Why best_policy and not the next older one, e.g.
  // "GLIBC_2.34 needed by relu/_ops.abi3.so (symbol `pthread_create`)".
  std::string reason;
  std::vector<LibraryEvidence> libraries;
  std::map<std::string, std::string> max_versions;  // per family, across all libraries
  std::vector<NeededLibrary> whitelisted;       // in the chosen policy's lib_whitelist
  std::vector<NeededLibrary> torch_provided;    // brought by torch (manylinux/torch-provided.json)
  std::vector<NeededLibrary> allowed_external;  // external, but allowed by the caller
  std::vector<NeededLibrary> external;          // external and not allowed: each is also a problem
  // A library torch brings in another major (libcudart.so.12 where torch
  // provides libcudart.so.13): `reason` says what it provides; a problem each.
  std::vector<NeededLibrary> mismatched;
  // Parts of the variant the torch wheel data does not cover, so rules decided.
  std::vector<std::string> warnings;
  Abi3Report abi3;
  std::vector<std::string> problems;  // one line each; empty means the tag can be claimed
  std::string policy_source;          // "auditwheel 6.8.2 (...)"

  bool ok() const { return problems.empty(); }
};

// Never throws for what the evidence shows (that goes in `problems`); throws
// Error(input) when `options.arch` has no policies at all.
ManylinuxReport assess_manylinux(std::span<const ElfInfo> files, const ManylinuxOptions& options,
                                 const PolicySet& policies = PolicySet::builtin(),
                                 const TorchProvided& torch = TorchProvided::builtin(),
                                 const StableAbi& stable_abi = StableAbi::builtin());

// assess_manylinux, then Error(policy) carrying the first problem (and how
// many more there are) unless the report is ok().
ManylinuxReport decide_manylinux(std::span<const ElfInfo> files, const ManylinuxOptions& options,
                                 const PolicySet& policies = PolicySet::builtin(),
                                 const TorchProvided& torch = TorchProvided::builtin(),
                                 const StableAbi& stable_abi = StableAbi::builtin());

// "GLIBC_2.17" -> {"GLIBC", "2.17"}, split at the first '_' as auditwheel does.
std::pair<std::string, std::string> split_symbol_version(const std::string& version);
// Numeric dotted comparison ("2.9" < "2.17"); non-numeric parts compare as text.
int compare_versions(const std::string& a, const std::string& b);

// For `--json` reports: `nlohmann::json j = report;`
void to_json(nlohmann::json& j, const ManylinuxReport& report);
void to_json(nlohmann::json& j, const NeededLibrary& library);
void to_json(nlohmann::json& j, const Abi3Report& report);

}  // namespace kwheel
