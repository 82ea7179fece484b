// The one list of variables a secret comes in: what reads it registers it,
// and no child inherits any of it. The child is /usr/bin/env, so what it
// inherited is what it prints.
#include "kwheel/base/secret_environment.hpp"

#include <gtest/gtest.h>

#include <list>
#include <stdexcept>
#include <string>

#include "kwheel/base/process.hpp"
#include "kwheel/base/secret.hpp"
#include "test_support.hpp"

using namespace kwheel;
using kwheel::testing::ScopedEnv;

namespace {

// A concrete name for an entry ('*' stands for an index name).
std::string example_name(std::string_view pattern) {
  std::string name(pattern);
  if (const size_t star = name.find('*'); star != std::string::npos) name.replace(star, 1, "TEAM");
  return name;
}

}  // namespace

TEST(SecretEnvironment, TheVariablesKwheelReadsASecretFromAreListed) {
  // Each with the place that reads it: docs/security.md names them.
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT", "TWINE_PASSWORD", "TWINE_USERNAME", "TWINE_REPOSITORY_URL"}) {
    const SecretVariable* v = secret_variable(name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_FALSE(v->read_by.empty()) << name;
  }
  // pip's and uv's index variables, which may carry a login.
  for (const char* name : {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL",
                           "UV_INDEX_INTERNAL_PASSWORD", "UV_INDEX_INTERNAL_USERNAME"})
    EXPECT_TRUE(is_secret_variable(name)) << name;
  for (const char* name : {"HF_HOME", "HF_TOKEN_PATH", "NETRC", "PATH", "UV_CACHE_DIR", "UV_INDEX_", "PIP_CERT", "HF_TOKENS"})
    EXPECT_FALSE(is_secret_variable(name)) << name;
}

TEST(SecretEnvironment, NoChildInheritsAnyListedVariable) {
  std::list<std::string> names;  // ScopedEnv keeps the pointer: the names must stay put
  std::list<ScopedEnv> set;
  for (const SecretVariable& v : kSecretVariables) set.emplace_back(names.emplace_back(example_name(v.name)).c_str(), "https://u:listedSECRET@h/");
  ScopedEnv kept("KWHEEL_SECRET_ENV_TEST_KEPT", "kept");
  const ProcessResult r = run_process({"/usr/bin/env"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("listedSECRET"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("KWHEEL_SECRET_ENV_TEST_KEPT=kept\n"), std::string::npos) << r.out;
}

TEST(SecretEnvironment, TheLegacyHubTokenVariableIsNotInherited) {
  ScopedEnv token("HUGGING_FACE_HUB_TOKEN", "hf_legacyProcessTestSECRET");
  const ProcessResult r = run_process({"/usr/bin/env"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("legacyProcessTestSECRET"), std::string::npos) << r.out;
}

TEST(SecretEnvironment, AChildGivenOneOnPurposeGetsIt) {
  // hub/child_tool_access hands uv and pip the index login this way.
  ScopedEnv inherited("UV_DEFAULT_INDEX", "https://u:inheritedSECRET@h/");
  ProcessOptions o;
  o.set_env["UV_DEFAULT_INDEX"] = "https://chosen.example/simple/";
  const ProcessResult r = run_process({"/usr/bin/env"}, o);
  EXPECT_NE(r.out.find("UV_DEFAULT_INDEX=https://chosen.example/simple/\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("inheritedSECRET"), std::string::npos) << r.out;
}

TEST(SecretEnvironment, ReadingRegistersTheSecretAsItsFormSays) {
  ScopedEnv token("HUGGING_FACE_HUB_TOKEN", "hf_readRegistersTOKEN1");
  ScopedEnv url("TWINE_REPOSITORY_URL", "HTTPS://alice:readRegistersPW2@upload.example/legacy/");
  ScopedEnv user("TWINE_USERNAME", "alice-the-uploader");
  EXPECT_EQ(secret_env_value("HUGGING_FACE_HUB_TOKEN"), "hf_readRegistersTOKEN1");
  EXPECT_EQ(secret_env_value("TWINE_REPOSITORY_URL"), "HTTPS://alice:readRegistersPW2@upload.example/legacy/");
  EXPECT_EQ(secret_env_value("TWINE_USERNAME"), "alice-the-uploader");
  EXPECT_EQ(redact_secrets("hf_readRegistersTOKEN1 readRegistersPW2 alice-the-uploader"), "*** *** alice-the-uploader");
}

TEST(SecretEnvironment, AListOfUrlsHasEachPasswordRegistered) {
  // uv's UV_INDEX: space-separated, each entry "name=URL" or a URL.
  ScopedEnv list("UV_INDEX", "team=https://u:listReadPW1@a.example/simple/ https://v:listReadPW2@b.example/");
  secret_env_value("UV_INDEX");
  EXPECT_EQ(redact_secrets("listReadPW1 listReadPW2"), "*** ***");
}

TEST(SecretEnvironment, AnUnlistedNameCannotBeReadAsASecret) {
  ScopedEnv other("KWHEEL_SECRET_ENV_TEST_OTHER", "x");
  EXPECT_THROW(secret_env_value("KWHEEL_SECRET_ENV_TEST_OTHER"), std::logic_error);
  EXPECT_THROW(secret_env_value("HF_HOME"), std::logic_error);
}
