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
    for (const char* backend : {"cpu", "cuda", "rocm", ""}) EXPECT_NE(t.match(lib, backend), nullptr) << lib << " " << backend;
  // CUDA torch brings the CUDA runtime (nvidia-cuda-runtime wheels); a CPU torch does not.
  EXPECT_NE(t.match("libcudart.so.12", "cuda"), nullptr);
  EXPECT_EQ(t.match("libcudart.so.12", "cpu"), nullptr);
  EXPECT_NE(t.match("libc10_cuda.so", "cuda"), nullptr);
  EXPECT_EQ(t.match("libpng16.so.16", "cuda"), nullptr);
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
                           R"({"libraries": [{"pattern": "x", "backends": ["any"], "reason": ""}]})"}) {
    const std::string msg = error_of([&] { TorchProvided::parse(text, "torch.json"); }, ErrorKind::input);
    EXPECT_TRUE(msg.starts_with("torch.json")) << text << "\n" << msg;
  }
}

}  // namespace
}  // namespace kwheel
