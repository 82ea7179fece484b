// A wheel's GPU evidence: declared archs against the union of the objects
// (packages ship one object per arch family, issue 32), each object against
// the declaration as a whole, and the device against the objects.
#include "kwheel/evidence/gpu_code.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

TEST(GpuCode, DeclaredArchsAreJudgedAgainstTheUnionOfTheObjects) {
  // sgl-kernel's layout: one object per arch family, same basename.
  const auto sm90 = object("sgl_kernel/sm90/common_ops.abi3.so", {"sm_90a"});
  const auto sm100 = object("sgl_kernel/sm100/common_ops.abi3.so", {"sm_100", "compute_120"});
  auto e = gpu_evidence({sm90, sm100, object("host.so", {})}, {"9.0a", "10.0", "12.0+PTX"});
  EXPECT_TRUE(e.audit.missing.empty());
  EXPECT_TRUE(e.outside_declared.empty());
  EXPECT_EQ(e.objects.size(), 2u);  // the host-only object carries nothing to show
  e = gpu_evidence({sm90, sm100}, {"9.0a", "10.0", "11.0"});
  EXPECT_EQ(e.audit.missing, Strings{"11.0 (sm_110)"});
  EXPECT_EQ(to_json(e)["missing"], nlohmann::json(Strings{"11.0 (sm_110)"}));
}

TEST(GpuCode, AnObjectForNoDeclaredArchIsOutside) {
  auto e = gpu_evidence({object("pkg/sm90/a.so", {"sm_90a"}), object("pkg/old/a.so", {"sm_80", "sm_86"})}, {"9.0a"});
  EXPECT_TRUE(e.audit.missing.empty());
  EXPECT_EQ(e.outside_declared, Strings{"pkg/old/a.so"});
  EXPECT_EQ(to_json(e)["outside_declared"], nlohmann::json(Strings{"pkg/old/a.so"}));
  // PTX a declared device JIT-compiles is for it; so is a later minor's SASS.
  e = gpu_evidence({object("a.so", {"compute_80"}), object("b.so", {"sm_86"})}, {"9.0", "8.0"});
  EXPECT_TRUE(e.outside_declared.empty());
  // gfx objects likewise; entries no rule reads promise nothing.
  e = gpu_evidence({object("r.so", {}, {"gfx908"})}, {"gfx90a", "sm90"});
  EXPECT_EQ(e.outside_declared, Strings{"r.so"});
  EXPECT_EQ(e.audit.unparsed, Strings{"sm90"});
}

TEST(GpuCode, WithNoObjectCarryingCodeEveryDeclaredArchIsMissing) {
  auto e = gpu_evidence({object("host.so", {})}, {"8.0", "9.0+PTX"});
  EXPECT_EQ(e.audit.missing, (Strings{"8.0 (sm_80)", "9.0+PTX (compute_90)"}));
  EXPECT_TRUE(e.outside_declared.empty());
}

TEST(GpuCode, ObjectsAreDescribedOnOneBoundedLine) {
  std::vector<std::string> repeated(546, "sm_90a");
  repeated.push_back("sm_80");
  std::vector<ObjectGpuCode> objects;
  for (int i = 0; i < 8; ++i) objects.push_back(object("pkg/o" + std::to_string(i) + ".so", repeated));
  const std::string line = describe_objects(objects);
  EXPECT_TRUE(line.starts_with("pkg/o0.so has sm_90a \u00d7546, sm_80; pkg/o1.so has")) << line;
  EXPECT_NE(line.find("; and 2 more objects"), std::string::npos) << line;
  EXPECT_LT(line.size(), 300u) << line;
  EXPECT_EQ(describe_objects({}), "no shared object carries GPU code");
}

TEST(GpuCode, CudaArchsAreNotAskedOfRocmObjectsNorGfxOfCudaOnes) {
  auto e = gpu_evidence({object("cuda.so", {"sm_90"}), object("rocm.so", {}, {"gfx90a"})}, {"9.0", "gfx90a"});
  EXPECT_TRUE(e.audit.missing.empty());
  e = gpu_evidence({object("cuda.so", {"sm_90"})}, {"9.0", "gfx942"});
  EXPECT_EQ(e.audit.missing, Strings{"gfx942"});
  EXPECT_TRUE(e.outside_declared.empty());
}

TEST(GpuCode, NothingDeclaredNothingAudited) {
  auto e = gpu_evidence({object("a.so", {"sm_90"})}, {});
  EXPECT_TRUE(e.audit.missing.empty());
  EXPECT_TRUE(e.audit.undeclared.empty());
}

TEST(GpuCode, TheDeviceNeedsOneObjectWithCodeForIt) {
  const CudaArch h100{9, 0, ArchSuffix::none};
  // sgl-kernel on an H100: the sm90/ object runs, the sm100/ one is listed.
  auto w = cuda_wheel_coverage({object("sgl_kernel/sm90/common_ops.abi3.so", {"sm_90a"}), object("sgl_kernel/sm100/common_ops.abi3.so", {"sm_100"})}, h100);
  EXPECT_TRUE(w.judged);
  EXPECT_TRUE(w.covered);
  EXPECT_TRUE(w.reason.empty());
  EXPECT_EQ(w.no_code, Strings{"sgl_kernel/sm100/common_ops.abi3.so"});
  w = cuda_wheel_coverage({object("a.so", {"sm_90"}), object("b.so", {"compute_80"}), object("host.so", {})}, h100);
  EXPECT_TRUE(w.covered);
  EXPECT_TRUE(w.jit);
  EXPECT_TRUE(w.no_code.empty());
  EXPECT_EQ(w.objects.size(), 2u);
  w = cuda_wheel_coverage({object("host.so", {})}, h100);
  EXPECT_FALSE(w.judged);
}

TEST(GpuCode, NoObjectWithCodeForTheDeviceNamesThemAll) {
  const CudaArch h100{9, 0, ArchSuffix::none};
  auto w = cuda_wheel_coverage({object("pkg/b.so", {"sm_100", "sm_100"})}, h100);
  EXPECT_FALSE(w.covered);
  EXPECT_EQ(w.reason, "this GPU is sm_90; pkg/b.so has code for sm_100 only");
  w = cuda_wheel_coverage({object("pkg/sm100/o.so", {"sm_100"}), object("pkg/sm120/o.so", {"sm_120", "sm_80"})}, h100);
  EXPECT_FALSE(w.covered);
  EXPECT_EQ(w.no_code, (Strings{"pkg/sm100/o.so", "pkg/sm120/o.so"}));
  EXPECT_EQ(w.reason, "this GPU is sm_90; none of its 2 objects with CUDA code runs on it (pkg/sm100/o.so: sm_100; pkg/sm120/o.so: sm_80, sm_120)");
}

}  // namespace
}  // namespace kwheel
