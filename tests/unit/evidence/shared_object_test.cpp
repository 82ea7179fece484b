#include "kwheel/evidence/shared_object.hpp"

#include <gtest/gtest.h>

TEST(SharedObject, NamesTheLoaderLoads) {
  EXPECT_TRUE(kwheel::is_shared_object("img2gray/_img2gray_cuda_277942a.abi3.so"));
  EXPECT_TRUE(kwheel::is_shared_object("img2gray.libs/libfoo.so.1.2"));
  EXPECT_FALSE(kwheel::is_shared_object("img2gray/so.py"));
  EXPECT_FALSE(kwheel::is_shared_object("img2gray/_ops.pyd"));
  EXPECT_FALSE(kwheel::is_shared_object("img2gray/libfoo.dylib"));
}

TEST(SharedObject, ScriptsAreWhereWheelsCarryExecutables) {
  // Installed on PATH from the .data directory, and where auditwheel repair
  // moves an ELF script beside its grafted <name>.libs/.
  EXPECT_TRUE(kwheel::is_wheel_script("kwheel-0.1.0.data/scripts/kwheel"));
  EXPECT_TRUE(kwheel::is_wheel_script("kwheel.scripts/kwheel"));
  EXPECT_FALSE(kwheel::is_wheel_script("kwheel-0.1.0.data/data/kwheel"));
  EXPECT_FALSE(kwheel::is_wheel_script("kwheel-0.1.0.data/scripts/sub/kwheel"));
  EXPECT_FALSE(kwheel::is_wheel_script("kwheel-0.1.0.data/scripts/"));
  EXPECT_FALSE(kwheel::is_wheel_script("kwheel.scripts/sub/kwheel"));
  EXPECT_FALSE(kwheel::is_wheel_script("kwheel/scripts/kwheel"));
  EXPECT_FALSE(kwheel::is_wheel_script(".scripts/kwheel"));
  EXPECT_FALSE(kwheel::is_wheel_script("kwheel.libs/libcurl-1a2b3c4d.so.4"));
}
