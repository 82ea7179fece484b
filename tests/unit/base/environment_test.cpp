#include "kwheel/base/environment.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace kwheel {
namespace {

using kwheel::testing::ScopedEnv;

TEST(Environment, EmptyReadsAsUnset) {
  {
    ScopedEnv set("KWHEEL_TEST_ENV_VALUE", "a value");
    EXPECT_EQ(env_value("KWHEEL_TEST_ENV_VALUE"), "a value");
  }
  {
    ScopedEnv empty("KWHEEL_TEST_ENV_VALUE", "");
    EXPECT_FALSE(env_value("KWHEEL_TEST_ENV_VALUE"));
  }
  ScopedEnv unset("KWHEEL_TEST_ENV_VALUE", nullptr);
  EXPECT_FALSE(env_value("KWHEEL_TEST_ENV_VALUE"));
}

}  // namespace
}  // namespace kwheel
