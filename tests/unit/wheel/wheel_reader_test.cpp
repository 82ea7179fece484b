// Reading wheels kwheel did not write (validate, publish, index): the archive
// is untrusted.
#include "kwheel/wheel/wheel_reader.hpp"

#include <gtest/gtest.h>

#include <span>

#include "kwheel/wheel/deflate.hpp"
#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
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

// ------------------------------------------------------------------ zip bombs (issue 14)

namespace {

// A zip written record by record, so that tests can make members share
// bytes or lie about their sizes, as no zip library would.
class RawZip {
 public:
  struct Member {
    std::string name;
    uint32_t crc = 0;
    uint64_t compressed = 0, size = 0;
    uint16_t method = 0;
    uint64_t offset = 0;
  };
  // A local header and `data` after it; returns the member for central().
  Member add(const std::string& name, const std::string& data, uint64_t size, uint32_t crc, uint16_t method) {
    Member m{name, crc, data.size(), size, method, bytes_.size()};
    put(0x04034b50, 4), put(20, 2), put(0, 2), put(method, 2), put(0, 4), put(crc, 4), put(data.size(), 4), put(size, 4), put(name.size(), 2), put(0, 2);
    bytes_ += name + data;
    return m;
  }
  Member stored(const std::string& name, const std::string& content) {
    return add(name, content, content.size(), crc(content), 0);
  }
  void central(const Member& m) { central_.push_back(m); }
  std::string finish() {
    const uint64_t at = bytes_.size();
    for (const auto& m : central_) {
      put(0x02014b50, 4), put(20, 2), put(20, 2), put(0, 2), put(m.method, 2), put(0, 4), put(m.crc, 4), put(m.compressed, 4), put(m.size, 4);
      put(m.name.size(), 2), put(0, 2), put(0, 2), put(0, 2), put(0, 2), put(0, 4), put(m.offset, 4);
      bytes_ += m.name;
    }
    const uint64_t size = bytes_.size() - at;
    put(0x06054b50, 4), put(0, 2), put(0, 2), put(central_.size(), 2), put(central_.size(), 2), put(size, 4), put(at, 4), put(0, 2);
    return bytes_;
  }
  static uint32_t crc(const std::string& s) { return crc32_update(0, std::as_bytes(std::span(s.data(), s.size()))); }

 private:
  void put(uint64_t v, int width) {
    for (int i = 0; i < width; ++i) bytes_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  std::string bytes_;
  std::vector<Member> central_;
};

std::string deflated(const std::string& content) {
  ChunkDeflater d(9);
  std::vector<unsigned char> out;
  d.compress(std::as_bytes(std::span(content.data(), content.size())), true, out);
  return std::string(out.begin(), out.end());
}

// The ordinary members of demo-1.0: a wheel but for what a test adds.
void add_wheel_basics(RawZip& z) {
  z.central(z.stored("demo/__init__.py", ""));
  z.central(z.stored("demo-1.0.dist-info/METADATA", kMetadata));
  z.central(z.stored("demo-1.0.dist-info/WHEEL", kWheel));
}

std::string refusal(const std::string& bytes) {
  try {
    WheelArchive w("demo-1.0-py3-none-any.whl", bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input) << e.what();
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  return "";
}

ZipSpan span(const std::string& name, uint64_t start, uint64_t end, uint64_t size) { return {name, start, end, end - start, size}; }

}  // namespace

TEST(ZipSpans, ReadsWhatTheCentralDirectoryAndLocalHeadersSay) {
  TempDir tmp;
  const auto path = tmp.path() / "demo-1.0-py3-none-any.whl";
  write_test_wheel(path, {{"demo/__init__.py", std::string(5000, 'x')}, {"demo-1.0.dist-info/METADATA", kMetadata}}, "demo-1.0.dist-info/RECORD");
  const std::string bytes = slurp(path);
  const auto spans = read_zip_spans(bytes.size(), [&](uint64_t at, size_t n) { return at < bytes.size() ? bytes.substr(at, n) : ""; }, "test");
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].name, "demo/__init__.py");
  EXPECT_EQ(spans[0].start, 0u);
  EXPECT_EQ(spans[0].size, 5000u);
  EXPECT_LT(spans[0].compressed, 100u);
  for (size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].end, spans[i].start);
  EXPECT_EQ(zip_bomb_reason(spans, bytes.size()), "");
}

