#pragma once
// Test fixture shared by macho_test.cpp and pe_test.cpp: real binaries for
// another platform (Mach-O, PE), built at test time with clang and an lld
// flavour in a fresh directory. The sources call nothing, so no SDK, CRT
// or sysroot is needed; a machine without the tools skips the tests.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "elf_fixtures.hpp"
#include "error_support.hpp"

namespace kwheel::testing {

// LLVM tools sit beside clang, often off PATH (Debian keeps them in
// /usr/lib/llvm-<n>/bin); clang knows where. "" when neither has it.
inline std::string llvm_tool(const std::string& name) {
  if (have_tool(name)) return name;
  if (!have_tool("clang")) return "";
  TempDir d;
  const std::string cmd = "clang -print-prog-name=" + name + " >'" + (d / "where").string() + "' 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) return "";
  std::string path = read_text(d / "where");
  while (!path.empty() && std::isspace(static_cast<unsigned char>(path.back()))) path.pop_back();
  return fs::path(path).is_absolute() && ::access(path.c_str(), X_OK) == 0 ? path : "";
}

// `parse(bytes, name)` must throw Error(input) naming `name` and saying
// `fragment`.
template <class Parse>
void expect_refusal(Parse parse, std::span<const std::byte> bytes, const std::string& name, const std::string& fragment) {
  const std::string what = error_of([&] { parse(bytes, name); });
  EXPECT_NE(what.find(name), std::string::npos) << what;
  EXPECT_NE(what.find(fragment), std::string::npos) << what;
}

class ForeignBinaryTest : public ::testing::Test {
 protected:
  // For SetUp: skips the test unless clang and the linker are installed.
  void skip_without_clang_and(const std::string& linker, bool linker_found) {
    if (!have_tool("clang") || !linker_found) GTEST_SKIP() << "clang or " << linker << " is not installed";
  }

  // Writes `source` to <out>.c and compiles it with `clang <flags>` into
  // <out>, in d_.
  fs::path clang(const std::string& out, const std::string& source, const std::string& flags) {
    write_file(d_ / (out + ".c"), source);
    sh(d_.path(), "clang " + flags + " " + out + ".c -o " + out);
    return d_ / out;
  }

  TempDir d_;
};

}  // namespace kwheel::testing
