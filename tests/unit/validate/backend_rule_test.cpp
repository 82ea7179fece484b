// kernels 0.17.2's backend rule (kernels/variants.py `_check_variants`,
// kernels/backends.py `_backend`). The expected verdicts and reasons are
// read off that code, line by line as cited; tests/integration/
// test_backend_rule.py holds kwheel to kernels' own function for a set of
// variant names and systems.
#include "kwheel/validate/backend_rule.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace kwheel {
namespace {

std::optional<std::string> judge(const std::string& version, const Backend& system) { return backend_mismatch(read_label(version), system); }

Backend backend(BackendKind kind, std::optional<MajorMinor> version = std::nullopt) {
  Backend b;
  b.kind = kind;
  b.version = version;
  return b;
}

// backends.py _backend: torch.version.cuda, else .hip, else MPS, else .xpu, else CPU.
TEST(SystemBackend, IsWhatTheInterpretersTorchWasBuiltFor) {
  EXPECT_EQ(system_backend(testing::linux_cpython311("2.9.0+cu128", "12.8"), "auto").variant_str(), "cu128");
  EXPECT_EQ(system_backend(testing::linux_cpython311("2.9.0+cpu"), "auto").variant_str(), "cpu");
  InterpreterInfo rocm = testing::linux_cpython311("2.9.0+rocm6.3");
  rocm.hip = "6.3.42131-fa1d09cbd";  // Version(hip.split("-")[0]): 6.3
  EXPECT_EQ(system_backend(rocm, "auto").variant_str(), "rocm63");
  InterpreterInfo xpu = testing::linux_cpython311("2.9.0+xpu");
  xpu.xpu = "20250101";  // f"{xpu[0:4]}.{xpu[5:6]}": 2025.1
  EXPECT_EQ(system_backend(xpu, "auto").variant_str(), "xpu20251");
  // A described target: --torch 2.9 --cuda 12.8.
  InterpreterInfo described;
  described.torch = "2.9";
  described.cuda = "12.8";
  EXPECT_EQ(system_backend(described, "auto").variant_str(), "cu128");
  // _select_backend("cpu"): CPU on any system; --device cpu asks for it.
  EXPECT_EQ(system_backend(testing::linux_cpython311("2.9.0+cu128", "12.8"), "cpu").variant_str(), "cpu");
  // Without torch kwheel's wheels cannot load: judged as kernels judges a system with no CUDA runtime.
  InterpreterInfo bare = testing::linux_cpython311("");
  bare.torch.reset();
  EXPECT_EQ(system_backend(bare, "auto").variant_str(), "cpu");
}

// variants.py 465-475: a CUDA x.y system takes CUDA x.z builds, z <= y.
TEST(BackendMismatch, CudaTakesTheSameMajorAndNoNewerMinor) {
  const Backend cu128 = backend(BackendKind::cuda, MajorMinor{12, 8});
  EXPECT_FALSE(judge("1+torch2.9.cu128", cu128));
  EXPECT_FALSE(judge("1+torch2.9.cu126", cu128));
  EXPECT_FALSE(judge("1+torchstableabi2.9.cu126", cu128));
  EXPECT_EQ(judge("1+torch2.9.cu129", cu128), "CUDA version (12.9) is not compatible with system CUDA version (12.8)");
  EXPECT_EQ(judge("1+torch2.9.cu130", cu128), "CUDA version (13.0) is not compatible with system CUDA version (12.8)");
}

// variants.py 477-483: any other arch build needs the system's variant string exactly.
TEST(BackendMismatch, OtherArchBuildsNeedTheSystemsBackendString) {
  const Backend cu128 = backend(BackendKind::cuda, MajorMinor{12, 8});
  EXPECT_EQ(judge("1+torch2.9.cpu", cu128), "backend (cpu) does not match selected backend (cu128)");
  EXPECT_EQ(judge("1+torch2.9.rocm63", cu128), "backend (rocm63) does not match selected backend (cu128)");
  const Backend cpu;
  EXPECT_FALSE(judge("1+torch2.9.cpu", cpu));
  EXPECT_EQ(judge("1+torch2.9.cu128", cpu), "backend (cu128) does not match selected backend (cpu)");
  const Backend rocm63 = backend(BackendKind::rocm, MajorMinor{6, 3});
  EXPECT_FALSE(judge("1+torch2.9.rocm63", rocm63));
  EXPECT_EQ(judge("1+torch2.9.rocm64", rocm63), "backend (rocm64) does not match selected backend (rocm63)");
  EXPECT_EQ(judge("1+torch2.9.xpu20251", rocm63), "backend (xpu20251) does not match selected backend (rocm63)");
  EXPECT_FALSE(judge("1+tvmffi0.1.xpu20251", backend(BackendKind::xpu, MajorMinor{2025, 1})));
}

// variants.py 494-505: a noarch build needs the system backend's name, or is universal.
TEST(BackendMismatch, NoarchBuildsNeedTheSystemsBackendName) {
  const Backend cu128 = backend(BackendKind::cuda, MajorMinor{12, 8});
  EXPECT_EQ(judge("1+torch.cpu", cu128), "backend (cpu) does not match system backend (cuda) and is not universal");
  EXPECT_FALSE(judge("1+torch.cuda", cu128));
  EXPECT_FALSE(judge("1", cu128));  // torch-universal: no label
  const Backend cpu;
  EXPECT_FALSE(judge("1+torch.cpu", cpu));
  EXPECT_EQ(judge("1+torch.cuda", cpu), "backend (cuda) does not match system backend (cpu) and is not universal");
  EXPECT_EQ(judge("1+torch.metal", cpu), "backend (metal) does not match system backend (cpu) and is not universal");
  EXPECT_FALSE(judge("1+torch.rocm", backend(BackendKind::rocm, MajorMinor{6, 3})));
  EXPECT_FALSE(judge("1+torch.xpu", backend(BackendKind::xpu, MajorMinor{2025, 1})));
  EXPECT_FALSE(judge("1+torch.npu", backend(BackendKind::cann, MajorMinor{8, 1})));  // CANN's noarch name is npu
}

TEST(BackendMismatch, ALabelNamingNoBackendIsNotJudged) { EXPECT_FALSE(judge("1+ubuntu.2", Backend{})); }

}  // namespace
}  // namespace kwheel