TEST(ZipSpans, MembersSharingBytesAreABomb) {
  // Full overlap: many central entries, one local header.
  EXPECT_NE(zip_bomb_reason({span("a", 0, 100, 10), span("a", 0, 100, 10)}, 1000).find("overlap"), std::string::npos);
  // Fifield's quoted overlap: each member's data runs into the next one.
  EXPECT_NE(zip_bomb_reason({span("a", 0, 500, 10), span("b", 40, 500, 10), span("c", 80, 500, 10)}, 1000).find("'a' and 'b' overlap"),
            std::string::npos);
  // Adjacent is not overlapping, in any central directory order.
  EXPECT_EQ(zip_bomb_reason({span("b", 100, 200, 10), span("a", 0, 100, 10)}, 1000), "");
}

TEST(ZipSpans, RatioAndTotalLimits) {
  const uint64_t MiB = 1 << 20, GiB = 1ull << 30;
  // Deflate's 1032:1 on zeros: refused above the floor, whatever the wheel.
  auto why = zip_bomb_reason({span("z", 0, 200 * 1024, 200 * MiB)}, 10 * GiB);
  EXPECT_NE(why.find("member 'z' inflates"), std::string::npos) << why;
  EXPECT_NE(why.find("100:1"), std::string::npos) << why;
  // Exactly 100:1 passes, and so does any ratio up to the floor.
  EXPECT_EQ(zip_bomb_reason({span("z", 0, 2 * MiB / 100, 2 * MiB)}, 2 * MiB), "");
  EXPECT_EQ(zip_bomb_reason({span("z", 0, 1024, MiB)}, MiB), "");
  // Many small members under the floor still may not inflate the wheel past 100:1 ...
  std::vector<ZipSpan> small;
  for (uint64_t i = 0; i < 100; ++i) small.push_back(span("s" + std::to_string(i), i * 2048, i * 2048 + 2048, MiB));
  why = zip_bomb_reason(small, 100 * 2048 + 1000);
  EXPECT_NE(why.find("for wheels inflating to over 64 MiB"), std::string::npos) << why;
  // ... nor, at honest ratios, past 8 GiB in all.
  std::vector<ZipSpan> big;
  for (uint64_t i = 0; i < 3; ++i) big.push_back(span("b" + std::to_string(i), i * GiB, (i + 1) * GiB, 3 * GiB));
  why = zip_bomb_reason(big, 3 * GiB);
  EXPECT_NE(why.find("8 GiB"), std::string::npos) << why;
  // A kernel wheel: a 300 MB .so at 3:1 and small Python files.
  EXPECT_EQ(zip_bomb_reason({span("k/_k.so", 0, 100 * MiB, 300 * MiB), span("k/__init__.py", 100 * MiB, 100 * MiB + 100, 2000)}, 101 * MiB), "");
}

TEST(WheelReader, RefusesAFullOverlapBombBeforeInflatingIt) {
  // 64 central entries for one local header of 4 MiB of zeros, same name:
  // consistent for libzip, 256 MiB for a reader that inflates each.
  RawZip z;
  add_wheel_basics(z);
  const std::string zeros(4 << 20, '\0');
  const auto m = z.add("demo/data", deflated(zeros), zeros.size(), RawZip::crc(zeros), 8);
  for (int i = 0; i < 64; ++i) z.central(m);
  const std::string why = refusal(z.finish());
  EXPECT_NE(why.find("'demo/data' and 'demo/data' overlap"), std::string::npos) << why;
  EXPECT_NE(why.find("demo-1.0-py3-none-any.whl"), std::string::npos) << why;
}

