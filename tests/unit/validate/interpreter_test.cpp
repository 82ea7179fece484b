// The interpreter probes against real interpreters: Debian's python3 with
// its python3-torch (what CI validates with), and programs that are not
// Python at all.
#include "kwheel/validate/interpreter.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "error_support.hpp"

namespace kwheel {
namespace {

const char* kDebianPython = "/usr/bin/python3";

TEST(Interpreter, ReadsDebiansPythonAndTorchWithoutImportingIt) {
  if (!std::filesystem::exists(kDebianPython)) GTEST_SKIP() << kDebianPython << " is not installed";
  const InterpreterInfo in = probe_interpreter(kDebianPython);
  EXPECT_EQ(in.implementation, "cpython");
  EXPECT_TRUE(in.python.starts_with("3.")) << in.python;
  EXPECT_EQ(in.system, "linux");
  EXPECT_FALSE(in.glibc.empty());
  ASSERT_TRUE(in.torch) << "python3-torch is installed by scripts/setup";
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(in.torch_site) / "torch" / "version.py")) << in.torch_site;
  EXPECT_FALSE(in.cuda);  // Debian's torch is a CPU build
}

TEST(Interpreter, ACpuTorchSeesNoGpu) {
  if (!std::filesystem::exists(kDebianPython)) GTEST_SKIP() << kDebianPython << " is not installed";
  const InterpreterInfo in = probe_interpreter(kDebianPython);
  EXPECT_EQ(probe_cuda_device(in, std::chrono::seconds(120)), std::nullopt);
}

TEST(Interpreter, WhatIsNotPythonIsAUsageError) {
  auto msg = testing::error_of([] { probe_interpreter("/nonexistent/python3"); }, ErrorKind::usage);
  EXPECT_EQ(msg, "cannot run Python interpreter '/nonexistent/python3'; pass --python PATH to one that has torch");
  msg = testing::error_of([] { probe_interpreter("/bin/true"); }, ErrorKind::usage);
  EXPECT_TRUE(msg.starts_with("'/bin/true' did not run as a Python 3 interpreter")) << msg;
}

TEST(Interpreter, ATorchThatCannotBeImportedIsAUsageError) {
  InterpreterInfo in;
  in.executable = "/bin/false";
  auto msg = testing::error_of([&] { probe_cuda_device(in, std::chrono::seconds(10)); }, ErrorKind::usage);
  EXPECT_TRUE(msg.starts_with("cannot ask /bin/false's torch for its GPU")) << msg;
}

}  // namespace
}  // namespace kwheel
