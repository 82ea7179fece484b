#include "kwheel/evidence/nvidia_variant.hpp"

#include <gtest/gtest.h>

namespace kwheel {
namespace {

using Values = std::vector<std::string>;

// One object whose entries are `targets`; `toolkit` is what an uncompressed
// payload says compiled it, `ptx_isa` the PTX entries' header version.
ObjectGpuCode object(const std::vector<std::string>& targets, std::optional<CudaRelease> toolkit = CudaRelease{13, 0},
                     std::pair<unsigned, unsigned> ptx_isa = {9, 0}) {
  ObjectGpuCode o;
  o.file = "pkg/_ops.so";
  for (const auto& name : targets) {
    FatbinEntry e;
    e.target = parse_cuda_target(name);
    e.kind = e.target->kind == CudaCodeKind::ptx ? 1 : 2;
    if (e.kind == 1) std::tie(e.code_major, e.code_minor) = ptx_isa;
    else e.toolkit = toolkit;
    o.cuda.push_back(e);
  }
  return o;
}

// The expected values are uv 0.13.9's vocabulary (crates/uv-distribution/
// src/variant/nvidia.rs: a GPU M.m offers Mk_real for k <= m, then
// M0_virtual) applied to NVIDIA's compatibility rules by hand.
TEST(NvidiaVariant, SassNamesTheGpusOfItsFamilyFromItsMinorUp) {
  EXPECT_EQ(nvidia_variant_evidence({object({"sm_90"})}, CudaRelease{13, 0}).sm_arch, (Values{"90_real"}));
  // sm_80 runs on 8.0 through 8.9: each of those names it; no 9.x.
  EXPECT_EQ(nvidia_variant_evidence({object({"sm_80"})}, std::nullopt).sm_arch, (Values{"80_real", "86_real", "87_real", "88_real", "89_real"}));
  // sm_86 leaves 8.0 out, so 80_real (which 8.0 offers) is not given.
  EXPECT_EQ(nvidia_variant_evidence({object({"sm_86"})}, std::nullopt).sm_arch, (Values{"86_real", "87_real", "88_real", "89_real"}));
}

TEST(NvidiaVariant, PtxNamesLaterFamiliesAsVirtual) {
  const auto ev = nvidia_variant_evidence({object({"sm_80", "compute_80"})}, std::nullopt);
  EXPECT_EQ(ev.sm_arch, (Values{"100_virtual", "110_virtual", "120_virtual", "80_real", "86_real", "87_real", "88_real", "89_real", "90_virtual"}));
  // PTX for 8.6 does not JIT on 8.0: 80_virtual would claim it.
  EXPECT_EQ(nvidia_variant_evidence({object({"compute_86"})}, std::nullopt).sm_arch, (Values{"100_virtual", "110_virtual", "120_virtual", "90_virtual"}));
}

TEST(NvidiaVariant, ArchSpecificCodeIsClaimedOnlyWhereNoOtherGpuWouldMatch) {
  // 9.0 is the only 9.x GPU: 90_real names exactly it.
  EXPECT_EQ(nvidia_variant_evidence({object({"sm_90a"})}, std::nullopt).sm_arch, (Values{"90_real"}));
  // 100_real would also match 10.3, which sm_100a does not run on.
  const auto ev = nvidia_variant_evidence({object({"sm_90", "sm_100a"})}, std::nullopt);
  EXPECT_EQ(ev.sm_arch, (Values{"90_real"}));
  ASSERT_EQ(ev.unclaimed.size(), 1u);
  EXPECT_TRUE(ev.unclaimed.front().starts_with("10.0"));
  const auto only = nvidia_variant_evidence({object({"sm_100a"})}, std::nullopt);
  EXPECT_TRUE(only.sm_arch.empty());
  EXPECT_FALSE(only.problem.empty());
  EXPECT_FALSE(only.lower_bound);
  // The family form runs on 10.0 and 10.3.
  EXPECT_EQ(nvidia_variant_evidence({object({"sm_100f"})}, std::nullopt).sm_arch, (Values{"100_real", "103_real"}));
}

TEST(NvidiaVariant, LowerBoundIsTheNewestReleaseTheCodeNeeds) {
  auto ev = nvidia_variant_evidence({object({"sm_80", "sm_90"}, CudaRelease{12, 6})}, CudaRelease{12, 6});
  EXPECT_EQ(ev.lower_bound, (CudaRelease{12, 6}));
  // PTX ISA 8.8 needs a 12.9 driver, whatever compiled the SASS.
  ev = nvidia_variant_evidence({object({"sm_90", "compute_90"}, CudaRelease{12, 6}, {8, 8})}, CudaRelease{12, 6});
  EXPECT_EQ(ev.lower_bound, (CudaRelease{12, 9}));
  // Built for torch's CUDA 12.8 with a 12.6 toolkit: torch's libraries need 12.8.
  ev = nvidia_variant_evidence({object({"sm_90"}, CudaRelease{12, 6})}, CudaRelease{12, 8});
  EXPECT_EQ(ev.lower_bound, (CudaRelease{12, 8}));
  // Compiled by 13.0 though named cu126: the code decides.
  ev = nvidia_variant_evidence({object({"sm_90"}, CudaRelease{13, 0})}, CudaRelease{12, 6});
  EXPECT_EQ(ev.lower_bound, (CudaRelease{13, 0}));
  EXPECT_EQ(ev.lower_bound_from.size(), 2u);
}

TEST(NvidiaVariant, NoEvidenceNoBound) {
  // Compressed SASS only: no release can be read, and the name alone is not evidence.
  const auto ev = nvidia_variant_evidence({object({"sm_90"}, std::nullopt)}, CudaRelease{12, 6});
  EXPECT_FALSE(ev.lower_bound);
  EXPECT_NE(ev.problem.find("no CUDA release"), std::string::npos);
  // A PTX ISA kwheel does not know is not read as "no requirement".
  const auto unknown = nvidia_variant_evidence({object({"compute_90"}, std::nullopt, {9, 9})}, std::nullopt);
  EXPECT_FALSE(unknown.lower_bound);
  EXPECT_NE(unknown.problem.find("PTX ISA 9.9"), std::string::npos);
  EXPECT_FALSE(nvidia_variant_evidence({}, CudaRelease{12, 6}).problem.empty());
}

}  // namespace
}  // namespace kwheel
