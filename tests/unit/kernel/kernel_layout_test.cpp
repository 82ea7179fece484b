// The three layouts of a build variant and the one import package a wheel
// installs from each (docs/wheel-naming.md).
#include "kwheel/kernel/kernel_layout.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"

#include <algorithm>
#include <fstream>

using namespace kwheel;

namespace {

VariantInput variant(std::vector<std::string> paths) {
  VariantInput v{"torch29-cxx11-cpu-x86_64-linux", {}};
  for (auto& p : paths) v.files.push_back({p, "/nonexistent/" + p, 1, false});
  return v;
}

KernelMetadata named(const std::string& name, std::optional<std::string> id = std::nullopt) {
  KernelMetadata md;
  md.name = name;
  md.id = id;
  return md;
}

std::vector<std::string> archive_paths(const VariantLayout& l) {
  std::vector<std::string> out;
  for (const auto& m : l.members) out.push_back(m.archive_path);
  return out;
}

std::string error_of(const VariantInput& v, const KernelMetadata* md, const std::string& fallback) {
  return kwheel::testing::error_of([&] { lay_out_variant(v, md, "", fallback); });
}

}  // namespace

TEST(KernelLayout, FlatFilesBecomeThePackageNamedByMetadata) {
  auto v = variant({"__init__.py", "_ops.py", "_my_kernel_cpu_7a4e5a7.abi3.so", "layers/__init__.py", "metadata.json"});
  auto md = named("my-kernel", "_my_kernel_cpu_7a4e5a7");
  auto l = lay_out_variant(v, &md, "", "repo-name");
  EXPECT_EQ(l.kind, VariantLayoutKind::flat);
  EXPECT_EQ(l.package, "my_kernel");
  EXPECT_EQ(archive_paths(l), (std::vector<std::string>{"my_kernel/__init__.py", "my_kernel/_ops.py", "my_kernel/_my_kernel_cpu_7a4e5a7.abi3.so",
                                                         "my_kernel/layers/__init__.py", "my_kernel/metadata.json"}));
  EXPECT_TRUE(l.left_out.empty());
  ASSERT_NE(l.metadata, nullptr);
  EXPECT_EQ(l.metadata->path, "metadata.json");
}

TEST(KernelLayout, CompatDirectoryIsLeftOut) {
  auto v = variant({"__init__.py", "_ops.py", "_my_kernel_cpu_7a4e5a7.abi3.so", "metadata.json", "my_kernel/__init__.py",
                    "__pycache__/_ops.cpython-311.pyc"});
  auto md = named("my-kernel");
  auto l = lay_out_variant(v, &md, "", "");
  EXPECT_EQ(l.kind, VariantLayoutKind::compat);
  EXPECT_EQ(l.package, "my_kernel");
  EXPECT_EQ(l.left_out, (std::vector<std::string>{"my_kernel/__init__.py", "__pycache__/_ops.cpython-311.pyc"}));
  EXPECT_EQ(archive_paths(l).size(), 4u);
}

TEST(KernelLayout, NestedKeepsItsPackageAndTakesMetadataIn) {
  auto v = variant({"metadata.json", "img2gray/__init__.py", "img2gray/_ops.py", "README.md"});
  auto md = named("img2gray");
  auto l = lay_out_variant(v, &md, "", "other-repo");
  EXPECT_EQ(l.kind, VariantLayoutKind::nested);
  EXPECT_EQ(archive_paths(l), (std::vector<std::string>{"img2gray/metadata.json", "img2gray/__init__.py", "img2gray/_ops.py"}));
  EXPECT_EQ(l.left_out, (std::vector<std::string>{"README.md"}));
  // Without metadata: the package directory, whatever the repo is called.
  auto bare = lay_out_variant(variant({"img2gray/__init__.py"}), nullptr, "", "img2gray-mirror");
  EXPECT_EQ(bare.package, "img2gray");
}

TEST(KernelLayout, FlatWithoutMetadataNeedsAName) {
  auto v = variant({"__init__.py", "_ops.py"});
  auto e = error_of(v, nullptr, "");
  EXPECT_NE(e.find("variant 'torch29-cxx11-cpu-x86_64-linux' is flat"), std::string::npos) << e;
  EXPECT_NE(e.find("pass --name"), std::string::npos) << e;
  EXPECT_NE(error_of(v, nullptr, "repo-name").find("is flat"), std::string::npos);  // never named by where it was found
  EXPECT_EQ(lay_out_variant(v, nullptr, "my-kernel", "").package, "my_kernel");  // --name
}

TEST(KernelLayout, MetadataThatDisagreesWithTheFiles) {
  auto md = named("img2gray", "_img2gray_cpu_abc1234");
  auto e = error_of(variant({"__init__.py", "_other_cpu_0000000.abi3.so"}), &md, "");
  EXPECT_NE(e.find("id '_img2gray_cpu_abc1234' names no extension module here (found _other_cpu_0000000.abi3.so)"), std::string::npos) << e;
  auto other = named("relu");
  e = error_of(variant({"metadata.json", "img2gray/__init__.py"}), &other, "");
  EXPECT_NE(e.find("metadata.json names the kernel 'relu' but its package directory is 'img2gray/'"), std::string::npos) << e;
  // A noarch variant has no extension module to check.
  EXPECT_NO_THROW(lay_out_variant(variant({"__init__.py", "_ops.py"}), &md, "", ""));
}

TEST(KernelLayout, PackageDirectoryNamedLikeWheelMetadataIsRefused) {
  // Found from outside: build/<v>/x-1.0.dist-info/__init__.py made a wheel
  // with two .dist-info directories, which pip refuses to install.
  for (const std::string pkg : {"x-1.0.dist-info", "x-1.0.data"}) {
    auto v = variant({pkg + "/__init__.py", pkg + "/_ops.py"});
    const std::string why = error_of(v, nullptr, "repo-name");
    EXPECT_NE(why.find("package directory '" + pkg + "/'"), std::string::npos) << why;
    EXPECT_NE(why.find("pip refuses"), std::string::npos) << why;
    EXPECT_NE(why.find("rename the package directory"), std::string::npos) << why;
  }
}

// A nested package may carry its own metadata.json and bundle beside the
// variant's; the wheel carries the package's, so they must be the bytes the
// build verified, or the variant is refused.
TEST(KernelLayout, ANestedPackagesOwnMetadataMustBeTheVariantsBytes) {
  kwheel::TempDir d("layout");
  auto put = [&](const std::string& name, const std::string& text) {
    std::ofstream(d.path() / name, std::ios::binary) << text;
    return RepoFile{"", d.path() / name, text.size(), false};
  };
  VariantInput v{"torch29-cxx11-cpu-x86_64-linux", {}};
  RepoFile top = put("top.json", R"({"name": "k"})"), same = put("same.json", R"({"name": "k"})"), other = put("other.json", R"({"name": "x"})");
  top.path = "metadata.json";
  same.path = "k/metadata.json";
  v.files = {{"k/__init__.py", "/nonexistent/init", 1, false}, top, same};
  const auto paths = archive_paths(lay_out_variant(v, nullptr, "", "k"));
  EXPECT_EQ(std::count(paths.begin(), paths.end(), "k/metadata.json"), 1);
  other.path = "k/metadata.json";
  v.files = {{"k/__init__.py", "/nonexistent/init", 1, false}, top, other};
  const std::string e = error_of(v, nullptr, "k");
  EXPECT_NE(e.find("'k/metadata.json' differs from the variant's 'metadata.json'"), std::string::npos) << e;
}
