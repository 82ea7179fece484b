// The manylinux data compiled into the library: the same bytes as the
// files under manylinux/ that the build embeds.
#include "kwheel/evidence/manylinux_data.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "elf_fixtures.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

TEST(PolicyData, EmbeddedCopiesMatchTheFiles) {
  const std::filesystem::path dir = std::filesystem::path(KWHEEL_SOURCE_DIR) / "manylinux";
  EXPECT_EQ(manylinux_data::policy_json(), read_text(dir / "policy.json"))
      << "the build embeds manylinux/*.json as they are";
  EXPECT_EQ(manylinux_data::torch_provided_json(), read_text(dir / "torch-provided.json"));
  EXPECT_EQ(manylinux_data::stable_abi_json(), read_text(dir / "stable_abi.json"));
}

}  // namespace
}  // namespace kwheel
