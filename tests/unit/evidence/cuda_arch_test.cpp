#include "kwheel/evidence/cuda_arch.hpp"

#include <gtest/gtest.h>

namespace kwheel {
namespace {

TEST(CudaArch, ParsesNvccTargetNames) {
  auto t = parse_cuda_target("sm_90a");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, CudaCodeKind::sass);
  EXPECT_EQ(t->arch, (CudaArch{9, 0, ArchSuffix::a}));
  EXPECT_EQ(t->str(), "sm_90a");
  t = parse_cuda_target("compute_80");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, CudaCodeKind::ptx);
  EXPECT_EQ(t->arch.capability(), "8.0");
  EXPECT_EQ(parse_cuda_target("sm_100f")->arch, (CudaArch{10, 0, ArchSuffix::f}));
  EXPECT_EQ(parse_cuda_target("sm_121")->arch.capability(), "12.1");
}

TEST(CudaArch, RefusesWhatNvccNeverWrites) {
  for (const char* bad : {"sm_", "sm_9", "sm_090", "sm_90b", "sm_1000", "compute", "SM_90", "sm_90 ", "gfx90a", "sm_90aa"})
    EXPECT_FALSE(parse_cuda_target(bad)) << bad;
}

TEST(CudaArch, NumbersSplitAtTheLastDigit) {
  EXPECT_EQ(arch_from_number(103, ArchSuffix::none)->capability(), "10.3");
  EXPECT_EQ(arch_from_number(75, ArchSuffix::none)->capability(), "7.5");
  EXPECT_FALSE(arch_from_number(0, ArchSuffix::none));
  EXPECT_FALSE(arch_from_number(9, ArchSuffix::none));
  EXPECT_FALSE(arch_from_number(1000, ArchSuffix::none));
}

TEST(CudaArch, ParsesBackendArchsSpellings) {
  auto d = parse_declared_cuda_arch("9.0+PTX");
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->ptx);
  EXPECT_EQ(d->arch, (CudaArch{9, 0, ArchSuffix::none}));
  d = parse_declared_cuda_arch("10.0a");
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->ptx);
  EXPECT_EQ(d->arch, (CudaArch{10, 0, ArchSuffix::a}));
  EXPECT_EQ(parse_declared_cuda_arch("12.0f")->arch.suffix, ArchSuffix::f);
  for (const char* bad : {"9", "9.", ".0", "9.00", "100.0", "9.0+ptx", "sm_90", "gfx90a", "0.0", "9.0 "})
    EXPECT_FALSE(parse_declared_cuda_arch(bad)) << bad;
}

TEST(CudaArch, ComputeCapabilityHasNoSuffix) {
  EXPECT_EQ(parse_compute_capability("9.0"), (CudaArch{9, 0, ArchSuffix::none}));
  EXPECT_FALSE(parse_compute_capability("9.0a"));
}

}  // namespace
}  // namespace kwheel
