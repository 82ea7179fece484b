// plan_wheel and build_wheels: bad variants are refused with the variant's
// name, and a build is all-or-nothing: when any selected variant fails, the
// output directory is left exactly as it was.
#include "kwheel/factory/build.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>

#include "factory/build_fixtures.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

using namespace kwheel;
namespace fs = std::filesystem;
using kwheel::testing::BuiltWithoutDigest;
using kwheel::testing::img2gray;
using kwheel::testing::options;
using kwheel::testing::sha256sum;
using kwheel::testing::slurp;
using kwheel::testing::state_of;
using kwheel::testing::variant;

namespace {


std::string plan_error(const VariantInput& v, const BuildOptions& o, ErrorKind kind = ErrorKind::input) {
  try {
    plan_wheel(v, o);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  return "";
}

// relative path -> bytes of every file below dir, hidden ones included
// (the .kwheel/ build state too); directories map to "<dir>".
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out[e.path().lexically_relative(dir).string()] = e.is_directory() ? "<dir>" : slurp(e.path());
  return out;
}

size_t wheel_count(const std::map<std::string, std::string>& snap) {
  size_t n = 0;
  for (const auto& [name, _] : snap) n += name.ends_with(".whl") && name.find('/') == std::string::npos;
  return n;
}

}  // namespace

TEST(PlanWheel, NamesVersionAndTags) {
  TempDir t;
  auto p = plan_wheel(img2gray(t.path(), "torch210-cxx11-cu130-x86_64-linux"), options(t.path() / "dist"));
  EXPECT_EQ(p.filename, "img2gray-0.1.0+torch2.10.cu130-cp39-abi3-manylinux_2_28_x86_64.whl");
  EXPECT_EQ(p.version, "0.1.0+torch2.10.cu130");
  EXPECT_EQ(p.package, "img2gray");
  EXPECT_EQ(p.contents.dist_info, "img2gray-0.1.0+torch2.10.cu130.dist-info");
  EXPECT_NE(p.contents.metadata.find("\nRequires-Dist: torch==2.10.*\n"), std::string::npos) << p.contents.metadata;
  EXPECT_NE(p.contents.metadata.find("\nVersion: 0.1.0+torch2.10.cu130\n"), std::string::npos);
  EXPECT_NE(p.contents.metadata.find("\nRequires-Python: >=3.9\n"), std::string::npos);
  EXPECT_TRUE(p.contents.metadata.starts_with("Metadata-Version: 2.4\nName: img2gray\n"));
  EXPECT_NE(p.contents.wheel.find("Root-Is-Purelib: false\n"), std::string::npos);
  ASSERT_EQ(p.contents.members.size(), 3u);
  EXPECT_EQ(p.contents.members[0].archive_path, "img2gray/__init__.py");

  auto u = plan_wheel(img2gray(t.path(), "torch-universal"), options(t.path() / "dist"));
  EXPECT_EQ(u.filename, "img2gray-0.1.0-py3-none-any.whl");
  EXPECT_NE(u.contents.wheel.find("Root-Is-Purelib: true\n"), std::string::npos);
  EXPECT_NE(u.contents.metadata.find("\nRequires-Dist: torch\n"), std::string::npos);
  auto c = plan_wheel(img2gray(t.path(), "torch-cuda"), options(t.path() / "dist"));
  EXPECT_EQ(c.filename, "img2gray-0.1.0+torch.cuda-py3-none-any.whl");
}

TEST(PlanWheel, NameIsNormalisedInFilenameButKeptInMetadata) {
  TempDir t;
  auto o = options(t.path() / "dist");
  o.name = "Img2Gray.Fast";
  auto p = plan_wheel(variant(t.path(), "torch-universal", {{"img2gray_fast/__init__.py", ""}}), o);
  EXPECT_EQ(p.filename, "img2gray_fast-0.1.0-py3-none-any.whl");
  EXPECT_EQ(p.package, "img2gray_fast");
  EXPECT_NE(p.contents.metadata.find("\nName: Img2Gray.Fast\n"), std::string::npos);
}

TEST(PlanWheel, OnlyThePackageGoesIn) {
  TempDir t;
  auto p = plan_wheel(variant(t.path(), "torch-universal",
                              {{"img2gray/__init__.py", ""}, {"README.md", "r"}, {"tests/test_x.py", "t"}}),
                      options(t.path() / "dist"));
  ASSERT_EQ(p.contents.members.size(), 1u);
  EXPECT_EQ(p.ignored, (std::vector<std::string>{"README.md", "tests/test_x.py"}));
}

