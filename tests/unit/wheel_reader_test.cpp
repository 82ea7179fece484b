// Reading wheels kwheel did not write (validate, publish, index): the archive
// is untrusted.
#include "kwheel/wheel_reader.hpp"

#include <gtest/gtest.h>

#include "kwheel/error.hpp"
#include "test_support.hpp"

using namespace kwheel;
using kwheel::testing::slurp;
using kwheel::testing::write_test_wheel;

namespace {

const std::string kMetadata = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n";
const std::string kWheel = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n";

}  // namespace

TEST(WheelReader, OpensFromMemoryAsFromDisk) {
  TempDir tmp;
  const auto path = tmp.path() / "demo-1.0-py3-none-any.whl";
  write_test_wheel(path, {{"demo/__init__.py", "x = 1\n"}, {"demo-1.0.dist-info/METADATA", kMetadata}, {"demo-1.0.dist-info/WHEEL", kWheel}},
                   "demo-1.0.dist-info/RECORD");
  WheelArchive disk(path);
  WheelArchive memory(path.filename(), slurp(path));
  EXPECT_EQ(memory.members(), disk.members());
  EXPECT_EQ(memory.dist_info(), "demo-1.0.dist-info");
  EXPECT_EQ(memory.field("Version"), "1.0");
  EXPECT_EQ(memory.read("demo/__init__.py"), "x = 1\n");
  EXPECT_TRUE(memory.verify_record().empty());
  EXPECT_TRUE(disk.verify_record().empty());
  try {
    WheelArchive broken(path.filename(), "PK\x05\x06 not a zip");
    FAIL() << "opened a broken archive";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
  }
}

TEST(WheelReader, RecordCheckRefusesPathsAnInstallerMustNotWrite) {
  // Hashes cover contents, not names: such a wheel's RECORD is consistent,
  // and validate, publish and index used to accept it (found writing the
  // wheel fuzz target's invariant: a RECORD that verifies has safe paths).
  TempDir tmp;
  for (const std::string bad : {"../../evil.pth", "/etc/evil.pth", "demo/../../evil.pth", "demo\\..\\..\\evil.pth"}) {
    const auto path = tmp.path() / "demo-1.0-py3-none-any.whl";
    write_test_wheel(path, {{"demo/__init__.py", ""}, {bad, "import os\n"}, {"demo-1.0.dist-info/METADATA", kMetadata}},
                     "demo-1.0.dist-info/RECORD");
    WheelArchive w(path);
    auto problems = w.verify_record();
    ASSERT_FALSE(problems.empty()) << bad;
    EXPECT_NE(problems.front().find("cannot be installed"), std::string::npos) << problems.front();
  }
}
