// Policies as data: PolicySet and TorchProvided parsed from the built-in
// files and from small files written here. Expected facts come from PEP 600
// (manylinux_x_y means glibc <= x.y), PEP 513/599's library whitelist, and
// auditwheel's policy file format.
#include "kwheel/evidence/manylinux_policy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

namespace kwheel {
namespace {

namespace fs = std::filesystem;
using testing::error_of;

// "2.17" -> {2, 17}: the test's own reading of a dotted version.
std::vector<int> numbers(const std::string& dotted) {
  std::vector<int> out;
  std::stringstream ss(dotted);
  for (std::string part; std::getline(ss, part, '.');) out.push_back(std::stoi(part));
  return out;
}

// The newest numbered "GLIBC_x.y[.z]" in a set, as numbers (markers such
// as GLIBC_ABI_DT_RELR carry no number).
std::vector<int> newest_glibc(const std::set<std::string>& versions) {
  std::vector<int> best;
  for (const auto& v : versions) {
    const std::string n = v.substr(v.find('_') + 1);
    if (n.find_first_not_of("0123456789.") == std::string::npos) best = std::max(best, numbers(n));
  }
  return best;
}

const ManylinuxPolicy& policy(const PolicySet& set, const std::string& name) {
  for (const auto& p : set.all())
    if (p.name == name) return p;
  throw std::runtime_error("no policy " + name);
}

// A minimal policy file in auditwheel's shape.
std::string entry(const std::string& name, int priority, const std::string& aliases = "[]",
                  const std::string& versions = R"({"x86_64": {"GLIBC": ["2.2.5", "2.17"]}})") {
  return R"({"name": ")" + name + R"(", "aliases": )" + aliases + R"(, "priority": )" + std::to_string(priority) +
         R"(, "symbol_versions": )" + versions + R"(, "lib_whitelist": ["libc.so.6"], "blacklist": {}})";
}
const std::string kLinux = R"({"name": "linux", "aliases": [], "priority": 0, "symbol_versions": {}, "lib_whitelist": [], "blacklist": {}})";

// ---- the built-in policy file ----

// {x, y} of "manylinux_x_y".
std::vector<int> glibc_of(const ManylinuxPolicy& p) {
  const std::string xy = p.name.substr(std::string("manylinux_").size());
  return {std::stoi(xy), std::stoi(xy.substr(xy.find('_') + 1))};
}

TEST(BuiltinPolicy, NoManylinuxPolicyAllowsANewerGlibcThanItsName) {
  // PEP 600: manylinux_x_y wheels run on any distro with glibc >= x.y, so
  // no symbol version they may need is newer than x.y. (x86_64 only:
  // auditwheel's aarch64 manylinux_2_17 also allows GLIBC_2.18.)
  for (const ManylinuxPolicy* p : PolicySet::builtin().for_arch("x86_64")) {
    if (!p->is_manylinux()) continue;
    EXPECT_LE(newest_glibc(p->symbol_versions.at("x86_64").at("GLIBC")), glibc_of(*p)) << p->name;
  }
}

TEST(BuiltinPolicy, Manylinux228Glibc) {
  const auto& glibc = policy(PolicySet::builtin(), "manylinux_2_28").symbol_versions.at("x86_64").at("GLIBC");
  EXPECT_TRUE(glibc.count("GLIBC_2.28"));
  EXPECT_TRUE(glibc.count("GLIBC_2.2.5")) << "x86_64's first glibc symbol version";
  EXPECT_FALSE(glibc.count("GLIBC_2.29"));
  EXPECT_FALSE(glibc.count("2.28")) << "versions carry their family prefix, as auditwheel compares them";
}

TEST(BuiltinPolicy, WhitelistHoldsTheCoreSystemLibraries) {
  // PEP 513's list, kept by every later manylinux policy.
  for (const ManylinuxPolicy* p : PolicySet::builtin().for_arch("x86_64")) {
    if (!p->is_manylinux()) continue;
    for (const char* lib : {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libgcc_s.so.1"})
      EXPECT_TRUE(p->lib_whitelist.count(lib)) << p->name << " " << lib;
    EXPECT_FALSE(p->lib_whitelist.count("libpng16.so.16")) << p->name;
  }
  EXPECT_TRUE(policy(PolicySet::builtin(), "linux").lib_whitelist.empty());
}

TEST(BuiltinPolicy, OlderGlibcIsMoreCompatible) {
  const auto ladder = PolicySet::builtin().for_arch("x86_64");
  ASSERT_GE(ladder.size(), 3u);
  std::vector<int> previous{0, 0};
  std::set<std::string> allowed_before;
  for (const ManylinuxPolicy* p : ladder) {
    if (!p->is_manylinux()) continue;
    EXPECT_GT(glibc_of(*p), previous) << p->name << " comes after a policy for a newer glibc";
    previous = glibc_of(*p);
    // A newer glibc keeps every symbol version an older one had.
    const auto& glibc = p->symbol_versions.at("x86_64").at("GLIBC");
    EXPECT_TRUE(std::includes(glibc.begin(), glibc.end(), allowed_before.begin(), allowed_before.end())) << p->name;
    allowed_before = glibc;
  }
  EXPECT_EQ(ladder.back()->name, "linux");
  EXPECT_EQ(ladder.back()->tag("x86_64"), "linux_x86_64");
}

TEST(BuiltinPolicy, TagsAndLegacyAliases) {
  const PolicySet& set = PolicySet::builtin();
  // PEP 600: manylinux1 = manylinux_2_5, manylinux2010 = _2_12, manylinux2014 = _2_17.
  EXPECT_EQ(set.find("manylinux1_x86_64", "x86_64")->name, "manylinux_2_5");
  EXPECT_EQ(set.find("manylinux2010", "x86_64")->name, "manylinux_2_12");
  EXPECT_EQ(set.find("manylinux2014_aarch64", "aarch64")->name, "manylinux_2_17");
  EXPECT_EQ(policy(set, "manylinux_2_28").tag("aarch64"), "manylinux_2_28_aarch64");
  EXPECT_EQ(compressed_platform_tag(policy(set, "manylinux_2_5"), "x86_64"), "manylinux1_x86_64.manylinux_2_5_x86_64");
}

// ---- policy files given as data ----

TEST(PolicyFile, OrderedByPriorityWhateverTheFileOrder) {
  const std::string text = "[" + entry("manylinux_2_28", 64) + "," + kLinux + "," + entry("manylinux_2_17", 80, R"(["manylinux2014"])") +
                           "," + entry("manylinux_2_24", 70) + "]";
  const PolicySet set = PolicySet::parse(text, "mine.json");
  std::vector<std::string> names;
  for (const auto& p : set.all()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"manylinux_2_17", "manylinux_2_24", "manylinux_2_28", "linux"}));
  EXPECT_EQ(set.source(), "mine.json") << "a bare auditwheel list names its origin as the source";
  const auto ladder = set.for_arch("x86_64");
  ASSERT_EQ(ladder.size(), 4u);
  EXPECT_EQ(ladder.front()->name, "manylinux_2_17");
  EXPECT_EQ(set.find("manylinux2014_x86_64", "x86_64")->name, "manylinux_2_17");
  EXPECT_EQ(set.architectures(), std::set<std::string>{"x86_64"});
  EXPECT_TRUE(set.for_arch("aarch64").empty());
  EXPECT_EQ(set.find("manylinux_2_17", "aarch64"), nullptr);
}

TEST(PolicyFile, WrappedFormCarriesItsSourceAndPrefixesVersions) {
  const std::string text = R"j({"source": "auditwheel 9.9 (test)", "policies": [)j" +
                           entry("manylinux_2_17", 80, "[]", R"({"x86_64": {"GLIBC": ["2.17"], "GLIBCXX": ["3.4.19"]}})") + "," +
                           kLinux + "]}";
  const PolicySet set = PolicySet::parse(text, "wrapped.json");
  EXPECT_EQ(set.source(), "auditwheel 9.9 (test)");
  const auto& v = policy(set, "manylinux_2_17").symbol_versions.at("x86_64");
  EXPECT_EQ(v.at("GLIBC"), std::set<std::string>{"GLIBC_2.17"});
  EXPECT_EQ(v.at("GLIBCXX"), std::set<std::string>{"GLIBCXX_3.4.19"});
}

TEST(PolicyFile, LoadReadsAFile) {
  TempDir d("unit");
  const fs::path file = d.path() / "policy.json";
  std::ofstream(file) << "[" + entry("manylinux_2_17", 80) + "," + kLinux + "]";
  EXPECT_EQ(PolicySet::load(file).all().size(), 2u);
  error_of([&] { PolicySet::load(d.path() / "missing.json"); }, ErrorKind::io);
}

TEST(PolicyFile, MalformedFilesAreInputErrorsNamingTheOrigin) {
  const std::vector<std::string> bad{
      "{not json",
      R"({"source": "x"})",                                  // no policies
      R"({"policies": {"name": "linux"}})",                  // policies not a list
      "[" + kLinux + R"(, {"name": "manylinux_2_17"}])",     // entry missing fields
      "[" + kLinux + "," + entry("manylinux_2_17", 80, "[1]") + "]",  // non-string alias
      "[" + kLinux + "," + entry("manylinux_2_17", 80, "[]", R"({"x86_64": {"GLIBC": "2.17"}})") + "]",  // versions not a list
      "[" + entry("manylinux_2_17", 80) + "]",               // no linux base policy
      "[]",
  };
  for (const auto& text : bad) {
    const std::string msg = error_of([&] { PolicySet::parse(text, "/etc/my-policy.json"); }, ErrorKind::input);
    EXPECT_TRUE(msg.starts_with("/etc/my-policy.json")) << text << "\n" << msg;
  }
  TempDir d("unit");
  const fs::path file = d.path() / "broken.json";
  std::ofstream(file) << "[";
  const std::string msg = error_of([&] { PolicySet::load(file); }, ErrorKind::input);
  EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
}

// ---- libraries torch provides ----

TEST(TorchProvidedData, BuiltinKnowsTorchsOwnLibraries) {
  const TorchProvided& t = TorchProvided::builtin();
  // torch/lib of every torch wheel: libtorch, libc10, libtorch_cpu.
  for (const char* lib : {"libtorch.so", "libc10.so", "libtorch_cpu.so"})
    for (const char* backend : {"cpu", "cuda", "rocm", ""}) {
      EXPECT_NE(t.match(lib, backend), nullptr) << lib << " " << backend;
      EXPECT_EQ(t.judge(lib, {backend, "2.10", 0}).kind, TorchVerdict::Kind::provided) << lib << " " << backend;
    }
  // CUDA torch brings the CUDA runtime (nvidia-cuda-runtime wheels); a CPU torch does not.
  EXPECT_EQ(t.judge("libcudart.so.12", {"cuda", "", 12}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libcudart.so.12", {"cpu", "", 0}).kind, TorchVerdict::Kind::absent);
  EXPECT_NE(t.match("libc10_cuda.so", "cuda"), nullptr);
  EXPECT_EQ(t.match("libpng16.so.16", "cuda"), nullptr);
  EXPECT_EQ(t.judge("libpng16.so.16", {"cuda", "2.15", 13}).kind, TorchVerdict::Kind::absent);
}

// The facts below are the contents of the PyPI wheels the built-in data was
// read from (scripts/update-torch-provided): what `unzip -l` shows for them.
TEST(TorchProvidedData, BuiltinCoversThePyPIWheelsOfEachSupportedMinor) {
  const TorchProvided& t = TorchProvided::builtin();
  std::vector<std::string> minors;
  for (const TorchWheel& w : t.wheels()) {
    minors.push_back(w.minor);
    // torch 2.10.0's re-upload carries build tag 3: torch-2.10.0-3-cp312-...
    EXPECT_TRUE(w.wheel.starts_with("torch-" + w.version + "-")) << w.wheel;
    EXPECT_NE(w.wheel.find("-cp312-cp312-manylinux"), std::string::npos) << w.wheel;
    EXPECT_TRUE(w.version.starts_with(w.minor + ".")) << w.version;
    EXPECT_EQ(w.sha256.size(), 64u) << w.wheel;
    EXPECT_TRUE(w.libs_any.count("libtorch_cpu.so")) << w.wheel;
    EXPECT_TRUE(w.libs_cuda.count("libtorch_cuda.so")) << w.wheel;
    EXPECT_NE(t.cuda_for(w.cuda_major), nullptr) << w.wheel;
  }
  EXPECT_EQ(minors, (std::vector<std::string>{"2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13", "2.14", "2.15"}));
  ASSERT_NE(t.wheel_for("2.15"), nullptr);
  EXPECT_TRUE(t.wheel_for("2.15")->libs_cuda.count("libtorch_nvshmem.so"));
  EXPECT_FALSE(t.wheel_for("2.6")->libs_cuda.count("libtorch_nvshmem.so"));
  const CudaSonames* cu12 = t.cuda_for(12);
  const CudaSonames* cu13 = t.cuda_for(13);
  ASSERT_NE(cu12, nullptr);
  ASSERT_NE(cu13, nullptr);
  EXPECT_TRUE(cu12->package_of.count("libcudart.so.12"));
  EXPECT_FALSE(cu12->package_of.count("libcudart.so.13"));
  EXPECT_TRUE(cu13->package_of.at("libcudart.so.13").starts_with("nvidia-cuda-runtime"));
  EXPECT_TRUE(cu13->package_of.at("libcudnn.so.9").starts_with("nvidia-cudnn-cu13"));
  EXPECT_TRUE(cu12->package_of.at("libcudnn.so.9").starts_with("nvidia-cudnn-cu12"));
  EXPECT_TRUE(cu13->package_of.count("libcufft.so.12")) << "cuFFT's major is not CUDA's";
  EXPECT_TRUE(cu12->package_of.count("libcufft.so.11"));
}

TEST(TorchProvidedDecision, BuiltinRefusesAnotherCudaMajor) {
  const TorchProvided& t = TorchProvided::builtin();
  const TorchVerdict v = t.judge("libcudart.so.12", {"cuda", "2.10", 13});
  ASSERT_EQ(v.kind, TorchVerdict::Kind::mismatch);
  for (const char* part : {"torch 2.10 with CUDA 13", "provides libcudart.so.13", "nvidia-cuda-runtime", "rebuild it against CUDA 13",
                           "cu12x variant"})
    EXPECT_NE(v.reason.find(part), std::string::npos) << part << "\n" << v.reason;
  EXPECT_EQ(t.judge("libcudart.so.13", {"cuda", "2.10", 13}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libcudnn.so.9", {"cuda", "2.10", 13}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libcublasLt.so.12", {"cuda", "2.15", 13}).kind, TorchVerdict::Kind::mismatch);
  EXPECT_EQ(t.judge("libcudart.so.12", {"cuda", "2.8", 12}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libcudart.so.13", {"cuda", "2.8", 12}).kind, TorchVerdict::Kind::mismatch);
  // No major known (a bare .so inspected): any covered major's library.
  EXPECT_EQ(t.judge("libcudart.so.12", {"", "", 0}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libcudart.so.13", {"cuda", "", 0}).kind, TorchVerdict::Kind::provided);
  EXPECT_TRUE(t.coverage_gaps({"cuda", "2.15", 13}).empty());
}

TEST(TorchProvidedDecision, BuiltinTorchLibraryOfOneMinorOnly) {
  const TorchProvided& t = TorchProvided::builtin();
  EXPECT_EQ(t.judge("libtorch_nvshmem.so", {"cuda", "2.15", 13}).kind, TorchVerdict::Kind::provided);
  const TorchVerdict v = t.judge("libtorch_nvshmem.so", {"cuda", "2.6", 12});
  ASSERT_EQ(v.kind, TorchVerdict::Kind::mismatch);
  EXPECT_NE(v.reason.find("torch 2.6 ships no libtorch_nvshmem.so"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("2.15"), std::string::npos) << v.reason;
  // A CPU build has no CUDA library of torch's own.
  EXPECT_EQ(t.judge("libtorch_cuda.so", {"cpu", "2.15", 0}).kind, TorchVerdict::Kind::absent);
}

// Debian's and conda's torch version the sonames of the same libraries;
// the sample kernel's CPU variant links Debian's libtorch_cpu.so.1.13.
TEST(TorchProvidedDecision, BuiltinDistributionVersionedTorchLibraries) {
  const TorchProvided& t = TorchProvided::builtin();
  EXPECT_EQ(t.judge("libtorch_cpu.so.1.13", {"cpu", "2.7", 0}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libc10.so.2.11", {"cuda", "2.11", 13}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libtorch_nvshmem.so.1", {"cuda", "2.6", 12}).kind, TorchVerdict::Kind::mismatch);
}

TEST(TorchProvidedDecision, BuiltinHipMajorIsTheRocmMajor) {
  const TorchProvided& t = TorchProvided::builtin();
  EXPECT_EQ(t.judge("libamdhip64.so.7", {"rocm", "2.9", 7}).kind, TorchVerdict::Kind::provided);
  const TorchVerdict v = t.judge("libamdhip64.so.6", {"rocm", "2.9", 7});
  ASSERT_EQ(v.kind, TorchVerdict::Kind::mismatch);
  EXPECT_NE(v.reason.find("provides libamdhip64.so.7"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("rocm6x variant"), std::string::npos) << v.reason;
  EXPECT_EQ(t.judge("libamdhip64.so.6", {"rocm", "2.7", 6}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libamdhip64.so.6", {"cuda", "2.7", 12}).kind, TorchVerdict::Kind::absent);
  EXPECT_EQ(t.judge("librocblas.so.4", {"rocm", "2.7", 6}).kind, TorchVerdict::Kind::provided);
}

// A small file written here, so the decision is tested apart from the data:
// CUDA 7's wheel ships libcudart.so.7 and libcudnn.so.5, CUDA 8's
// libcudart.so.8 and libcudnn.so.5; torch 1.1 is CUDA 8, torch 1.0 CUDA 7.
const char* kSmallData = R"({
  "rocm": {"rule": "ROCm N ships libamdhip64.so.N"},
  "libraries": [
    {"pattern": "libtorch*.so*", "backends": ["any"], "reason": "name fallback", "fallback": true},
    {"pattern": "libcuda.so.1", "backends": ["cuda"], "reason": "driver"}],
  "torch": [
    {"minor": "1.0", "version": "1.0.2", "wheel": "torch-1.0.2-x.whl", "sha256": "a", "cuda": "7.5",
     "torch_lib": {"any": ["libtorch.so"], "cuda": []}},
    {"minor": "1.1", "version": "1.1.0", "wheel": "torch-1.1.0-x.whl", "sha256": "b", "cuda": "8.0",
     "torch_lib": {"any": ["libtorch.so"], "cuda": ["libtorch_new.so"]}}],
  "cuda": [
    {"major": 7, "packages": [{"name": "rt7", "version": "7.5", "sonames": ["libcudart.so.7"]},
                              {"name": "dnn", "version": "5.1", "sonames": ["libcudnn.so.5"]}]},
    {"major": 8, "packages": [{"name": "rt8", "version": "8.0", "sonames": ["libcudart.so.8"]},
                              {"name": "dnn", "version": "5.2", "sonames": ["libcudnn.so.5"]}]}]
})";

TEST(TorchProvidedDecision, ExactSonamesOfTheVariantsMajor) {
  const TorchProvided t = TorchProvided::parse(kSmallData, "small.json");
  EXPECT_EQ(t.judge("libcudart.so.8", {"cuda", "1.1", 8}).reason, "rt8 8.0 wheel, pinned by torch's CUDA 8 builds");
  EXPECT_EQ(t.judge("libcudart.so.7", {"cuda", "1.1", 8}).kind, TorchVerdict::Kind::mismatch);
  EXPECT_EQ(t.judge("libcudnn.so.5", {"cuda", "1.1", 8}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libcudnn.so.4", {"cuda", "1.1", 8}).kind, TorchVerdict::Kind::mismatch);
  EXPECT_EQ(t.judge("libcuda.so.1", {"cuda", "1.1", 8}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libother.so.8", {"cuda", "1.1", 8}).kind, TorchVerdict::Kind::absent);
  EXPECT_EQ(t.judge("libtorch_new.so", {"cuda", "1.1", 8}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libtorch_new.so", {"cuda", "1.0", 7}).kind, TorchVerdict::Kind::mismatch);
  // Covered minor: the name fallback does not apply.
  EXPECT_EQ(t.judge("libtorch_gone.so", {"cuda", "1.1", 8}).kind, TorchVerdict::Kind::absent);
  EXPECT_EQ(t.judge("libtorch_new.so", {"cpu", "1.1", 0}).kind, TorchVerdict::Kind::absent);
}

TEST(TorchProvidedDecision, RulesWhereTheDataDoesNotCover) {
  const TorchProvided t = TorchProvided::parse(kSmallData, "small.json");
  const TorchTarget uncovered{"cuda", "1.9", 9};
  const auto gaps = t.coverage_gaps(uncovered);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_NE(gaps[0].find("covers torch 1.0, 1.1, not 1.9"), std::string::npos) << gaps[0];
  EXPECT_NE(gaps[1].find("covers CUDA 7, 8, not 9"), std::string::npos) << gaps[1];
  EXPECT_EQ(t.judge("libtorch_gone.so", uncovered).reason, "name fallback");
  // libcudart's major followed CUDA's in 7 and 8, so CUDA 9 brings libcudart.so.9.
  EXPECT_EQ(t.judge("libcudart.so.9", uncovered).kind, TorchVerdict::Kind::provided);
  const TorchVerdict v = t.judge("libcudart.so.8", uncovered);
  ASSERT_EQ(v.kind, TorchVerdict::Kind::mismatch);
  EXPECT_NE(v.reason.find("provides libcudart.so.9"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("cu8x variant"), std::string::npos) << v.reason;
  // libcudnn's did not: the majors seen in the data are accepted.
  EXPECT_EQ(t.judge("libcudnn.so.5", uncovered).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libcudnn.so.9", uncovered).kind, TorchVerdict::Kind::absent);
  EXPECT_TRUE(t.coverage_gaps({"rocm", "1.1", 6}).empty());
  EXPECT_EQ(t.judge("libamdhip64.so.6", {"rocm", "1.1", 6}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libamdhip64.so.5", {"rocm", "1.1", 6}).kind, TorchVerdict::Kind::mismatch);
}

TEST(TorchProvidedDecision, SonameFamily) {
  EXPECT_EQ(soname_family("libcudart.so.12"), (std::pair<std::string, std::string>{"libcudart.so", "12"}));
  EXPECT_EQ(soname_family("libc10.so"), (std::pair<std::string, std::string>{"libc10.so", ""}));
  EXPECT_EQ(soname_family("libnvrtc-builtins.so.13.0"), (std::pair<std::string, std::string>{"libnvrtc-builtins.so", "13.0"}));
  EXPECT_EQ(soname_family("libnvrtc.alt.so.13"), (std::pair<std::string, std::string>{"libnvrtc.alt.so", "13"}));
  EXPECT_EQ(soname_family("libfoo.so.x"), (std::pair<std::string, std::string>{"libfoo.so.x", ""}));
}

TEST(TorchProvidedData, MatchesByPatternAndBackendInFileOrder) {
  const TorchProvided t = TorchProvided::parse(R"({"libraries": [
      {"pattern": "libfoo.so*", "backends": ["cuda"], "reason": "first"},
      {"pattern": "libfoo.so.1", "backends": ["any"], "reason": "second"},
      {"pattern": "libbar-[0-9].so", "backends": ["rocm", "xpu"], "reason": "third"}]})",
                                               "t.json");
  ASSERT_EQ(t.all().size(), 3u);
  EXPECT_EQ(t.match("libfoo.so.1", "cuda")->reason, "first");
  EXPECT_EQ(t.match("libfoo.so.1", "cpu")->reason, "second");
  EXPECT_EQ(t.match("libfoo.so.1", "")->reason, "first") << "no backend given: every entry applies";
  EXPECT_EQ(t.match("libfoo.so.2", "any")->reason, "first");
  EXPECT_EQ(t.match("libfoo.so.2", "cpu"), nullptr);
  EXPECT_EQ(t.match("libfoobar.so", "cuda"), nullptr) << "fnmatch on the whole soname";
  EXPECT_EQ(t.match("libbar-7.so", "xpu")->reason, "third");
  EXPECT_EQ(t.match("libbar-x.so", "xpu"), nullptr);
}

TEST(TorchProvidedData, MalformedFilesAreInputErrorsNamingTheOrigin) {
  for (const char* text : {"[", R"({})", R"({"libraries": [{"pattern": "x", "backends": ["any"]}]})",
                           R"({"libraries": [{"pattern": "x", "backends": "any", "reason": "r"}]})",
                           R"({"libraries": [{"pattern": "x", "backends": ["any"], "reason": ""}]})",
                           R"({"libraries": [], "torch": [{"minor": "1.0", "version": "1.0.0", "wheel": "w", "sha256": "s", "cuda": "7.5",
                                "torch_lib": {"any": [], "cuda": []}}]})",
                           R"({"libraries": [], "cuda": [{"major": 7, "packages": []}]})"}) {
    const std::string msg = error_of([&] { TorchProvided::parse(text, "torch.json"); }, ErrorKind::input);
    EXPECT_TRUE(msg.starts_with("torch.json")) << text << "\n" << msg;
  }
}

}  // namespace
}  // namespace kwheel
