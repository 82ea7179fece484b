#include "kwheel/variant.hpp"

#include <gtest/gtest.h>

#include "kwheel/error.hpp"

using namespace kwheel;

TEST(Variant, TorchCudaFields) {
  auto v = parse_variant("torch27-cxx11-cu126-x86_64-linux");
  EXPECT_EQ(v.framework, Framework::torch);
  EXPECT_EQ(v.framework_version, (MajorMinor{2, 7}));
  EXPECT_EQ(v.cxx11_abi, true);
  EXPECT_EQ(v.backend.kind, BackendKind::cuda);
  EXPECT_EQ(v.backend.version, (MajorMinor{12, 6}));
  EXPECT_EQ(v.cpu, "x86_64");
  EXPECT_EQ(v.os, "linux");
}

TEST(Variant, TwoDigitTorchMinor) {
  auto v = parse_variant("torch210-cxx11-cu130-x86_64-linux");
  EXPECT_EQ(v.framework_version, (MajorMinor{2, 10}));
  EXPECT_EQ(v.backend.version, (MajorMinor{13, 0}));
}

TEST(Variant, Cxx98AndAarch64) {
  auto v = parse_variant("torch26-cxx98-cu124-x86_64-linux");
  EXPECT_EQ(v.cxx11_abi, false);
  auto a = parse_variant("torch28-cxx11-cu129-aarch64-linux");
  EXPECT_EQ(a.cpu, "aarch64");
  EXPECT_EQ(a.backend.version, (MajorMinor{12, 9}));
}

TEST(Variant, OtherBackends) {
  auto r = parse_variant("torch27-cxx11-rocm63-x86_64-linux");
  EXPECT_EQ(r.backend.kind, BackendKind::rocm);
  EXPECT_EQ(r.backend.version, (MajorMinor{6, 3}));
  auto c = parse_variant("torch29-cxx11-cpu-x86_64-linux");
  EXPECT_EQ(c.backend.kind, BackendKind::cpu);
  EXPECT_FALSE(c.backend.version);
  auto x = parse_variant("torch28-cxx11-xpu20251-x86_64-linux");
  EXPECT_EQ(x.backend.kind, BackendKind::xpu);
  EXPECT_EQ(x.backend.version, (MajorMinor{2025, 1}));
}

TEST(Variant, MetalWithoutAbiTag) {
  auto m = parse_variant("torch27-metal-aarch64-darwin");
  EXPECT_FALSE(m.cxx11_abi.has_value());
  EXPECT_EQ(m.backend.kind, BackendKind::metal);
  EXPECT_EQ(m.os, "darwin");
}

TEST(Variant, Noarch) {
  for (const char* n : {"universal", "cpu", "cuda", "metal", "rocm", "xpu"}) {
    auto v = parse_variant(std::string("torch-") + n);
    EXPECT_TRUE(v.is_noarch());
    EXPECT_EQ(v.noarch, n);
  }
}

TEST(Variant, StableAbiAndTvmFfi) {
  auto s = parse_variant("torch-stable-abi10-cu126-x86_64-linux");
  EXPECT_EQ(s.framework, Framework::torch_stable_abi);
  EXPECT_EQ(s.framework_version, (MajorMinor{1, 0}));
  auto t = parse_variant("tvm-ffi01-cu128-x86_64-linux");
  EXPECT_EQ(t.framework, Framework::tvm_ffi);
  EXPECT_EQ(t.framework_version, (MajorMinor{0, 1}));
}

TEST(Variant, RoundTripEveryName) {
  for (const char* n :
       {"torch27-cxx11-cu126-x86_64-linux", "torch26-cxx98-cu124-x86_64-linux", "torch28-cxx11-cu129-aarch64-linux",
        "torch27-cxx11-rocm63-x86_64-linux", "torch29-cxx11-cpu-x86_64-linux", "torch28-cxx11-xpu20251-x86_64-linux",
        "torch27-metal-aarch64-darwin", "torch210-cxx11-cu130-x86_64-linux", "torch-universal", "torch-cpu",
        "torch-cuda", "torch-metal", "torch-rocm", "torch-xpu", "torch211-cu130-x86_64-linux",
        "torch-stable-abi10-cpu-aarch64-linux"}) {
    EXPECT_EQ(parse_variant(n).str(), n);
  }
}

TEST(Variant, RejectsWithReason) {
  struct Case {
    const char* name;
    const char* reason_part;
  } cases[] = {
      {"torch27-cxx11-opencl3-x86_64-linux", "unknown backend 'opencl3'"},
      {"torch27-cxx11-cu126-x86_64", "expected {backend}-{cpu}-{os}"},
      {"torch27-cxx11-cu126-sparc-linux", "unknown CPU architecture 'sparc'"},
      {"torch27-cxx11-cu126-x86_64-plan9", "unknown OS 'plan9'"},
      {"torchxy-cxx11-cu126-x86_64-linux", "torch version must be digits"},
      {"jax04-cu126-x86_64-linux", "unknown framework 'jax04'"},
      {"torch-quantum", "unknown pure-Python backend"},
      {"torch27-cxx11-cu-x86_64-linux", "needs a version"},
      {"", "empty variant name"},
      {"../etc", "only a-z"},
      {"Torch27-cxx11-cu126-x86_64-linux", "only a-z"},
  };
  for (const auto& c : cases) {
    auto r = try_parse_variant(c.name);
    EXPECT_FALSE(r.variant) << c.name;
    EXPECT_NE(r.error.find(c.reason_part), std::string::npos) << c.name << " -> " << r.error;
  }
  try {
    parse_variant("torch27-cxx11-opencl3-x86_64-linux");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("torch27-cxx11-opencl3-x86_64-linux"), std::string::npos);
  }
}
