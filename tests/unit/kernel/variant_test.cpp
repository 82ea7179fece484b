#include "kwheel/kernel/variant.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/wheel/tags.hpp"

using namespace kwheel;

namespace {

// Every name kernels 0.17.2's own tests and kernel-builder's build lists
// use; the file's header says where each group comes from.
std::vector<std::string> kernels_0172_names() {
  const auto path = std::filesystem::path(KWHEEL_SOURCE_DIR) / "tests/unit/data/kernels-0.17.2-variants.txt";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line.front() != '#') names.push_back(line);
  }
  return names;
}

}  // namespace

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

TEST(Variant, EveryKernels0172Name) {
  const auto names = kernels_0172_names();
  // 257 when collected; a much shorter list means the file was cut.
  ASSERT_GE(names.size(), 250u);
  std::set<std::string> seen;
  for (const auto& n : names) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(seen.insert(n).second) << "listed twice";
    const auto r = try_parse_variant(n);
    ASSERT_TRUE(r.variant) << r.error;
    EXPECT_EQ(r.variant->str(), n);
    EXPECT_EQ(parse_variant(n).str(), n);
  }
  for (const char* must : {"torch-npu", "torch210-cu126-x86_64-linux", "torch-stable-abi211-cpu-aarch64-darwin",
                           "tvm-ffi01-metal-aarch64-darwin", "torch-universal", "torch210-cu128-x86_64-windows"})
    EXPECT_TRUE(seen.contains(must)) << must;
}

TEST(Variant, EveryKernels0172NameGetsAWheelLabel) {
  // Parsing is not enough: build turns the name into tags and a PEP 440
  // local label, which must exist and be in normal form.
  TagOptions o;
  o.manylinux = "2_28";
  for (const auto& n : kernels_0172_names()) {
    SCOPED_TRACE(n);
    const WheelTags t = compute_tags(parse_variant(n), o);
    ASSERT_EQ(t.platforms.size(), 1u);
    const std::string version = "0.1.0" + (t.local_label.empty() ? "" : "+" + t.local_label);
    auto v = Version::try_parse(version);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->str(), version);
  }
}

TEST(Variant, NoarchNpuNeuronTpu) {
  // kernels' resolver looks for torch-npu on Ascend (CANN) systems; there is
  // no arch backend of that name.
  for (const char* n : {"npu", "neuron", "tpu", "cann"}) {
    auto v = parse_variant(std::string("torch-") + n);
    EXPECT_TRUE(v.is_noarch());
    EXPECT_EQ(v.framework, Framework::torch_noarch);
    EXPECT_EQ(v.noarch, n);
  }
}

TEST(Variant, TaglessLinux) {
  auto v = parse_variant("torch211-cu126-x86_64-linux");
  EXPECT_EQ(v.framework, Framework::torch);
  EXPECT_EQ(v.framework_version, (MajorMinor{2, 11}));
  EXPECT_FALSE(v.cxx11_abi.has_value());
  EXPECT_EQ(v.backend.kind, BackendKind::cuda);
  EXPECT_EQ(v.backend.version, (MajorMinor{12, 6}));
  EXPECT_EQ(v.cpu, "x86_64");
  EXPECT_EQ(v.os, "linux");
  // Not the same variant as the tagged name kernels also accepts.
  EXPECT_NE(v, parse_variant("torch211-cxx11-cu126-x86_64-linux"));
  auto w = parse_variant("torch210-cu128-x86_64-windows");
  EXPECT_FALSE(w.cxx11_abi.has_value());
  EXPECT_EQ(w.os, "windows");
  auto x = parse_variant("torch25-xpu20252-aarch64-linux");
  EXPECT_EQ(x.backend.kind, BackendKind::xpu);
  EXPECT_EQ(x.backend.version, (MajorMinor{2025, 2}));
}

TEST(Variant, Kernels0172StableAbi) {
  auto s = parse_variant("torch-stable-abi211-cu128-x86_64-linux");
  EXPECT_EQ(s.framework, Framework::torch_stable_abi);
  EXPECT_EQ(s.framework_version, (MajorMinor{2, 11}));
  EXPECT_FALSE(s.cxx11_abi.has_value());
  EXPECT_EQ(s.backend.version, (MajorMinor{12, 8}));
  auto m = parse_variant("torch-stable-abi29-metal-aarch64-darwin");
  EXPECT_EQ(m.framework_version, (MajorMinor{2, 9}));
  EXPECT_EQ(m.backend.kind, BackendKind::metal);
  EXPECT_EQ(m.os, "darwin");
}

