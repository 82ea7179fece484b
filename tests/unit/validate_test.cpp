// What validate decides from a wheel before running anything.
#include "kwheel/validate.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "elf_fixtures.hpp"
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

namespace {

// A .nv_fatbin of one container whose entries (empty payloads) name the
// given SASS/PTX arch numbers; layout as src/fatbin.cpp documents it.
std::string fatbin_section(const std::vector<std::pair<uint16_t, uint32_t>>& kind_arch) {
  std::string body;
  for (auto [kind, arch] : kind_arch) {
    std::string h(64, '\0');
    const uint32_t header = 64;
    const uint64_t flags = 0x11;
    std::memcpy(h.data(), &kind, 2);
    std::memcpy(h.data() + 4, &header, 4);
    std::memcpy(h.data() + 28, &arch, 4);
    std::memcpy(h.data() + 40, &flags, 8);
    body += h;
  }
  std::string c(16, '\0');
  const uint32_t magic = 0xBA55ED50;
  const uint16_t version = 1, size = 16;
  const uint64_t n = body.size();
  std::memcpy(c.data(), &magic, 4);
  std::memcpy(c.data() + 4, &version, 2);
  std::memcpy(c.data() + 6, &size, 2);
  std::memcpy(c.data() + 8, &n, 8);
  return c + body;
}

// A CUDA wheel whose one .so carries `kind_arch` (none: no .nv_fatbin).
std::unique_ptr<WheelArchive> cuda_wheel(const kwheel::testing::TempDir& d, const std::string& label,
                                         const std::vector<std::pair<uint16_t, uint32_t>>& kind_arch) {
  const auto so = kwheel::testing::build_c(d, "k.so", "int f(void) { return 1; }\n", "-nostdlib");
  if (!kind_arch.empty()) {
    kwheel::testing::write_file(d / "fatbin", fatbin_section(kind_arch));
    kwheel::testing::sh(d.path(), "objcopy --add-section .nv_fatbin=fatbin k.so");
  }
  const auto path = d / ("relu-1.0+torch2.11." + label + "-cp39-abi3-manylinux_2_28_x86_64.whl");
  const std::string dist_info = "relu-1.0+torch2.11." + label + ".dist-info";
  write_test_wheel(path,
                   {{"relu/__init__.py", ""},
                    {"relu/_relu.abi3.so", kwheel::testing::read_text(so)},
                    {dist_info + "/METADATA", "Metadata-Version: 2.1\nName: relu\nVersion: 1.0+torch2.11." + label + "\n"}},
                   dist_info + "/RECORD");
  return std::make_unique<WheelArchive>(path);
}

const CudaDevice kH100{{9, 0, ArchSuffix::none}, "H100"};
constexpr uint16_t kPtx = 1, kSass = 2;

}  // namespace

TEST(Validate, SkipsACudaWheelWhoseCodeMissesTheGpu) {
  kwheel::testing::TempDir d;
  EXPECT_EQ(uncovered_device(*cuda_wheel(d, "cu130", {{kSass, 100}}), kH100), "this GPU is sm_90; the wheel's code targets sm_100 only");
}

TEST(Validate, RunsWhatTheGpuCanRunOrJit) {
  kwheel::testing::TempDir a, b, c;
  EXPECT_EQ(uncovered_device(*cuda_wheel(a, "cu130", {{kSass, 90}}), kH100), std::nullopt);
  EXPECT_EQ(uncovered_device(*cuda_wheel(b, "cu130", {{kPtx, 80}}), kH100), std::nullopt);
  EXPECT_EQ(uncovered_device(*cuda_wheel(c, "cu130", {{kSass, 80}, {kSass, 100}}), kH100), "this GPU is sm_90; the wheel's code targets sm_80, sm_100 only");
}

TEST(Validate, JudgesOnlyCudaWheelsThatCarryCudaCode) {
  kwheel::testing::TempDir a, b;
  EXPECT_EQ(uncovered_device(*cuda_wheel(a, "cpu", {{kSass, 100}}), kH100), std::nullopt);
  EXPECT_EQ(uncovered_device(*cuda_wheel(b, "cu130", {}), kH100), std::nullopt);
}

TEST(Validate, JudgementSaysWhichCodeRunsAndWhetherItIsJitCompiled) {
  kwheel::testing::TempDir a, b;
  auto ptx = judge_device(*cuda_wheel(a, "cu130", {{kPtx, 80}}), kH100);
  ASSERT_TRUE(ptx);
  EXPECT_TRUE(ptx->coverage.covered);
  EXPECT_TRUE(ptx->coverage.jit);
  EXPECT_EQ(ptx->coverage.by->str(), "compute_80");
  auto sass = judge_device(*cuda_wheel(b, "cu130", {{kSass, 80}, {kSass, 90}, {kPtx, 90}}), kH100);
  ASSERT_TRUE(sass);
  EXPECT_EQ(sass->coverage.by->str(), "sm_90");
  EXPECT_FALSE(sass->coverage.jit);
  EXPECT_EQ(sass->code.size(), 3u);
}
