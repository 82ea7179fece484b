#include "kwheel/validate/compat.hpp"

#include <gtest/gtest.h>

#include "kwheel/base/error.hpp"
#include "kwheel/wheel/tags.hpp"
#include "kwheel/validate/validate.hpp"
#include "test_support.hpp"

using namespace kwheel;

TEST(LocalLabel, ReadsBackEveryLabelBuildWrites) {
  // Found by the variant fuzzer: a variant the grammar accepts (torch minor
  // of 7 digits) got a label read_label did not recognise as kwheel's, so
  // index/pin/validate treated kwheel's own wheel as foreign.
  const Variant v = parse_variant("torch21018811-cu1130-x86_64-linux");
  auto l = read_label("0.1.0+" + local_label(v));
  EXPECT_EQ(l.framework, "torch");
  EXPECT_EQ(l.framework_version, (MajorMinor{2, 1018811}));
  EXPECT_EQ(l.backend, "cu1130");
  EXPECT_EQ(read_label("0.1.0+torch2.99999999.cpu").framework_version, (MajorMinor{2, 99999999}));
}

TEST(LocalLabel, ReadsKwheelLabels) {
  auto l = read_label("0.1.0+torch2.10.cu130");
  EXPECT_EQ(l.framework, "torch");
  EXPECT_EQ(l.framework_version, (MajorMinor{2, 10}));
  EXPECT_EQ(l.cuda, "13.0");
  EXPECT_EQ(l.index_name(), "torch2.10-cu130");
  EXPECT_EQ(l.describe(), "torch 2.10, CUDA 13.0");
  EXPECT_EQ(read_label("0.1.0+torch1.13.cpu").index_name(), "torch1.13-cpu");
  EXPECT_EQ(read_label("0.1.0+torch2.7.cu126.cxx98").index_name(), "torch2.7-cu126-cxx98");
  EXPECT_TRUE(read_label("0.1.0+torch2.7.cu126.cxx98").cxx98);
  EXPECT_EQ(read_label("1.0+torchstableabi2.9.cu126").index_name(), "torchstableabi2.9-cu126");
  EXPECT_EQ(read_label("1.0+rocm").index_name(), "rocm");
  EXPECT_TRUE(read_label("1.0+cuda").noarch);
  EXPECT_TRUE(read_label("1.0").universal());
  EXPECT_EQ(read_label("1.0").index_name(), "");
  EXPECT_EQ(read_label("1.0+ubuntu.2").index_name(), "");  // foreign labels get no sub-index
  EXPECT_EQ(read_label("1.0+cu121").cuda, "12.1");           // but still say what they can
}

namespace {

WheelFilename wf(const std::string& name) { return parse_wheel_filename(name); }

}  // namespace

TEST(FilenameIncompatibility, TorchAndComputeFromTheLabel) {
  auto in = kwheel::testing::linux_cpython311("2.7.1+cu126", "12.6");
  const std::string tail = "-cp39-abi3-manylinux_2_28_x86_64.whl";
  EXPECT_FALSE(filename_incompatibility(wf("k-0.1.0+torch2.7.cu126" + tail), in, "auto"));
  EXPECT_FALSE(filename_incompatibility(wf("k-0.1.0-py3-none-any.whl"), in, "auto"));
  // kernels' backend rule (validate/backend_rule): a CPU build does not fit a CUDA torch, in kernels' words.
  EXPECT_EQ(filename_incompatibility(wf("k-0.1.0+torch2.7.cpu" + tail), in, "auto"), "backend (cpu) does not match selected backend (cu126)");
  EXPECT_EQ(filename_incompatibility(wf("k-0.1.0+torch.cpu-py3-none-any.whl"), in, "auto"),
            "backend (cpu) does not match system backend (cuda) and is not universal");
  // --device cpu selects kernels' CPU backend on a CUDA torch: the CPU build, not the CUDA one.
  EXPECT_FALSE(filename_incompatibility(wf("k-0.1.0+torch2.7.cpu" + tail), in, "cpu"));
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torch2.7.cu126" + tail), in, "cpu"));
  auto why = filename_incompatibility(wf("k-0.1.0+torch2.8.cu126" + tail), in, "auto");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("torch ==2.8.*"), std::string::npos) << *why;
  why = filename_incompatibility(wf("k-0.1.0+torch2.7.cu128" + tail), in, "auto");
  EXPECT_EQ(why, "CUDA version (12.8) is not compatible with system CUDA version (12.6)");
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torch2.7.cpu" + tail), in, "cuda"));
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torch2.7.cpu" + tail), kwheel::testing::linux_cpython311("2.7.0"), "cuda"));
  EXPECT_FALSE(filename_incompatibility(wf("k-0.1.0+torchstableabi2.6.cu126" + tail), in, "auto"));  // stable ABI: >=
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torchstableabi2.8.cu126" + tail), in, "auto"));
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_aarch64.whl"), in, "auto"));
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torch2.7.cu126-cp312-abi3-manylinux_2_28_x86_64.whl"), in, "auto"));
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torch.cuda-py3-none-any.whl"), kwheel::testing::linux_cpython311("2.7.0", std::nullopt), "auto"));
}

