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
  // Only for a torch minor or CUDA major the wheel data does not cover:
  // where the data covers the variant, it alone decides.
  bool fallback = false;
};

// One PyPI torch wheel as scripts/update-torch-provided read it.
struct TorchWheel {
  std::string minor;    // "2.15"
  std::string version;  // "2.15.0"
  std::string wheel;    // file name
  std::string sha256;
  std::string cuda;     // "13.0": the CUDA build PyPI serves for this minor
  int cuda_major = 0;
  std::set<std::string> libs_any;   // torch/lib sonames every build has
  std::set<std::string> libs_cuda;  // torch/lib sonames of the CUDA build only
};

// The sonames the nvidia-* wheels of one CUDA major hold, and which wheel
// brought each.
struct CudaSonames {
  int major = 0;
  std::map<std::string, std::string> package_of;  // soname -> "nvidia-cudnn-cu13 9.19.0.56"
};

// What a variant runs against: its backend, torch minor and backend major.
struct TorchTarget {
  std::string backend;      // "cuda", "rocm", "xpu", "cpu"; "" = any backend
  std::string torch_minor;  // "2.15"; "" = any covered torch
  int backend_major = 0;    // 13 for cu130, 7 for rocm70; 0 = unknown
};

struct TorchVerdict {
  enum class Kind { provided, mismatch, absent };
  Kind kind = Kind::absent;
  std::string reason;  // provided: why torch brings it; mismatch: what torch provides instead and the fix
};

class TorchProvided {
 public:
  static const TorchProvided& builtin();  // manylinux/torch-provided.json
  static TorchProvided parse(std::string_view json_text, std::string_view origin);
  static TorchProvided load(const std::filesystem::path& path);

  // The pattern entry covering `soname` for `backend` ("" or "any" = any
  // backend), fallback entries included: the name-only view.
  const TorchProvidedLib* match(std::string_view soname, std::string_view backend) const;
  // Whether `import torch` of the target's torch makes `soname` available,
  // or brings a different major of the same library (a mismatch).
  TorchVerdict judge(std::string_view soname, const TorchTarget& target) const;
  // One line per part of the target the wheel data does not cover (so the
  // name patterns and the CUDA-major rule decide); empty when covered.
  std::vector<std::string> coverage_gaps(const TorchTarget& target) const;

  const std::vector<TorchProvidedLib>& all() const { return libs_; }
  const std::vector<TorchWheel>& wheels() const { return wheels_; }
  const std::vector<CudaSonames>& cuda() const { return cuda_; }
  const TorchWheel* wheel_for(std::string_view minor) const;
  const CudaSonames* cuda_for(int major) const;

 private:
  TorchVerdict judge_torch_lib(const std::string& soname, const TorchTarget& target) const;
  TorchVerdict judge_cuda(const std::string& soname, const TorchTarget& target) const;
  TorchVerdict judge_rocm(const std::string& soname, const TorchTarget& target) const;
  TorchVerdict judge_patterns(const std::string& soname, const TorchTarget& target, bool covered) const;

  std::vector<TorchProvidedLib> libs_;
  std::vector<TorchWheel> wheels_;
  std::vector<CudaSonames> cuda_;
  std::string rocm_rule_;
};

// "libcudart.so.12" -> {"libcudart.so", "12"}; "libc10.so" -> {"libc10.so", ""};
// "libnvrtc-builtins.so.13.0" -> {"libnvrtc-builtins.so", "13.0"}.
std::pair<std::string, std::string> soname_family(std::string_view soname);

}  // namespace kwheel
