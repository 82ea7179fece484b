// A wheel's shared objects, read one at a time out of the archive: which
// members are read, under which names, and the GPU code validate judges.
#include "kwheel/validate/wheel_objects.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "elf_fixtures.hpp"
#include "error_support.hpp"
#include "test_support.hpp"

using namespace kwheel;
namespace fs = std::filesystem;

namespace {

// A .nv_fatbin of one container holding one SASS entry (empty payload) for
// sm_<arch>; layout as src/evidence/fatbin.cpp documents it.
std::string sass_fatbin(uint32_t arch) {
  std::string entry(64, '\0');
  const uint16_t kind = 2;  // SASS
  const uint32_t header = 64;
  const uint64_t flags = 0x11;
  std::memcpy(entry.data(), &kind, 2);
  std::memcpy(entry.data() + 4, &header, 4);
  std::memcpy(entry.data() + 28, &arch, 4);
  std::memcpy(entry.data() + 40, &flags, 8);
  std::string container(16, '\0');
  const uint32_t magic = 0xBA55ED50;
  const uint16_t version = 1, size = 16;
  const uint64_t n = entry.size();
  std::memcpy(container.data(), &magic, 4);
  std::memcpy(container.data() + 4, &version, 2);
  std::memcpy(container.data() + 6, &size, 2);
  std::memcpy(container.data() + 8, &n, 8);
  return container + entry;
}

// The bytes of a host shared object, with SASS for sm_<arch> when arch != 0.
std::string elf_object(const kwheel::testing::TempDir& d, const std::string& name, uint32_t arch) {
  const auto so = kwheel::testing::build_c(d, name, "int f(void) { return 1; }\n", "-nostdlib");
  if (arch) {
    kwheel::testing::write_file(d / (name + ".fatbin"), sass_fatbin(arch));
    kwheel::testing::sh(d.path(), "objcopy --add-section .nv_fatbin=" + name + ".fatbin " + name);
  }
  return kwheel::testing::read_text(so);
}

fs::path wheel_of(const kwheel::testing::TempDir& d, std::vector<std::pair<std::string, std::string>> files) {
  files.emplace_back("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n");
  const auto path = d / "demo-1.0-cp39-abi3-linux_x86_64.whl";
  kwheel::testing::write_test_wheel(path, files, "demo-1.0.dist-info/RECORD");
  return path;
}

}  // namespace

TEST(WheelObjects, GpuCodeOfEveryElfObjectNamedByItsMember) {
  kwheel::testing::TempDir d;
  const WheelArchive wheel(wheel_of(d, {{"demo/__init__.py", ""},
                                        {"demo/_cuda.abi3.so", elf_object(d, "a.so", 90)},
                                        {"demo/_host.so", elf_object(d, "b.so", 0)}}));
  const auto code = wheel_gpu_code(wheel);
  ASSERT_EQ(code.size(), 2u);
  EXPECT_EQ(code[0].file, "demo/_cuda.abi3.so");
  ASSERT_EQ(code[0].cuda.size(), 1u);
  EXPECT_EQ(code[0].cuda[0].str(), "sm_90");
  EXPECT_EQ(code[1].file, "demo/_host.so");
  EXPECT_TRUE(code[1].cuda.empty());
}

TEST(WheelObjects, OnlySharedObjectsAreReadEachWithItsOwnBytesAndNoneIsLeft) {
  kwheel::testing::TempDir d;
  const std::string host = elf_object(d, "a.so", 0), cuda = elf_object(d, "b.so", 80);
  ASSERT_NE(host.size(), cuda.size());
  const WheelArchive wheel(wheel_of(d, {{"demo/__init__.py", ""}, {"demo/z.so", host}, {"demo/data.bin", host}, {"demo/a.so", cuda}}));
  std::vector<std::pair<std::string, uintmax_t>> seen;
  std::vector<fs::path> files;
  for_each_wheel_object(wheel, [&](const fs::path& file, const std::string& member) {
    seen.emplace_back(member, fs::file_size(file));
    files.push_back(file);
  });
  // Member order, each read from a file holding that member's bytes.
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, uintmax_t>>{{"demo/z.so", host.size()}, {"demo/a.so", cuda.size()}}));
  for (const auto& f : files) EXPECT_FALSE(fs::exists(f)) << f;
}

TEST(WheelObjects, BinaryScriptsAreReadAndOtherScriptsPassedOver) {
  // auditwheel repair leaves a Python shim in .data/scripts and moves the
  // binary to <name>.scripts/; both places, and only binaries there, count.
  kwheel::testing::TempDir d;
  const std::string tool = elf_object(d, "tool", 0);
  const WheelArchive wheel(wheel_of(d, {{"demo-1.0.data/scripts/shim", "#!python\nimport os\n"},
                                        {"demo-1.0.data/scripts/tool", tool},
                                        {"demo-1.0.data/data/tool", tool},
                                        {"demo.scripts/tool", tool}}));
  std::vector<std::string> seen;
  for_each_wheel_object(wheel, [&](const fs::path&, const std::string& member) { seen.push_back(member); });
  EXPECT_EQ(seen, (std::vector<std::string>{"demo-1.0.data/scripts/tool", "demo.scripts/tool"}));
}

TEST(WheelObjects, AMemberNamedLikeAnObjectMustBeOne) {
  kwheel::testing::TempDir d;
  const WheelArchive wheel(wheel_of(d, {{"demo/__init__.py", ""}, {"demo/_ops.so", "not an object"}}));
  const std::string why = kwheel::testing::error_of([&] { wheel_gpu_code(wheel); });
  EXPECT_NE(why.find("'demo/_ops.so' is named like a shared object but is neither ELF nor Mach-O"), std::string::npos) << why;
}

TEST(WheelObjects, AMalformedObjectIsNamedByItsMemberNotItsScratchFile) {
  kwheel::testing::TempDir d;
  const std::string junk = std::string("\x7f" "ELF\x02\x01\x01", 7) + std::string(60, '\xff');
  const WheelArchive wheel(wheel_of(d, {{"demo/__init__.py", ""}, {"demo/_ops.so", junk}}));
  const std::string why = kwheel::testing::error_of([&] { wheel_gpu_code(wheel); });
  EXPECT_EQ(why.rfind("demo/_ops.so: malformed ELF: ", 0), 0u) << why;
  EXPECT_EQ(why.find("kwheel-inspect"), std::string::npos) << why;
}

TEST(WheelObjects, ReadObjectKeepsElfFactsAndGpuCodeUnderTheGivenName) {
  kwheel::testing::TempDir d;
  const auto so = kwheel::testing::build_c(d, "c.so", "int f(void) { return 1; }\n", "-nostdlib");
  ObjectFacts facts;
  read_object(so, "demo/_c.so", facts);
  ASSERT_EQ(facts.elves.size(), 1u);
  EXPECT_EQ(facts.elves[0].name, "demo/_c.so");
  ASSERT_EQ(facts.gpu.size(), 1u);
  EXPECT_EQ(facts.gpu[0].file, "demo/_c.so");
  EXPECT_TRUE(facts.machos.empty());
}