TEST(FilenameIncompatibility, ADescribedTargetChecksOnlyTorchAndCompute) {
  InterpreterInfo t;  // kwheel pin --torch 2.7 --cuda 12.6: no interpreter
  t.torch = "2.7";
  t.cuda = "12.6";
  EXPECT_FALSE(filename_incompatibility(wf("k-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_aarch64.whl"), t, "auto"));
  EXPECT_FALSE(filename_incompatibility(wf("k-0.1.0+torch2.7.cu126-cp313-abi3-manylinux_2_99_x86_64.whl"), t, "auto"));
  auto why = filename_incompatibility(wf("k-0.1.0+torch2.9.cu126-cp39-abi3-manylinux_2_28_x86_64.whl"), t, "auto");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("the target has torch 2.7"), std::string::npos) << *why;
}

// kernels 0.17.2 loads tvm-ffiMm only where tvm_ffi's major.minor is M.m.
TEST(FilenameIncompatibility, TvmFfiMustBeInstalledAtTheLabelsVersion) {
  auto in = kwheel::testing::linux_cpython311("2.7.1");
  const auto wheel = wf("k-0.1.0+tvmffi0.1.cpu-cp39-abi3-manylinux_2_28_x86_64.whl");
  auto why = filename_incompatibility(wheel, in, "auto");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("the wheel needs tvm-ffi 0.1 (apache-tvm-ffi==0.1.*, imported as tvm_ffi)"), std::string::npos) << *why;
  EXPECT_NE(why->find("has none"), std::string::npos) << *why;
  in.tvm_ffi = "0.2.0";
  in.tvm_ffi_site = "/site";
  why = filename_incompatibility(wheel, in, "auto");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("has tvm-ffi 0.2.0"), std::string::npos) << *why;
  in.tvm_ffi = "0.1.3";
  EXPECT_FALSE(filename_incompatibility(wheel, in, "auto"));
  InterpreterInfo described;  // kwheel pin --torch 2.7: no interpreter, so no tvm-ffi to judge
  described.torch = "2.7";
  EXPECT_FALSE(filename_incompatibility(wheel, described, "auto"));
}

TEST(Compat, HostileFilenamesAreRefusedOrUnfit) {
  // Found by the index_page fuzz target's crafted inputs: numbers in tags and
  // labels went through std::stoi unbounded (std::out_of_range escaped
  // `kwheel pin`), and long filenames into std::regex's recursion.
  EXPECT_THROW(parse_wheel_filename("a-1.0-py3-none-" + std::string(300, 'x') + ".whl"), Error);
  EXPECT_NO_THROW(read_label("0.1+torch2.7.cu" + std::string(30, '1')));
  const InterpreterInfo in = kwheel::testing::linux_cpython311("2.7.1");
  for (const char* name : {"a-1.0-cp3999999999999-abi3-linux_x86_64.whl", "a-1.0-cp39-abi3-manylinux_2_99999999999_x86_64.whl",
                           "a-1.0+cu99999999999999999999-cp39-abi3-manylinux_2_28_x86_64.whl"}) {
    const WheelFilename w = parse_wheel_filename(name);
    EXPECT_NO_THROW(filename_incompatibility(w, in, "auto")) << name;
  }
}

// A foreign wheel's label of 50,000 digits was a SIGSEGV in the label regexes.
TEST(LocalLabel, AbsurdlyLongLabelIsUnreadableNotACrash) {
  LocalLabel l = read_label("0.1.0+torch2." + std::string(50000, '9') + ".cu126");
  EXPECT_FALSE(l.framework_version);
  EXPECT_TRUE(l.backend.empty());
}

TEST(VariantIncompatibility, JudgesTheWheelTheVariantWouldBecome) {
  const auto in = kwheel::testing::linux_cpython311("2.7.1+cu126", "12.6");
  auto judge = [&](const std::string& name, const InterpreterInfo& env) { return variant_incompatibility(parse_variant(name), env); };
  EXPECT_FALSE(judge("torch27-cxx11-cu126-x86_64-linux", in));
  EXPECT_FALSE(judge("torch-universal", in));
  EXPECT_FALSE(judge("torch-cuda", in));
  // kernels' backend rule: a CPU build is not loaded on a CUDA torch (issue #37, 6).
  EXPECT_EQ(judge("torch-cpu", in), "backend (cpu) does not match system backend (cuda) and is not universal");
  EXPECT_EQ(judge("torch27-cxx11-cpu-x86_64-linux", in), "backend (cpu) does not match selected backend (cu126)");
  auto why = judge("torch29-cxx11-cu130-x86_64-linux", in);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("torch ==2.9.*"), std::string::npos) << *why;
  EXPECT_EQ(judge("torch27-cxx11-cu128-x86_64-linux", in), "CUDA version (12.8) is not compatible with system CUDA version (12.6)");
  EXPECT_FALSE(judge("torch27-cxx11-cu124-x86_64-linux", in));  // an older CUDA 12 minor fits, as kernels decides
  EXPECT_TRUE(judge("torch27-cxx11-cu126-aarch64-linux", in));  // the platform
  EXPECT_TRUE(judge("torch27-cpu-aarch64-darwin", in));
  const auto cpu = kwheel::testing::linux_cpython311("2.7.1+cpu", std::nullopt);
  EXPECT_TRUE(judge("torch27-cxx11-cu126-x86_64-linux", cpu));
  EXPECT_TRUE(judge("torch-cuda", cpu));
  EXPECT_FALSE(judge("torch27-cxx11-cpu-x86_64-linux", cpu));
  EXPECT_FALSE(judge("torch-cpu", cpu));
  InterpreterInfo described;  // --torch 2.7 --cuda 12.6: platform not checked
  described.torch = "2.7";
  described.cuda = "12.6";
  EXPECT_FALSE(judge("torch27-cxx11-cu126-aarch64-linux", described));
}
