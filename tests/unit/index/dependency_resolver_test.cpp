// Reading uv's answer and finding uv. The texts are uv 0.13.9's real output
// of `uv pip compile --generate-hashes --no-header --no-annotate
// --emit-index-annotation` (tqdm==4.67.1 --universal; einops==0.8.2 and
// kornia==0.7.0 with --no-emit-package kornia), pasted here.
#include "kwheel/index/dependency_resolver.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "error_support.hpp"
#include "kwheel/base/temp_dir.hpp"

using namespace kwheel;
using kwheel::testing::error_of;
namespace fs = std::filesystem;

TEST(UvRequirements, MarkersHashesAndIndex) {
  const auto deps = parse_uv_requirements(R"(colorama==0.4.6 ; sys_platform == 'win32' \
    --hash=sha256:08695f5cb7ed6e0531a20572697297273c47b8cae5a63ffc6d6ed5c201be6e44 \
    --hash=sha256:4f1d9991f5acc0ca119f9d443620b77f9d6b33703e51011c16baf57afb285fc6
    # from https://pypi.org/simple
tqdm==4.67.1 \
    --hash=sha256:26445eca388f82e72884e0d580d5464cd801a3ea01e63e5601bdff9ba6a48de2 \
    --hash=sha256:f8aef9c52c08c13a65f30ea34f4e5aac3fd1a34959879d7e59e63027286627f2
    # from https://pypi.org/simple
)");
  ASSERT_EQ(deps.size(), 2u);
  EXPECT_EQ(deps[0].name, "colorama");
  EXPECT_EQ(deps[0].version, "0.4.6");
  EXPECT_EQ(deps[0].marker, "sys_platform == 'win32'");
  EXPECT_EQ(deps[0].sha256, (std::vector<std::string>{"08695f5cb7ed6e0531a20572697297273c47b8cae5a63ffc6d6ed5c201be6e44",
                                                      "4f1d9991f5acc0ca119f9d443620b77f9d6b33703e51011c16baf57afb285fc6"}));
  EXPECT_EQ(deps[0].index, "https://pypi.org/simple");
  EXPECT_EQ(deps[1].name, "tqdm");
  EXPECT_EQ(deps[1].marker, "");
  EXPECT_EQ(deps[1].sha256.size(), 2u);
}

TEST(UvRequirements, SortedByNameAndEmpty) {
  const auto deps = parse_uv_requirements(R"(packaging==26.4 \
    --hash=sha256:81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2 \
    --hash=sha256:c4b671c41ddb9bf26e543c37723610d28fb6bf7affc4da17cf048d419d2c062a
    # from https://pypi.org/simple
einops==0.8.2 \
    --hash=sha256:54058201ac7087911181bfec4af6091bb59380360f069276601256a76af08193 \
    --hash=sha256:609da665570e5e265e27283aab09e7f279ade90c4f01bcfca111f3d3e13f2827
    # from https://pypi.org/simple
)");
  ASSERT_EQ(deps.size(), 2u);
  EXPECT_EQ(deps[0].name, "einops");
  EXPECT_EQ(deps[1].name, "packaging");
  EXPECT_TRUE(parse_uv_requirements("").empty());
}

TEST(UvRequirements, RefusesWhatIsNotAPin) {
  EXPECT_NE(error_of([] { parse_uv_requirements("einops>=0.8\n"); }).find("not a name==version pin"), std::string::npos);
  EXPECT_NE(error_of([] { parse_uv_requirements("einops @ https://h/einops.whl\n"); }).find("not a name==version pin"), std::string::npos);
  EXPECT_NE(error_of([] { parse_uv_requirements("einops==0.8.2 --index-url https://h/\n"); }).find("'--index-url'"), std::string::npos);
}

