// What validate decides from a wheel before running anything.
#include "kwheel/validate.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

using namespace kwheel;
using kwheel::testing::write_test_wheel;

TEST(Validate, ReadsTorchRequirementsOfAnyLength) {
  // Found by review while writing the wheel fuzz target: Requires-Dist went
  // whole through a std::regex that recursed once per character.
  const InterpreterInfo in = kwheel::testing::linux_cpython311("2.7.1");
  TempDir tmp;
  const auto path = tmp.path() / "demo-1.0-py3-none-any.whl";
  auto wheel_requiring = [&](const std::string& requirement) {
    write_test_wheel(path, {{"demo/__init__.py", ""}, {"demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Dist: " + requirement + "\n"}},
                     "demo-1.0.dist-info/RECORD");
    return std::make_unique<WheelArchive>(path);
  };
  EXPECT_EQ(incompatibility(*wheel_requiring("torch==2.7.*; " + std::string(200000, 'x')), in, "cpu"), std::nullopt);
  EXPECT_NE(incompatibility(*wheel_requiring("torch (==2.6.*) ; python_version >= \"3.9\""), in, "cpu"), std::nullopt);
  EXPECT_EQ(incompatibility(*wheel_requiring("torch" + std::string(200000, ' ')), in, "cpu"), std::nullopt);
}