TEST(WheelReader, RefusesAQuotedOverlapBomb) {
  // Fifield's construction in miniature: member a's stored data is b's
  // local header followed by b's data, so every CRC and size is true and
  // b's bytes are read twice.
  const std::string b_content = "payload";
  RawZip probe;  // b's local header, as it will lie inside a's data
  probe.add("demo/b", b_content, b_content.size(), RawZip::crc(b_content), 0);
  const std::string a_content = probe.finish().substr(0, 30 + 6) + b_content;
  RawZip z;
  add_wheel_basics(z);
  const auto a = z.add("demo/a", a_content, a_content.size(), RawZip::crc(a_content), 0);
  z.central(a);
  z.central({"demo/b", RawZip::crc(b_content), b_content.size(), b_content.size(), 0, a.offset + 30 + 6});
  const std::string why = refusal(z.finish());
  EXPECT_NE(why.find("'demo/a' and 'demo/b' overlap"), std::string::npos) << why;
}

TEST(WheelReader, AMemberInflatingPastItsDeclaredSizeIsCaughtWhileInflating) {
  // Headers say 1000 bytes (ratio and totals look harmless); the stream
  // holds 8 MiB of zeros. libzip would inflate all of it before comparing.
  RawZip z;
  add_wheel_basics(z);
  const std::string claimed(1000, '\0'), zeros(8 << 20, '\0');
  z.central(z.add("demo/liar.bin", deflated(zeros), claimed.size(), RawZip::crc(claimed), 8));
  Hasher h;
  h.update(claimed);
  z.central(z.stored("demo-1.0.dist-info/RECORD", "demo/liar.bin,sha256=" + urlsafe_b64_nopad(h.finish()) + ",1000\n"));
  WheelArchive w("demo-1.0-py3-none-any.whl", z.finish());
  try {
    w.read("demo/liar.bin");
    FAIL() << "read a member past its declared size";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("inflates past its declared 1000 bytes"), std::string::npos) << e.what();
  }
  TempDir tmp;
  EXPECT_THROW(w.extract("demo/liar.bin", tmp.path() / "out"), Error);
  EXPECT_LE(std::filesystem::file_size(tmp.path() / "out"), 1000u);
  bool named = false;
  for (const auto& p : w.verify_record()) named |= p.find("inflates past its declared") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(WheelReader, MetadataVersionMustBeTheFilenames) {
  TempDir tmp;
  auto wheel = [&](const std::string& file_version, const std::string& metadata_version) {
    const auto path = tmp.path() / ("demo-" + file_version + "-py3-none-any.whl");
    write_test_wheel(path, {{"demo/__init__.py", ""}, {"demo-" + file_version + ".dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: " + metadata_version + "\n"}},
                     "demo-" + file_version + ".dist-info/RECORD");
    return path;
  };
  // Found from outside: an index filed this under a cu126 sub-index.
  try {
    WheelArchive w(wheel("0.1.0", "9.9.9+torch2.7.cu126"));
    FAIL() << "accepted a METADATA version the filename does not carry";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("METADATA Version '9.9.9+torch2.7.cu126' does not match the filename's '0.1.0'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(WheelArchive(wheel("0.1.0", "0.1.0+cpu")), Error);  // the local label counts
  EXPECT_THROW(WheelArchive(wheel("0.1.0", "")), Error);
  // Equal as pip compares them (packaging.version.Version).
  EXPECT_NO_THROW(WheelArchive(wheel("1.0", "1.0.0")));
  EXPECT_NO_THROW(WheelArchive(wheel("1.0rc1", "1.0-rc1")));
  EXPECT_NO_THROW(WheelArchive(wheel("1.0+torch2.7.cu126", "1.0+Torch2.7.CU126")));
}