TEST(PlanWheel, SinglePackageWithAnotherNameIsUsed) {
  TempDir t;
  auto p = plan_wheel(variant(t.path(), "torch-universal", {{"other/__init__.py", ""}, {"data/x.txt", ""}}),
                      options(t.path() / "dist"));
  EXPECT_EQ(p.package, "other");
}

TEST(PlanWheel, UnknownBackend) {
  TempDir t;
  auto e = plan_error(img2gray(t.path(), "torch27-cxx11-opencl3-x86_64-linux"), options(t.path()));
  EXPECT_NE(e.find("variant 'torch27-cxx11-opencl3-x86_64-linux'"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown backend 'opencl3'"), std::string::npos) << e;
}

TEST(PlanWheel, MissingPackageDir) {
  TempDir t;
  auto e = plan_error(variant(t.path(), "torch-universal", {{"README.md", "x"}}), options(t.path()));
  EXPECT_NE(e.find("variant 'torch-universal'"), std::string::npos) << e;
  EXPECT_NE(e.find("no package directory 'img2gray/'"), std::string::npos) << e;
  auto two = plan_error(variant(t.path(), "torch-cpu", {{"a/__init__.py", ""}, {"b/__init__.py", ""}}), options(t.path()));
  EXPECT_NE(two.find("variant 'torch-cpu'"), std::string::npos) << two;
  EXPECT_NE(two.find("found a/, b/"), std::string::npos) << two;
}

TEST(PlanWheel, EmptyVariant) {
  auto e = plan_error(VariantInput{"torch27-cxx11-cu126-x86_64-linux", {}}, options("/nonexistent"));
  EXPECT_NE(e.find("variant 'torch27-cxx11-cu126-x86_64-linux'"), std::string::npos) << e;
  EXPECT_NE(e.find("empty"), std::string::npos) << e;
}

TEST(PlanWheel, MinPythonReachesTagAndRequiresPython) {
  TempDir t;
  auto o = options(t.path());
  o.tags.min_python = "3.11";
  auto p = plan_wheel(img2gray(t.path(), "torch27-cxx11-cu126-x86_64-linux"), o);
  EXPECT_EQ(p.filename, "img2gray-0.1.0+torch2.7.cu126-cp311-abi3-manylinux_2_28_x86_64.whl");
  EXPECT_NE(p.contents.metadata.find("\nRequires-Python: >=3.11\n"), std::string::npos);
}

TEST(BuildWheels, BadOptionsAreUsageErrors) {
  TempDir t;
  std::vector<VariantInput> vs{img2gray(t.path(), "torch-universal")};
  for (auto [name, version] : std::vector<std::pair<std::string, std::string>>{
           {"img2gray", ""}, {"img2gray", "one"}, {"img2gray", "0.1.0+torch2.7"}, {"bad name", "0.1.0"}}) {
    auto o = options(t.path() / "dist");
    o.name = name;
    o.version = version;
    try {
      build_wheels(vs, o);
      ADD_FAILURE() << name << " " << version;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(t.path() / "dist"));
}

TEST(BuildWheels, NoVariantMatchesGlob) {
  TempDir t;
  auto o = options(t.path() / "dist");
  o.variant_globs = {"torch99-*"};
  try {
    build_wheels({img2gray(t.path(), "torch-universal")}, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::not_found);
    EXPECT_NE(std::string(e.what()).find("torch-universal"), std::string::npos);
  }
}

TEST(BuildWheels, GlobFilters) {
  TempDir t;
  auto o = options(t.path() / "dist");
  o.variant_globs = {"torch27-*", "torch-cuda"};
  auto r = build_wheels({img2gray(t.path(), "torch-cuda"), img2gray(t.path(), "torch-universal"),
                         img2gray(t.path(), "torch27-cxx11-cu126-x86_64-linux")},
                        o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.committed);
  EXPECT_EQ(r.variants[0].status, VariantResult::Status::built);
  EXPECT_EQ(r.variants[1].status, VariantResult::Status::filtered);
  EXPECT_EQ(r.variants[2].status, VariantResult::Status::built);
  auto files = snapshot(o.out_dir);
  EXPECT_EQ(wheel_count(files), 2u);
  EXPECT_TRUE(files.count("img2gray-0.1.0+torch.cuda-py3-none-any.whl"));
  EXPECT_TRUE(files.count("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl"));
}

TEST(BuildWheels, OneBadVariantLeavesOutDirUnchanged) {
  TempDir t;
  const fs::path out = t.path() / "dist";
  fs::create_directories(out);
  std::ofstream(out / "img2gray-0.0.9-py3-none-any.whl") << "an older wheel";
  std::ofstream(out / "img2gray-0.1.0-py3-none-any.whl") << "same name as a new wheel";
  const auto before = snapshot(out);
  std::vector<VariantInput> vs;
  for (auto n : {"torch-universal", "torch27-cxx11-cu126-x86_64-linux", "torch210-cxx11-cu130-x86_64-linux"})
    vs.push_back(img2gray(t.path(), n));
  vs.push_back(img2gray(t.path(), "torch27-cxx11-opencl3-x86_64-linux"));
  auto o = options(out);
  o.jobs = 2;
  auto r = build_wheels(vs, o);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.committed);
  EXPECT_EQ(r.variants[3].status, VariantResult::Status::failed);
  EXPECT_NE(r.variants[3].error.find("torch27-cxx11-opencl3-x86_64-linux"), std::string::npos);
  EXPECT_EQ(r.variants[0].status, VariantResult::Status::built);  // built, but not committed
  EXPECT_EQ(snapshot(out), before);
}

TEST(BuildWheels, FailureWhileWritingLeavesOutDirUnchanged) {
  // The bad variant plans fine and fails only while its archive is written.
  TempDir t;
  const fs::path out = t.path() / "dist";
  fs::create_directories(out);
  std::ofstream(out / "keep.whl") << "old";
  const auto before = snapshot(out);
  std::vector<VariantInput> vs{img2gray(t.path(), "torch-universal"), img2gray(t.path(), "torch-cpu"),
                               img2gray(t.path(), "torch29-cxx11-cpu-x86_64-linux")};
  vs[1].files[1].source = t.path() / "vanished.py";
  auto r = build_wheels(vs, options(out));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.variants[1].status, VariantResult::Status::failed);
  EXPECT_NE(r.variants[1].error.find("vanished.py"), std::string::npos) << r.variants[1].error;
  EXPECT_EQ(snapshot(out), before);
}

TEST(BuildWheels, SameBytesWhateverTheParallelism) {
  TempDir t;
  std::vector<VariantInput> vs;
  for (auto n : {"torch-universal", "torch27-cxx11-cu126-x86_64-linux", "torch28-cxx11-cu129-aarch64-linux", "torch-xpu"})
    vs.push_back(img2gray(t.path(), n));
  auto a = options(t.path() / "a");
  a.jobs = 1;
  auto b = options(t.path() / "b");
  b.jobs = 4;
  ASSERT_TRUE(build_wheels(vs, a).ok());
  ASSERT_TRUE(build_wheels(vs, b).ok());
  auto sa = snapshot(a.out_dir), sb = snapshot(b.out_dir);
  EXPECT_EQ(wheel_count(sa), 4u);
  for (const auto& [name, bytes] : sa)
    if (name.ends_with(".whl") && name.find('/') == std::string::npos) EXPECT_EQ(bytes, sb[name]) << name;
}

TEST(BuildWheels, JsonReportShape) {
  TempDir t;
  auto r = build_wheels({img2gray(t.path(), "torch-universal"), img2gray(t.path(), "torch27-cxx11-opencl3-x86_64-linux")},
                        options(t.path() / "dist"));
  auto j = to_json(r);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["committed"], false);
  ASSERT_EQ(j["variants"].size(), 2u);
  EXPECT_EQ(j["variants"][0]["status"], "built");
  EXPECT_EQ(j["variants"][0]["filename"], "img2gray-0.1.0-py3-none-any.whl");
  EXPECT_EQ(j["variants"][0]["tags"], nlohmann::json::array({"py3-none-any"}));
  EXPECT_EQ(j["variants"][1]["status"], "failed");
  EXPECT_TRUE(j["variants"][1]["error"].is_string());
  EXPECT_FALSE(j["variants"][1].contains("filename"));
}

