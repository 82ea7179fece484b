// Children run with bounded time and captured output, and without the
// secrets kwheel reads from its own environment.
#include "kwheel/base/process.hpp"

#include <gtest/gtest.h>

#include <string>

#include "test_support.hpp"

using namespace kwheel;
using kwheel::testing::ScopedEnv;

TEST(Process, ChildrenDoNotInheritSecrets) {
  ScopedEnv token("HF_TOKEN", "hf_processTestSECRET");
  ScopedEnv password("TWINE_PASSWORD", "pw-processTestSECRET");
  ScopedEnv url("TWINE_REPOSITORY_URL", "https://alice:url-processTestSECRET@example.invalid/legacy/");
  ScopedEnv harmless("KWHEEL_PROCESS_TEST_KEPT", "kept");
  ProcessResult r = run_process({"/usr/bin/env"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("processTestSECRET"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("KWHEEL_PROCESS_TEST_KEPT=kept\n"), std::string::npos) << r.out;
}

TEST(Process, SetAndUnsetEnvironment) {
  ScopedEnv gone("KWHEEL_PROCESS_TEST_GONE", "x");
  ProcessOptions o;
  o.unset_env = {"KWHEEL_PROCESS_TEST_GONE"};
  o.set_env = {{"KWHEEL_PROCESS_TEST_SET", "y"}};
  ProcessResult r = run_process({"/usr/bin/env"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("KWHEEL_PROCESS_TEST_GONE"), std::string::npos);
  EXPECT_NE(r.out.find("KWHEEL_PROCESS_TEST_SET=y\n"), std::string::npos);
}

TEST(Process, ExitCodeAndStreams) {
  ProcessResult r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.timed_out);
}
