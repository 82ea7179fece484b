#include "kwheel/evidence/device_coverage.hpp"

#include <gtest/gtest.h>

namespace kwheel {
namespace {

CudaTarget t(const char* name) { return *parse_cuda_target(name); }
CudaArch gpu(const char* cc) { return *parse_compute_capability(cc); }

// The table of NVIDIA's rules, one row per case the issue names and the
// edges next to them.
TEST(DeviceCoverage, SassRunsOnLaterMinorsOfItsMajor) {
  EXPECT_TRUE(runs_on(t("sm_80"), gpu("8.0")));
  EXPECT_TRUE(runs_on(t("sm_80"), gpu("8.6")));
  EXPECT_TRUE(runs_on(t("sm_80"), gpu("8.9")));
  EXPECT_FALSE(runs_on(t("sm_86"), gpu("8.0")));
  EXPECT_FALSE(runs_on(t("sm_80"), gpu("9.0")));
  EXPECT_FALSE(runs_on(t("sm_100"), gpu("9.0")));
  EXPECT_FALSE(runs_on(t("sm_90"), gpu("10.0")));
}

TEST(DeviceCoverage, ArchSpecificRunsOnExactlyItsCapability) {
  EXPECT_TRUE(runs_on(t("sm_90a"), gpu("9.0")));
  EXPECT_FALSE(runs_on(t("sm_100a"), gpu("10.3")));
  EXPECT_TRUE(runs_on(t("sm_100a"), gpu("10.0")));
  EXPECT_FALSE(runs_on(t("compute_90a"), gpu("10.0")));
  EXPECT_TRUE(runs_on(t("compute_90a"), gpu("9.0")));
}

TEST(DeviceCoverage, FamilyRunsOnLaterMembersOfItsFamily) {
  EXPECT_TRUE(runs_on(t("sm_100f"), gpu("10.0")));
  EXPECT_TRUE(runs_on(t("sm_100f"), gpu("10.3")));
  EXPECT_FALSE(runs_on(t("sm_103f"), gpu("10.0")));
  EXPECT_FALSE(runs_on(t("sm_100f"), gpu("12.0")));
  EXPECT_TRUE(runs_on(t("compute_120f"), gpu("12.1")));
  EXPECT_FALSE(runs_on(t("compute_120f"), gpu("13.0")));
}

TEST(DeviceCoverage, PtxIsCompiledForEveryLaterDevice) {
  EXPECT_TRUE(runs_on(t("compute_80"), gpu("8.0")));
  EXPECT_TRUE(runs_on(t("compute_80"), gpu("9.0")));
  EXPECT_TRUE(runs_on(t("compute_80"), gpu("12.0")));
  EXPECT_FALSE(runs_on(t("compute_90"), gpu("8.9")));
}

TEST(DeviceCoverage, PrefersExactSassThenCompatibleSassThenPtx) {
  auto c = cuda_coverage({t("compute_90"), t("sm_80"), t("sm_90")}, gpu("9.0"));
  ASSERT_TRUE(c.covered);
  EXPECT_EQ(c.by->str(), "sm_90");
  EXPECT_FALSE(c.jit);
  c = cuda_coverage({t("compute_80"), t("sm_80")}, gpu("8.6"));
  EXPECT_EQ(c.by->str(), "sm_80");
  c = cuda_coverage({t("compute_80")}, gpu("9.0"));
  ASSERT_TRUE(c.covered);
  EXPECT_TRUE(c.jit);
  EXPECT_EQ(c.by->str(), "compute_80");
}

TEST(DeviceCoverage, UncoveredNamesTheDeviceAndTheCode) {
  auto c = cuda_coverage({t("sm_100")}, gpu("9.0"));
  EXPECT_FALSE(c.covered);
  EXPECT_EQ(c.reason, "this GPU is sm_90; the wheel's code targets sm_100 only");
  c = cuda_coverage({t("sm_120"), t("sm_100"), t("sm_100")}, gpu("9.0"));
  EXPECT_EQ(c.reason, "this GPU is sm_90; the wheel's code targets sm_100, sm_120 only");
  EXPECT_EQ(cuda_coverage({}, gpu("9.0")).reason, "this GPU is sm_90; the wheel carries no CUDA code");
}

TEST(DeviceCoverage, AuditRefusesDeclaredArchsWithoutCode) {
  auto a = audit_declared_archs({"8.0", "9.0+PTX"}, {t("sm_80"), t("sm_90"), t("compute_90")}, {});
  EXPECT_TRUE(a.missing.empty());
  EXPECT_TRUE(a.undeclared.empty());
  a = audit_declared_archs({"9.0"}, {t("sm_100")}, {});
  ASSERT_EQ(a.missing.size(), 1u);
  EXPECT_EQ(a.missing[0], "9.0 (sm_90)");
  EXPECT_EQ(a.undeclared, std::vector<std::string>{"sm_100"});
  // +PTX promises the PTX; 9.0a is not satisfied by plain sm_90.
  a = audit_declared_archs({"9.0+PTX", "9.0a"}, {t("sm_90")}, {});
  EXPECT_EQ(a.missing, (std::vector<std::string>{"9.0+PTX (compute_90)", "9.0a (sm_90a)"}));
  // A PTX-only build declares "8.0+PTX" (kernels: 8.0 and newer), and the
  // PTX alone keeps it; its SASS is neither needed nor undeclared.
  a = audit_declared_archs({"8.0+PTX"}, {t("compute_80")}, {});
  EXPECT_TRUE(a.missing.empty());
  a = audit_declared_archs({"8.0+PTX"}, {t("compute_80"), t("sm_80")}, {});
  EXPECT_TRUE(a.undeclared.empty());
}

TEST(DeviceCoverage, AuditShowsUndeclaredCodeAndUnknownEntries) {
  auto a = audit_declared_archs({"8.0", "sm80"}, {t("sm_80"), t("sm_86")}, {});
  EXPECT_TRUE(a.missing.empty());
  EXPECT_EQ(a.undeclared, std::vector<std::string>{"sm_86"});
  EXPECT_EQ(a.unparsed, std::vector<std::string>{"sm80"});
}

TEST(DeviceCoverage, AuditChecksGfxProcessors) {
  auto a = audit_declared_archs({"gfx90a", "gfx942"}, {}, {"gfx90a", "gfx1100"});
  EXPECT_EQ(a.missing, std::vector<std::string>{"gfx942"});
  EXPECT_EQ(a.undeclared, std::vector<std::string>{"gfx1100"});
}

DeclaredCudaArch declared(const char* text) { return *parse_declared_cuda_arch(text); }

// kernels 0.17.2's _cuda_arch_supports, row by row (kernels/archs.py).
TEST(DeviceCoverage, DeclaredArchsPromiseWhatKernelsReadsInThem) {
  EXPECT_TRUE(declared_supports(declared("9.0a"), gpu("9.0")));
  EXPECT_FALSE(declared_supports(declared("9.0a"), gpu("10.0")));
  EXPECT_TRUE(declared_supports(declared("10.0f"), gpu("10.3")));
  EXPECT_FALSE(declared_supports(declared("10.0f"), gpu("12.0")));
  EXPECT_TRUE(declared_supports(declared("8.0"), gpu("8.6")));
  EXPECT_FALSE(declared_supports(declared("8.0"), gpu("9.0")));
  EXPECT_TRUE(declared_supports(declared("12.0+PTX"), gpu("13.0")));
  EXPECT_FALSE(declared_supports(declared("12.0+PTX"), gpu("10.0")));
}

TEST(DeviceCoverage, CodeServesADeclarationWhenSomeDeviceOfItRunsTheCode) {
  const std::vector<DeclaredCudaArch> torchao = {declared("9.0a"), declared("10.0"), declared("12.0+PTX")};
  EXPECT_TRUE(serves_declared({t("sm_90a")}, torchao));
  EXPECT_TRUE(serves_declared({t("sm_100"), t("compute_120")}, torchao));
  EXPECT_TRUE(serves_declared({t("sm_103")}, torchao));        // 10.3 is a 10.0 device
  EXPECT_TRUE(serves_declared({t("sm_121")}, torchao));        // 12.1 is at or above 12.0
  EXPECT_TRUE(serves_declared({t("compute_80")}, torchao));    // JIT-compiled on a 9.0
  EXPECT_FALSE(serves_declared({t("sm_80"), t("sm_86")}, torchao));
  EXPECT_FALSE(serves_declared({t("sm_100a")}, {declared("10.3")}));  // exactly 10.0, never a 10.3
  EXPECT_TRUE(serves_declared({t("sm_90")}, {declared("9.0a")}));  // a 9.0 runs plain sm_90 too
  EXPECT_FALSE(serves_declared({}, torchao));
}

}  // namespace
}  // namespace kwheel