TEST(PlanWheel, AutoTagFromElfEvidence) {
  // A .so that needs no versioned symbol fits the oldest policy auditwheel
  // knows for its architecture: manylinux_2_5 (manylinux1, PEP 513) on
  // x86_64, manylinux_2_17 (manylinux2014, PEP 599, the first with aarch64).
  TempDir t;
  auto o = options(t.path());
  o.tags.manylinux = "auto";
  auto x = plan_wheel(img2gray(t.path(), "torch27-cxx11-cu126-x86_64-linux"), o);
  EXPECT_EQ(x.tags.platforms, (std::vector<std::string>{"manylinux1_x86_64", "manylinux_2_5_x86_64"}));
  auto a = plan_wheel(img2gray(t.path(), "torch28-cxx11-cu129-aarch64-linux"), o);
  EXPECT_EQ(a.tags.platforms, (std::vector<std::string>{"manylinux2014_aarch64", "manylinux_2_17_aarch64"}));
  EXPECT_EQ(a.filename, "img2gray-0.1.0+torch2.8.cu129-cp39-abi3-manylinux2014_aarch64.manylinux_2_17_aarch64.whl");
}

TEST(PlanWheel, NoSharedObjectInLinuxVariantUnderAuto) {
  TempDir t;
  auto o = options(t.path());
  o.tags.manylinux = "auto";
  auto e = plan_error(variant(t.path(), "torch27-cxx11-cu126-x86_64-linux", {{"img2gray/__init__.py", ""}}), o, ErrorKind::policy);
  EXPECT_NE(e.find("torch27-cxx11-cu126-x86_64-linux"), std::string::npos) << e;
}

