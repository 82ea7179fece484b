#pragma once
// PEP 600 policies as data: auditwheel's manylinux policy file (copied into
// manylinux/policy.json by scripts/update-manylinux-policy) and the libraries
// torch provides at run time (manylinux/torch-provided.json). Both are
// compiled in; the loaders also take a file so a newer policy can be tried
// without rebuilding.
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

struct ManylinuxPolicy {
  std::string name;                  // "manylinux_2_17", or "linux" for the catch-all
  std::vector<std::string> aliases;  // {"manylinux2014"}
  int priority = 0;                  // higher = older glibc = more compatible
  // arch -> version family ("GLIBC", "GLIBCXX", ...) -> full version names
  // allowed ("GLIBC_2.17"), prefixed exactly as auditwheel compares them.
  std::map<std::string, std::map<std::string, std::set<std::string>>> symbol_versions;
  std::set<std::string> lib_whitelist;                       // sonames
  std::map<std::string, std::set<std::string>> blacklist;    // soname -> symbols

  bool is_manylinux() const { return name != "linux"; }
  // "manylinux_2_17_x86_64"
  std::string tag(std::string_view arch) const { return name + "_" + std::string(arch); }
};

class PolicySet {
 public:
  // The compiled-in manylinux/policy.json.
  static const PolicySet& builtin();
  // Throws Error(input) naming `origin` when the JSON is not a policy file.
  static PolicySet parse(std::string_view json_text, std::string_view origin);
  static PolicySet load(const std::filesystem::path& path);

  // Where the data came from: "auditwheel 6.8.2 (...)".
  const std::string& source() const { return source_; }
  // Policies for `arch`, most compatible manylinux first, "linux" last.
  // Empty if the file has no policy for that architecture.
  std::vector<const ManylinuxPolicy*> for_arch(std::string_view arch) const;
  // By name or alias, with or without an "_<arch>" suffix naming `arch`;
  // nullptr if unknown or not defined for `arch`.
  const ManylinuxPolicy* find(std::string_view name, std::string_view arch) const;
  std::set<std::string> architectures() const;
  const std::vector<ManylinuxPolicy>& all() const { return policies_; }

 private:
  std::string source_;
  std::vector<ManylinuxPolicy> policies_;
};

// auditwheel's tag set for a policy: its name and aliases, each with the
// arch suffix, sorted and dot-joined ("manylinux2014_x86_64.manylinux_2_17_x86_64").
std::string compressed_platform_tag(const ManylinuxPolicy& policy, std::string_view arch);

struct TorchProvidedLib {
  std::string pattern;                // fnmatch pattern on the DT_NEEDED soname
  std::vector<std::string> backends;  // "any", "cpu", "cuda", "rocm", "xpu"
  std::string reason;
};

class TorchProvided {
 public:
  static const TorchProvided& builtin();  // manylinux/torch-provided.json
  static TorchProvided parse(std::string_view json_text, std::string_view origin);
  static TorchProvided load(const std::filesystem::path& path);

  // The entry covering `soname` for `backend` ("" or "any" = any backend).
  const TorchProvidedLib* match(std::string_view soname, std::string_view backend) const;
  const std::vector<TorchProvidedLib>& all() const { return libs_; }

 private:
  std::vector<TorchProvidedLib> libs_;
};

}  // namespace kwheel
