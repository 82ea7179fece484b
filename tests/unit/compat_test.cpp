#include "kwheel/compat.hpp"

#include <gtest/gtest.h>

#include "kwheel/validate.hpp"

using namespace kwheel;

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

InterpreterInfo cpython311_cuda(const std::string& torch, const std::optional<std::string>& cuda) {
  InterpreterInfo in;
  in.executable = "/usr/bin/python3";
  in.python = "3.11";
  in.implementation = "cpython";
  in.machine = "x86_64";
  in.system = "linux";
  in.glibc = "2.36";
  in.torch = torch;
  in.cuda = cuda;
  return in;
}

}  // namespace

TEST(FilenameIncompatibility, TorchAndComputeFromTheLabel) {
  auto in = cpython311_cuda("2.7.1+cu126", "12.6");
  const std::string tail = "-cp39-abi3-manylinux_2_28_x86_64.whl";
  EXPECT_FALSE(filename_incompatibility(wf("k-0.1.0+torch2.7.cu126" + tail), in, "auto"));
  EXPECT_FALSE(filename_incompatibility(wf("k-0.1.0+torch2.7.cpu" + tail), in, "auto"));
  EXPECT_FALSE(filename_incompatibility(wf("k-0.1.0-py3-none-any.whl"), in, "auto"));
  auto why = filename_incompatibility(wf("k-0.1.0+torch2.8.cu126" + tail), in, "auto");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("torch ==2.8.*"), std::string::npos) << *why;
  why = filename_incompatibility(wf("k-0.1.0+torch2.7.cu128" + tail), in, "auto");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("CUDA 12.8"), std::string::npos) << *why;
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torch2.7.cpu" + tail), in, "cuda"));
  EXPECT_FALSE(filename_incompatibility(wf("k-0.1.0+torchstableabi2.6.cu126" + tail), in, "auto"));  // stable ABI: >=
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torchstableabi2.8.cu126" + tail), in, "auto"));
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_aarch64.whl"), in, "auto"));
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torch2.7.cu126-cp312-abi3-manylinux_2_28_x86_64.whl"), in, "auto"));
  EXPECT_TRUE(filename_incompatibility(wf("k-0.1.0+torch.cuda-py3-none-any.whl"), cpython311_cuda("2.7.0", std::nullopt), "auto"));
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