// kernels' own tests carry repos with both spellings of one build; kernels
// loads the tagless one, and both would give the same wheel name.
TEST(BuildWheels, TaglessTwinSupersedesTheCxx11Spelling) {
  TempDir t;
  auto o = options(t.path() / "dist");
  auto report = build_wheels({img2gray(t.path(), "torch27-cu126-x86_64-linux"), img2gray(t.path(), "torch27-cxx11-cu126-x86_64-linux")}, o);
  ASSERT_TRUE(report.committed);
  ASSERT_EQ(report.variants.size(), 2u);
  EXPECT_EQ(report.variants[0].status, VariantResult::Status::built);
  EXPECT_EQ(report.variants[1].status, VariantResult::Status::filtered);
  EXPECT_NE(report.variants[1].error.find("superseded by torch27-cu126-x86_64-linux"), std::string::npos) << report.variants[1].error;
  EXPECT_EQ(wheel_count(snapshot(t.path() / "dist")), 1u);
}

// A reuse-state file with an ill-typed field once aborted the build from a
// worker thread (nlohmann type_error), and every later build with it: a
// damaged state means "not reusable", and the wheel is written again.
TEST(BuildWheels, IllTypedReuseStateIsNotReusable) {
  TempDir t;
  auto o = options(t.path() / "dist");
  auto first = build_wheels({img2gray(t.path(), "torch-universal")}, o);
  ASSERT_TRUE(first.committed);
  const fs::path state = t.path() / "dist" / ".kwheel" / (first.variants[0].wheel.filename().string() + ".json");
  auto j = nlohmann::json::parse(slurp(state));
  for (auto [key, bad] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"sha256", 123}, {"size", "big"}, {"fingerprint", nlohmann::json::array()}, {"wheel_identity", nullptr}}) {
    auto damaged = j;
    damaged[key] = bad;
    std::ofstream(state, std::ios::trunc) << damaged.dump();
    auto again = build_wheels({img2gray(t.path(), "torch-universal")}, o);
    ASSERT_TRUE(again.committed) << key;
    EXPECT_FALSE(again.variants[0].reused) << key;
    EXPECT_EQ(again.variants[0].sha256, first.variants[0].sha256) << key;
  }
}

// A build that reports no digest takes none; a later one that does takes it
// for the wheel it keeps, and records it at the commit.
TEST(BuildWheels, AKeptWheelGetsItsDigestWhenARunFirstReportsIt) {
  BuiltWithoutDigest b;
  EXPECT_FALSE(state_of(b.wheel).contains("sha256"));
  auto again = build_wheels(b.variants, b.o);
  ASSERT_TRUE(again.committed);
  EXPECT_TRUE(again.variants[0].reused);
  EXPECT_EQ(again.variants[0].sha256, sha256sum(b.wheel));
  EXPECT_EQ(state_of(b.wheel).value("sha256", ""), sha256sum(b.wheel));
}
