// A wheel's GPU evidence object by object: the backend.archs audit and the
// device judgement both hold every object that carries code to the rule,
// not the union of all objects (a kernel in an uncovered object fails at
// its first call, whatever the others carry).
#include "kwheel/evidence/gpu_code.hpp"

#include <gtest/gtest.h>

namespace kwheel {
namespace {

ObjectGpuCode object(const std::string& file, const std::vector<std::string>& targets, std::vector<std::string> gfx = {}) {
  ObjectGpuCode o;
  o.file = file;
  for (const auto& t : targets) o.cuda.push_back({static_cast<uint16_t>(t.starts_with("sm_") ? 2 : 1), parse_cuda_target(t), false, 0});
  o.gfx = std::move(gfx);
  return o;
}

using Strings = std::vector<std::string>;

TEST(GpuCode, AnArchIsMissingWhenOneObjectLacksIt) {
  auto e = gpu_evidence({object("a.so", {"sm_90"}), object("b.so", {"sm_100"}), object("host.so", {})}, {"9.0"});
  EXPECT_EQ(e.audit.missing, Strings{"9.0 (sm_90)"});
  EXPECT_EQ(e.missing_in, Strings{"b.so"});
  EXPECT_EQ(e.audit.undeclared, Strings{"sm_100"});
  EXPECT_EQ(e.objects.size(), 2u);  // the host-only object carries nothing to show
}

TEST(GpuCode, WithNoObjectCarryingCodeEveryDeclaredArchIsMissing) {
  auto e = gpu_evidence({object("host.so", {})}, {"8.0", "9.0+PTX"});
  EXPECT_EQ(e.audit.missing, (Strings{"8.0 (sm_80)", "9.0+PTX (compute_90)"}));
  EXPECT_EQ(e.missing_in, (Strings{"", ""}));
}

TEST(GpuCode, CudaArchsAreNotAskedOfRocmObjectsNorGfxOfCudaOnes) {
  auto e = gpu_evidence({object("cuda.so", {"sm_90"}), object("rocm.so", {}, {"gfx90a"})}, {"9.0", "gfx90a"});
  EXPECT_TRUE(e.audit.missing.empty());
  e = gpu_evidence({object("cuda.so", {"sm_90"})}, {"9.0", "gfx942"});
  EXPECT_EQ(e.audit.missing, Strings{"gfx942"});
}

TEST(GpuCode, NothingDeclaredNothingAudited) {
  auto e = gpu_evidence({object("a.so", {"sm_90"})}, {});
  EXPECT_TRUE(e.audit.missing.empty());
  EXPECT_TRUE(e.audit.undeclared.empty());
}

TEST(GpuCode, EveryCudaObjectMustRunOnTheDevice) {
  const CudaArch h100{9, 0, ArchSuffix::none};
  auto w = cuda_wheel_coverage({object("a.so", {"sm_90"}), object("b.so", {"sm_100"})}, h100);
  EXPECT_TRUE(w.judged);
  EXPECT_FALSE(w.covered);
  EXPECT_EQ(w.reason, "this GPU is sm_90; b.so has code for sm_100 only");
  w = cuda_wheel_coverage({object("a.so", {"sm_90"}), object("b.so", {"compute_80"}), object("host.so", {})}, h100);
  EXPECT_TRUE(w.covered);
  EXPECT_TRUE(w.jit);
  EXPECT_EQ(w.objects.size(), 2u);
  w = cuda_wheel_coverage({object("host.so", {})}, h100);
  EXPECT_FALSE(w.judged);
}

}  // namespace
}  // namespace kwheel