TEST(Variant, Kernels0172TvmFfi) {
  auto t = parse_variant("tvm-ffi01-metal-aarch64-darwin");
  EXPECT_EQ(t.framework, Framework::tvm_ffi);
  EXPECT_EQ(t.framework_version, (MajorMinor{0, 1}));
  EXPECT_EQ(t.backend.kind, BackendKind::metal);
  auto r = parse_variant("tvm-ffi01-rocm64-aarch64-linux");
  EXPECT_EQ(r.backend.kind, BackendKind::rocm);
  EXPECT_EQ(r.backend.version, (MajorMinor{6, 4}));
  EXPECT_EQ(r.cpu, "aarch64");
}

TEST(Variant, Kernels0172OddButAccepted) {
  // kernel-builder's torch build-variants.cmake comment writes torch271 for
  // 2.7.1; kernels reads it as torch 2.71, and so do we.
  EXPECT_EQ(parse_variant("torch271-cxx11-cu124-x86_64-linux").framework_version, (MajorMinor{2, 71}));
  EXPECT_EQ(parse_variant("torch213-cxx11-xpu20260-x86_64-linux").backend.version, (MajorMinor{2026, 0}));
}

TEST(Variant, RejectsWhatKernels0172Rejects) {
  // kernels has no negative variant tests; each name here raises ValueError
  // in kernels 0.17.2's parse_variant (checked against the wheel). The
  // tvm-ffi-… names are the version-less examples in the comments of
  // kernel-builder's tvm_ffi/build-variants.cmake.
  struct Case {
    const char* name;
    const char* reason_part;
  } cases[] = {
      {"tvm-ffi-cu124-x86_64-linux", "tvm-ffi version must be digits"},
      {"tvm-ffi-cu124-x86_64-windows", "tvm-ffi version must be digits"},
      {"tvm-ffi-metal-aarch64-darwin", "tvm-ffi version must be digits"},
      {"tvm-ffi1-cu128-x86_64-linux", "tvm-ffi version must be digits"},
      {"torch2-cxx11-cu126-x86_64-linux", "torch version must be digits"},
      {"torch-stable-abi2-cu126-x86_64-linux", "stable-ABI version must be digits"},
      {"torch-stable-abi-cu126-x86_64-linux", "stable-ABI version must be digits"},
      {"torch27-cxx11-cu1-x86_64-linux", "needs a version of at least two digits"},
      {"torch27-cxx11-cuda-x86_64-linux", "needs a version"},
      {"torch27-cxx11-cann-aarch64-linux", "needs a version"},
      {"torch27-cxx03-cu126-x86_64-linux", "unknown C++ ABI tag 'cxx03'"},
      {"torch-stable-abi211-cxx11-cu128-x86_64-linux", "only torch{M}{m} variants carry a C++ ABI tag"},
      {"tvm-ffi01-cxx11-cu128-x86_64-linux", "only torch{M}{m} variants carry a C++ ABI tag"},
      {"torch27-cxx11-npu-aarch64-linux", "unknown backend 'npu'"},
      {"torch211-npu-aarch64-linux", "only the pure-Python variant torch-npu"},
      {"torch211-cu126-x86_64", "expected {backend}-{cpu}-{os}"},
      {"torch211-cu126-x86_64-linux-gnu", "got 4 part(s)"},
      {"jax04-cu126-x86_64-linux", "unknown framework 'jax04'"},
  };
  for (const auto& c : cases) {
    auto r = try_parse_variant(c.name);
    EXPECT_FALSE(r.variant) << c.name;
    EXPECT_NE(r.error.find(c.reason_part), std::string::npos) << c.name << " -> " << r.error;
    try {
      parse_variant(c.name);
      ADD_FAILURE() << "accepted " << c.name;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      EXPECT_NE(std::string(e.what()).find(std::string("variant '") + c.name + "': "), std::string::npos) << e.what();
    }
  }
}
