// The pin file around the dependencies: the resolver's header joins the
// comments above the index line, the dependencies' index follows it, the
// dependencies' lines follow the kernels'; the kernels' file is unchanged
// when there is nothing to add. A lock that would carry a login is refused.
#include "kwheel/index/pin_dependencies.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"

using namespace kwheel;
using kwheel::testing::error_of;

namespace {

const std::string kA(64, 'a'), kB(64, 'b'), kC(64, 'c'), kD(64, 'd');

const std::string kKernels =
    "# kwheel pin: depkern for /usr/bin/python3 (Python 3.11, torch 1.13.0a0, CPU)\n"
    "# file: depkern-0.1.0+torch.cpu-py3-none-any.whl\n"
    "--index-url http://127.0.0.1:8000/simple/\n"
    "depkern==0.1.0+torch.cpu --hash=sha256:" + kA + "\n";

PinnedDependencies einops_resolution() {
  DependencyResolution r;
  r.tool = "uv 0.13.9";
  r.command = "uv pip compile --generate-hashes";
  r.dependencies.push_back({"einops", "0.8.2", "", {kB, kC}, "https://mirror.example.com/simple/"});
  r.dependencies.push_back({"colorama", "0.4.6", "sys_platform == 'win32'", {kD}, "https://mirror.example.com/simple/"});
  return {{}, r};
}

}  // namespace

TEST(PinDependencies, NothingToAddKeepsTheKernelsFile) {
  EXPECT_EQ(requirements_with_dependencies(kKernels, {}, {}, "http://127.0.0.1:8000/simple/"), kKernels);
}

TEST(PinDependencies, HeaderIndexAndLines) {
  DependencyOptions o;
  o.deps_index = "https://ci:pw@mirror.example.com/simple/";
  const std::string text = requirements_with_dependencies(kKernels, einops_resolution(), o, "http://127.0.0.1:8000/simple/");
  const std::string expected =
      "# kwheel pin: depkern for /usr/bin/python3 (Python 3.11, torch 1.13.0a0, CPU)\n"
      "# file: depkern-0.1.0+torch.cpu-py3-none-any.whl\n"
      "# dependencies resolved by uv 0.13.9 (uv pip compile --generate-hashes), for the same target; torch is the environment's: "
      "uv was told to exclude it (--excludes), so neither it nor what only it needs is pinned\n"
      "--index-url http://127.0.0.1:8000/simple/\n"
      "--extra-index-url https://mirror.example.com/simple/\n"
      "depkern==0.1.0+torch.cpu --hash=sha256:" + kA + "\n"
      "einops==0.8.2 --hash=sha256:" + kB + " --hash=sha256:" + kC + "\n"
      "colorama==0.4.6 ; sys_platform == 'win32' --hash=sha256:" + kD + "\n";
  EXPECT_EQ(text, expected);
}

// Belt and braces: whatever reached the resolution, the text is held to
// the lines kwheel writes (index_values.hpp), and comments stay comments.
TEST(PinDependencies, ALineNoPinHoldsIsRefusedAndCommentsStayOneLine) {
  PinnedDependencies deps = einops_resolution();
  deps.resolution->tool = "uv 0.13.9\n--trusted-host evil";
  const std::string text = requirements_with_dependencies(kKernels, deps, {}, "http://127.0.0.1:8000/simple/");
  EXPECT_NE(text.find("# dependencies resolved by uv 0.13.9\\x0a--trusted-host evil"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n--trusted-host"), std::string::npos) << text;
  deps.resolution->dependencies[0].version = "0.8.2\n-i http://evil/";
  const std::string why = error_of([&] { requirements_with_dependencies(kKernels, deps, {}, "http://127.0.0.1:8000/simple/"); });
  EXPECT_NE(why.find("would hold the line 'einops==0.8.2'"), std::string::npos) << why;  // the line before the break: no hash
  deps = einops_resolution();
  deps.resolution->dependencies[0].sha256 = {"bb"};
  EXPECT_NE(error_of([&] { requirements_with_dependencies(kKernels, deps, {}, "http://127.0.0.1:8000/simple/"); }).find("nothing is written"), std::string::npos);
}

TEST(PinDependencies, LockWithALoginIsRefused) {
  PinResult k;
  k.project = "depkern";
  k.version = "0.1.0+torch.cpu";
  k.files.push_back({"depkern-0.1.0+torch.cpu-py3-none-any.whl", "http://ci:pw@127.0.0.1:8000/packages/depkern.whl", std::string(64, 'a'), "", {}, {}, "", false});
  const std::string why = error_of([&] { pylock_with_dependencies({k}, {}, "http://127.0.0.1:8000/simple/", "t"); });
  EXPECT_NE(why.find("credentials"), std::string::npos) << why;
  EXPECT_EQ(why.find("pw"), std::string::npos) << why;
}
