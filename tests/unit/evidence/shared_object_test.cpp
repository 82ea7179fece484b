#include "kwheel/evidence/shared_object.hpp"

#include <gtest/gtest.h>

TEST(SharedObject, NamesTheLoaderLoads) {
  EXPECT_TRUE(kwheel::is_shared_object("img2gray/_img2gray_cuda_277942a.abi3.so"));
  EXPECT_TRUE(kwheel::is_shared_object("img2gray.libs/libfoo.so.1.2"));
  EXPECT_FALSE(kwheel::is_shared_object("img2gray/so.py"));
  EXPECT_FALSE(kwheel::is_shared_object("img2gray/_ops.pyd"));
  EXPECT_FALSE(kwheel::is_shared_object("img2gray/libfoo.dylib"));
}
