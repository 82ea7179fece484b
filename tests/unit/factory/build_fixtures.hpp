#pragma once
// Test helpers shared by factory/build_test.cpp and factory/staging_test.cpp:
// variants written to disk (img2gray's, with a real shared object for the
// Linux ones), the options they build with, and a wheel built by a run
// that reported no digest.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kwheel/base/temp_dir.hpp"
#include "kwheel/factory/build.hpp"
#include "test_support.hpp"

namespace kwheel::testing {

namespace fs = std::filesystem;

// A variant whose files live under dir/<variant>/.
inline VariantInput variant(const fs::path& dir, const std::string& name, std::vector<std::pair<std::string, std::string>> files) {
  VariantInput v{name, {}};
  for (auto& [path, content] : files) {
    fs::path src = dir / name / path;
    fs::create_directories(src.parent_path());
    std::ofstream(src, std::ios::binary) << content;
    v.files.push_back({path, src, content.size(), false});
  }
  return v;
}

// A real (tiny, libc-free) shared object: the build reads every .so of a
// Linux variant for its platform tag. Compiled once per test binary.
inline std::string shared_object(const std::string& cpu) {
  static const std::string base = [] {
    const fs::path d = fs::temp_directory_path() / ("kwheel-build-so-" + std::to_string(::getpid()));
    fs::create_directories(d);
    std::ofstream(d / "k.c") << "int kwheel_fixture_kernel(int x) { return 2 * x + 1; }\n";
    const std::string cmd = "cc -shared -fPIC -nostdlib -O2 -o '" + (d / "k.so").string() + "' '" + (d / "k.c").string() + "'";
    if (std::system(cmd.c_str()) != 0) ADD_FAILURE() << "cannot compile a shared object: " << cmd;
    std::string so = slurp(d / "k.so");
    fs::remove_all(d);
    return so;
  }();
  std::string so = base;
  if (cpu == "aarch64" && so.size() > 20) {  // e_machine = EM_AARCH64 (183)
    so[18] = static_cast<char>(183);
    so[19] = 0;
  }
  return so;
}

inline VariantInput img2gray(const fs::path& dir, const std::string& name) {
  std::vector<std::pair<std::string, std::string>> files{{"img2gray/__init__.py", "from ._ops import ops\n"},
                                                         {"img2gray/_ops.py", "ops = None\n"}};
  if (name.ends_with("-linux"))
    files.push_back({"img2gray/_img2gray_0123abc.abi3.so", shared_object(name.find("aarch64") != std::string::npos ? "aarch64" : "x86_64")});
  return variant(dir, name, files);
}

inline BuildOptions options(const fs::path& out) {
  BuildOptions o;
  o.name = "img2gray";
  o.version = "0.1.0";
  o.out_dir = out;
  o.tags.manylinux = "2_28";  // an explicit claim, checked against the .so files
  return o;
}

// The .kwheel/ state recorded beside a wheel.
inline nlohmann::json state_of(const fs::path& wheel) {
  return nlohmann::json::parse(slurp(wheel.parent_path() / ".kwheel" / (wheel.filename().string() + ".json")));
}

// One variant built by a run that reported no digest; options now ask for one.
struct BuiltWithoutDigest {
  kwheel::TempDir t;
  BuildOptions o = options(t.path() / "dist");
  std::vector<VariantInput> variants{img2gray(t.path(), "torch-universal")};
  fs::path wheel;
  BuiltWithoutDigest() {
    o.write.digest = false;
    auto first = build_wheels(variants, o);
    EXPECT_TRUE(first.committed);
    EXPECT_EQ(first.variants[0].sha256, "");
    wheel = first.variants[0].wheel;
    o.write.digest = true;
  }
};

}  // namespace kwheel::testing