// What uv writes is an index's word passed on: each value is held to what
// it must be before it goes into requirements.txt.
TEST(UvRequirements, RefusesWhatNoPinHolds) {
  const std::string h = " --hash=sha256:08695f5cb7ed6e0531a20572697297273c47b8cae5a63ffc6d6ed5c201be6e44";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"einops==0.8.2\n", "without a sha256"},
      {"einops==0.8.2 --hash=sha256:" + std::string(63, 'a') + "\n", "not 64 hex digits"},
      {"einops==0.8.2 --hash=sha256:" + std::string(63, 'a') + "#\n", "not 64 hex digits"},
      {"ein\"ops==0.8.2" + h + "\n", "not a PEP 508 name"},
      {"einops==0.8\x0c.2" + h + "\n", "not a PEP 440 version"},
      {"einops==0.8.2%0A" + h + "\n", "not a PEP 440 version"},
      {"einops==0.8.2 ; extra == 'a #b'" + h + "\n", "marker"},
      {"einops==0.8.2 ; extra == 'a -i'" + h + "\n", "marker"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string why = error_of([&] { parse_uv_requirements(text); });
    EXPECT_NE(why.find(expected), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
  // Upper-case hex from uv is lowered, as pip does.
  EXPECT_EQ(parse_uv_requirements("einops==0.8.2 --hash=sha256:" + std::string(64, 'A') + "\n").at(0).sha256.at(0), std::string(64, 'a'));
  EXPECT_NE(error_of([&] { parse_uv_requirements("einops==0.8.2" + h + "\n    # from https://h/\x7fsimple\n"); }).find("control byte"), std::string::npos);
}

TEST(FindUv, ExplicitThenEnvironmentThenPath) {
  const TempDir dir("find-uv");
  const fs::path uv = dir.path() / "uv";
  std::ofstream(uv) << "#!/bin/sh\n";
  fs::permissions(uv, fs::perms::owner_all);
  EXPECT_EQ(find_uv(uv.string(), "x"), uv.string());
  EXPECT_NE(error_of([&] { find_uv((dir.path() / "nope").string(), "x"); }, ErrorKind::not_found).find("--uv '"), std::string::npos);

  const char* old_path = getenv("PATH");
  const std::string saved_path = old_path ? old_path : "";
  ::setenv("KWHEEL_UV", "/nonexistent/uv", 1);
  EXPECT_NE(error_of([] { find_uv(std::nullopt, "x"); }, ErrorKind::not_found).find("KWHEEL_UV '/nonexistent/uv'"), std::string::npos);
  ::unsetenv("KWHEEL_UV");
  ::setenv("PATH", dir.path().c_str(), 1);
  EXPECT_EQ(find_uv(std::nullopt, "x"), uv.string());
  ::setenv("PATH", "/nonexistent", 1);
  const std::string why = error_of([] { find_uv(std::nullopt, "pinning the dependencies of depkern"); }, ErrorKind::not_found);
  EXPECT_NE(why.find("pinning the dependencies of depkern needs uv"), std::string::npos) << why;
  EXPECT_NE(why.find("--no-deps"), std::string::npos) << why;
  ::setenv("PATH", saved_path.c_str(), 1);
}

// kernels.in is a requirements file uv obeys line by line: a kernel's name
// or version from a hostile index must not add an option, a URL or a
// second requirement to it. Refused before uv is asked anything but its
// version.
TEST(ResolveDependencies, AKernelPinThatIsNotNameEqualsVersionNeverReachesUv) {
  const TempDir dir("fake-uv");
  const fs::path uv = dir.path() / "uv", log = dir.path() / "argv.log";
  std::ofstream(uv) << "#!/bin/sh\necho \"$*\" >> '" << log.string() << "'\necho 'uv 0.13.9'\n";
  fs::permissions(uv, fs::perms::owner_all);
  for (const std::string pin : {"evil==1\n--index-url http://127.0.0.1:9/", "evil==1 --hash=sha256:00", "evil @ http://127.0.0.1:9/e.whl",
                                "evil==1 ; python_version > '3'", "evil>=1", "-r /etc/passwd", "evil[x]==1"}) {
    DependencyRequest req;
    req.uv = uv.string();
    req.kernel_pins = {pin};
    req.kernel_names = {"evil"};
    req.kernels_source = dir.path().string();
    EXPECT_NE(error_of([&] { resolve_dependencies(req); }).find("is not a name==version pin for uv"), std::string::npos) << pin;
  }
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) EXPECT_EQ(line, "--version");
}
