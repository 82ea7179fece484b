// kernels.lock in both formats, and [tool.kernels.dependencies].
#include "kwheel/kernel/kernel_lock.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

using namespace kwheel;

namespace {

const std::string A(40, 'a'), B(40, 'b');

std::string error_of(const std::string& json) {
  return kwheel::testing::error_of([&] { parse_kernels_lock(json, "lock file 'kernels.lock'"); });
}

}  // namespace

TEST(KernelLock, CurrentFormat) {
  // As kernels 0.17 `kernels lock` writes it (kernels-data lock.rs).
  auto locks = parse_kernels_lock(R"([
    {"dependency": {"repo-id": "kernels-community/activation", "version": 1}, "lock": {"commit": ")" + A + R"("}},
    {"dependency": {"repo-id": "kernels-community/relu", "revision": "main"}, "lock": {"commit": ")" + B + R"("}}])",
                                  "kernels.lock");
  ASSERT_EQ(locks.size(), 2u);
  EXPECT_EQ(locks[0].dependency.repo_id, "kernels-community/activation");
  EXPECT_EQ(locks[0].dependency.version, 1u);
  EXPECT_EQ(locks[0].commit, A);
  EXPECT_EQ(locks[0].format, "0.17");
  EXPECT_EQ(locks[1].dependency.revision, "main");
}

TEST(KernelLock, OlderFormat) {
  auto locks = parse_kernels_lock(R"([{"repo_id": "kernels-community/activation", "sha": ")" + A +
                                      R"(", "variants": {"torch27-cxx11-cu126-x86_64-linux": {"hash": "sha256-x", "hash_type": "git_lfs_concat"}}}])",
                                  "kernels.lock");
  ASSERT_EQ(locks.size(), 1u);
  EXPECT_EQ(locks[0].format, "legacy");
  EXPECT_EQ(locks[0].commit, A);
  EXPECT_FALSE(locks[0].dependency.version);
}

TEST(KernelLock, BadEntriesNameThemselves) {
  EXPECT_NE(error_of("{}").find("must hold a JSON list"), std::string::npos);
  EXPECT_NE(error_of("[]").find("locks no kernel"), std::string::npos);
  auto e = error_of(R"([{"dependency": {"repo-id": "a/b", "version": 1}, "lock": {"commit": "main"}}])");
  EXPECT_NE(e.find("lock file 'kernels.lock' entry 1 ('a/b'): the locked commit is not a full 40-hex git sha"), std::string::npos) << e;
  e = error_of(R"([{"repo_id": "no-slash", "sha": ")" + A + R"("}])");
  EXPECT_NE(e.find("entry 1: 'no-slash' is not a Hub repo id"), std::string::npos) << e;
  e = error_of(R"([{"what": 1}])");
  EXPECT_NE(e.find("neither a kernels 0.17 entry"), std::string::npos) << e;
}

TEST(KernelLock, ProjectDependencies) {
  TempDir t;
  std::ofstream(t.path() / "pyproject.toml") << "[project]\nname = \"p\"\n\n[tool.kernels.dependencies]\n\"kernels-community/activation\" = 1\n\"org/relu\" = 0\n";
  auto deps = read_project_dependencies(t.path() / "pyproject.toml");
  ASSERT_EQ(deps.size(), 2u);
  EXPECT_EQ(deps[0].repo_id, "kernels-community/activation");
  EXPECT_EQ(deps[0].version, 1u);
  EXPECT_EQ(deps[1].version, 0u);

  std::ofstream(t.path() / "bad.toml") << "[tool.kernels.dependencies]\n\"org/x\" = \">=0.1\"\n";
  try {
    read_project_dependencies(t.path() / "bad.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"org/x\": use a kernel version (= 1)"), std::string::npos) << e.what();
  }
  std::ofstream(t.path() / "none.toml") << "[project]\nname = \"p\"\n";
  try {
    read_project_dependencies(t.path() / "none.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::not_found);
  }
}
