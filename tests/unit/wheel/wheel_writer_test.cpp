// The wheel writer, checked on the archive's raw bytes: a small ZIP reader
// here (APPNOTE.TXT 4.3.7 local header, 4.3.12 central directory header,
// 4.3.16 end of central directory) so that order, modes, DOS timestamps,
// flags and extra fields are read independently of libzip. Hashes are known
// vectors (sha256 of "abc" and ""), whole-file hashes come from sha256sum.
#include "kwheel/wheel/wheel_writer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zip.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <random>

#include "kwheel/wheel/deflate.hpp"
#include "kwheel/wheel/deflate_pool.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

using namespace kwheel;
namespace fs = std::filesystem;
using kwheel::testing::ScopedEnv;
using kwheel::testing::sha256sum;
using kwheel::testing::slurp;

namespace {


void write(const fs::path& p, const std::string& content) { kwheel::testing::write_file(p, content); }

uint16_t u16(const std::string& b, size_t o) { return uint8_t(b.at(o)) | uint8_t(b.at(o + 1)) << 8; }
uint32_t u32(const std::string& b, size_t o) { return u16(b, o) | uint32_t(u16(b, o + 2)) << 16; }

struct Entry {
  std::string name;
  uint16_t made_by = 0, needed = 0, flags = 0, method = 0, time = 0, date = 0;
  uint16_t extra_len = 0, comment_len = 0, local_extra_len = 0, local_flags = 0;
  uint32_t external = 0;
  uint16_t internal = 0;
};

struct Archive {
  std::vector<Entry> entries;
  uint16_t comment_len = 0;
};

Archive read_archive(const fs::path& p) {
  const std::string b = slurp(p);
  Archive a;
  if (b.size() < 22) {
    ADD_FAILURE() << "too short";
    return a;
  }
  const size_t eocd = b.size() - 22;  // no archive comment expected
  EXPECT_EQ(u32(b, eocd), 0x06054b50u) << "EOCD not at the end: an archive comment?";
  a.comment_len = u16(b, eocd + 20);
  const uint16_t count = u16(b, eocd + 10);
  size_t o = u32(b, eocd + 16);
  for (uint16_t i = 0; i < count; ++i) {
    EXPECT_EQ(u32(b, o), 0x02014b50u);
    Entry e;
    e.made_by = u16(b, o + 4);
    e.needed = u16(b, o + 6);
    e.flags = u16(b, o + 8);
    e.method = u16(b, o + 10);
    e.time = u16(b, o + 12);
    e.date = u16(b, o + 14);
    const uint16_t name_len = u16(b, o + 28);
    e.extra_len = u16(b, o + 30);
    e.comment_len = u16(b, o + 32);
    e.internal = u16(b, o + 36);
    e.external = u32(b, o + 38);
    const uint32_t local = u32(b, o + 42);
    e.name = b.substr(o + 46, name_len);
    EXPECT_EQ(u32(b, local), 0x04034b50u);
    e.local_flags = u16(b, local + 6);
    EXPECT_EQ(u16(b, local + 10), e.time) << e.name;
    EXPECT_EQ(u16(b, local + 12), e.date) << e.name;
    EXPECT_EQ(b.substr(local + 30, u16(b, local + 26)), e.name);
    e.local_extra_len = u16(b, local + 28);
    a.entries.push_back(e);
    o += 46 + name_len + e.extra_len + e.comment_len;
  }
  return a;
}

std::string read_member(const fs::path& whl, const std::string& name) {
  int err = 0;
  zip_t* z = zip_open(whl.c_str(), ZIP_RDONLY, &err);
  if (!z) return "<cannot open>";
  std::string out;
  if (zip_file_t* f = zip_fopen(z, name.c_str(), 0)) {
    char buf[4096];
    zip_int64_t n;
    while ((n = zip_fread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    zip_fclose(f);
  } else {
    out = "<missing>";
  }
  zip_close(z);
  return out;
}

// DOS date/time (APPNOTE 4.4.6) from a UTC broken-down time.
uint16_t dos_date(int y, int mo, int d) { return static_cast<uint16_t>((y - 1980) << 9 | mo << 5 | d); }
uint16_t dos_time(int h, int mi, int s) { return static_cast<uint16_t>(h << 11 | mi << 5 | s / 2); }

const char* kShaAbc = "sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0";
const char* kShaEmpty = "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU";

struct Fixture {
  TempDir tmp;
  WheelContents contents;
  Fixture() {
    const fs::path src = tmp.path() / "src";
    write(src / "a.py", "abc");
    write(src / "empty.py", "");
    write(src / "lib.so", "abc");
    write(src / "libx.so.1", "abc");
    write(src / "tool", "abc");
    write(src / "B.py", "abc");
    write(src / "sub.py", "abc");
    contents.dist_info = "pkg-1.0.dist-info";
    contents.metadata = "abc";  // content is the writer's input, not checked here
    contents.wheel = "";
    contents.members = {
        {"zzz/after_dist_info_alphabetically.py", src / "a.py", 3, false},
        {"pkg/sub/m.py", src / "sub.py", 3, false},
        {"pkg/b.py", src / "empty.py", 0, false},
        {"pkg/a.py", src / "a.py", 3, false},
        {"pkg/B.py", src / "B.py", std::nullopt, false},
        {"pkg/_ext.abi3.so", src / "lib.so", 3, false},
        {"pkg/libx.so.1", src / "libx.so.1", 3, false},
        {"pkg/tool", src / "tool", 3, true},
    };
  }
  fs::path out(const std::string& dir = "dist") const { return tmp.path() / dir / "pkg-1.0-py3-none-any.whl"; }
};

std::vector<std::string> dir_listing(const fs::path& d) {
  std::vector<std::string> out;
  if (!fs::exists(d)) return out;
  for (const auto& e : fs::directory_iterator(d)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(WheelWriter, MembersSortedDistInfoLast) {
  Fixture f;
  write_wheel(f.contents, f.out(), {});
  auto a = read_archive(f.out());
  std::vector<std::string> names;
  for (const auto& e : a.entries) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"pkg/B.py", "pkg/_ext.abi3.so", "pkg/a.py", "pkg/b.py", "pkg/libx.so.1",
                                             "pkg/sub/m.py", "pkg/tool", "zzz/after_dist_info_alphabetically.py",
                                             "pkg-1.0.dist-info/METADATA", "pkg-1.0.dist-info/WHEEL",
                                             "pkg-1.0.dist-info/RECORD"}));
}

TEST(WheelWriter, RecordFromKnownVectors) {
  Fixture f;
  auto w = write_wheel(f.contents, f.out(), {});
  const std::string expected = std::string() +
                               "pkg/B.py," + kShaAbc + ",3\n" +
                               "pkg/_ext.abi3.so," + kShaAbc + ",3\n" +
                               "pkg/a.py," + kShaAbc + ",3\n" +
                               "pkg/b.py," + kShaEmpty + ",0\n" +
                               "pkg/libx.so.1," + kShaAbc + ",3\n" +
                               "pkg/sub/m.py," + kShaAbc + ",3\n" +
                               "pkg/tool," + kShaAbc + ",3\n" +
                               "zzz/after_dist_info_alphabetically.py," + kShaAbc + ",3\n" +
                               "pkg-1.0.dist-info/METADATA," + kShaAbc + ",3\n" +
                               "pkg-1.0.dist-info/WHEEL," + kShaEmpty + ",0\n" +
                               "pkg-1.0.dist-info/RECORD,,\n";
  EXPECT_EQ(read_member(f.out(), "pkg-1.0.dist-info/RECORD"), expected);
  EXPECT_EQ(read_member(f.out(), "pkg/a.py"), "abc");
  EXPECT_EQ(read_member(f.out(), "pkg/b.py"), "");
  EXPECT_EQ(w.record.size(), 11u);
  EXPECT_EQ(w.record.back().path, "pkg-1.0.dist-info/RECORD");
  EXPECT_EQ(w.path, f.out());
  EXPECT_EQ(w.size, fs::file_size(f.out()));
  EXPECT_EQ(w.sha256, sha256sum(f.out()));
}

TEST(WheelWriter, ModesAndHeaderFields) {
  Fixture f;
  write_wheel(f.contents, f.out(), {});
  auto a = read_archive(f.out());
  EXPECT_EQ(a.comment_len, 0);
  for (const auto& e : a.entries) {
    SCOPED_TRACE(e.name);
    const bool exec = e.name == "pkg/_ext.abi3.so" || e.name == "pkg/libx.so.1" || e.name == "pkg/tool";
    EXPECT_EQ(e.external >> 16, exec ? 0100755u : 0100644u);
    EXPECT_EQ(e.made_by >> 8, 3) << "host system must be Unix for the mode to count";
    EXPECT_EQ(e.method, 8) << "deflate";
    EXPECT_EQ(e.extra_len, 0) << "no extra fields (central)";
    EXPECT_EQ(e.local_extra_len, 0) << "no extra fields (local)";
    EXPECT_EQ(e.comment_len, 0);
    EXPECT_EQ(e.flags & 0x0008, 0) << "no data descriptor";
    EXPECT_EQ(e.local_flags & 0x0008, 0);
    EXPECT_EQ(e.flags & 0x0001, 0) << "not encrypted";
    EXPECT_EQ(e.date, dos_date(1980, 1, 1));
    EXPECT_EQ(e.time, dos_time(0, 0, 0));
  }
}

TEST(WheelWriter, StoreWhenLevelZeroAndLevelValidated) {
  Fixture f;
  WriteOptions o;
  o.compression_level = 0;
  write_wheel(f.contents, f.out(), o);
  for (const auto& e : read_archive(f.out()).entries) EXPECT_EQ(e.method, 0) << e.name;
  for (int bad : {-1, 10}) {
    o.compression_level = bad;
    try {
      write_wheel(f.contents, f.out("bad"), o);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
    }
  }
  EXPECT_FALSE(fs::exists(f.out("bad")));
}

TEST(WheelWriter, SourceDateEpochHonoured) {
  Fixture f;
  WriteOptions o;
  o.source_date_epoch = 1700000001;  // 2023-11-14T22:13:21Z; DOS keeps even seconds
  write_wheel(f.contents, f.out(), o);
  for (const auto& e : read_archive(f.out()).entries) {
    EXPECT_EQ(e.date, dos_date(2023, 11, 14)) << e.name;
    EXPECT_EQ(e.time, dos_time(22, 13, 20)) << e.name;
  }
}

TEST(WheelWriter, SourceDateEpochClampedToZipRange) {
  Fixture f;
  WriteOptions o;
  o.source_date_epoch = 0;  // before 1980: clamped like pypa/wheel's MINIMUM_TIMESTAMP
  write_wheel(f.contents, f.out("low"), o);
  for (const auto& e : read_archive(f.out("low")).entries) {
    EXPECT_EQ(e.date, dos_date(1980, 1, 1));
    EXPECT_EQ(e.time, 0);
  }
  EXPECT_EQ(slurp(f.out("low")), (write_wheel(f.contents, f.out("default"), {}), slurp(f.out("default"))));
  o.source_date_epoch = 5000000000;  // 2128: past the DOS range, clamped to its end
  write_wheel(f.contents, f.out("high"), o);
  for (const auto& e : read_archive(f.out("high")).entries) {
    EXPECT_EQ(e.date, dos_date(2107, 12, 31));
    EXPECT_EQ(e.time, dos_time(23, 59, 58));
  }
}

TEST(WheelWriter, SourceDateEpochFromEnv) {
  {
    ScopedEnv e("SOURCE_DATE_EPOCH", nullptr);
    EXPECT_FALSE(source_date_epoch_from_env());
  }
  {
    ScopedEnv e("SOURCE_DATE_EPOCH", "");
    EXPECT_FALSE(source_date_epoch_from_env());
  }
  {
    ScopedEnv e("SOURCE_DATE_EPOCH", "1700000000");
    EXPECT_EQ(source_date_epoch_from_env(), std::optional<std::time_t>(1700000000));
  }
  for (auto bad : {"abc", "-5", "12x", "1.5", "99999999999999999999999"}) {
    ScopedEnv e("SOURCE_DATE_EPOCH", bad);
    try {
      source_date_epoch_from_env();
      ADD_FAILURE() << bad;
    } catch (const Error& err) {
      EXPECT_EQ(err.kind(), ErrorKind::usage);
      EXPECT_NE(std::string(err.what()).find("SOURCE_DATE_EPOCH"), std::string::npos);
    }
  }
}

TEST(WheelWriter, ByteIdenticalAcrossRunsAndTimeZones) {
  Fixture f;
  WriteOptions o;
  o.source_date_epoch = 1700000000;
  std::string first;
  int i = 0;
  // POSIX TZ strings, so no tzdata is needed: UTC, US Eastern with DST,
  // New Zealand (east of UTC, DST in the southern summer), and UTC+14.
  for (const char* tz : {"UTC0", "UTC0", "EST5EDT,M3.2.0,M11.1.0", "NZST-12NZDT,M9.5.0,M4.1.0/3", "LINT-14"}) {
    ScopedEnv e("TZ", tz);
    const fs::path out = f.out("run" + std::to_string(i++));
    write_wheel(f.contents, out, o);
    if (first.empty()) first = slurp(out);
    else EXPECT_EQ(slurp(out), first) << "TZ=" << tz;
  }
}

// Without a digest the writer skips only the final hash: the same bytes.
TEST(WheelWriter, WithoutADigestTheBytesAreTheSameAndNoHashIsReported) {
  Fixture f;
  WriteOptions o;
  const WrittenWheel with = write_wheel(f.contents, f.out("with"), o);
  o.digest = false;
  const WrittenWheel without = write_wheel(f.contents, f.out("without"), o);
  EXPECT_EQ(with.sha256, sha256sum(f.out("with")));
  EXPECT_EQ(without.sha256, "");
  EXPECT_EQ(slurp(f.out("without")), slurp(f.out("with")));
  EXPECT_EQ(without.size, with.size);
  EXPECT_EQ(without.record, with.record);
}

TEST(WheelWriter, TimestampInsideALocalDstGap) {
  // 02:30 UTC on a day whose local clocks jump from 02:00 to 03:00: a local
  // 02:30 does not exist there, but the archive must still say 02:30.
  struct Case {
    const char* tz;
    std::time_t epoch;
    int y, mo, d;
  } cases[] = {
      {"EST5EDT,M3.2.0,M11.1.0", 1710037800, 2024, 3, 10},        // 2024-03-10T02:30:00Z
      {"NZST-12NZDT,M9.5.0,M4.1.0/3", 1727577000, 2024, 9, 29},   // 2024-09-29T02:30:00Z
  };
  Fixture f;
  int i = 0;
  for (const auto& c : cases) {
    ScopedEnv e("TZ", c.tz);
    WriteOptions o;
    o.source_date_epoch = c.epoch;
    const fs::path out = f.out("gap" + std::to_string(i++));
    write_wheel(f.contents, out, o);
    for (const auto& en : read_archive(out).entries) {
      EXPECT_EQ(en.date, dos_date(c.y, c.mo, c.d)) << c.tz << " " << en.name;
      EXPECT_EQ(en.time, dos_time(2, 30, 0)) << c.tz << " " << en.name;
    }
  }
}

TEST(WheelWriter, NonAsciiAndCsvSpecialNames) {
  Fixture f;
  const fs::path src = f.tmp.path() / "src" / "a.py";
  f.contents.members = {{"pkg/\xc3\xa9t\xc3\xa9,\"q\".py", src, 3, false}, {"pkg/plain.py", src, 3, false}};
  write_wheel(f.contents, f.out(), {});
  auto a = read_archive(f.out());
  ASSERT_EQ(a.entries.size(), 5u);
  EXPECT_EQ(a.entries[0].name, "pkg/plain.py");
  EXPECT_EQ(a.entries[1].name, "pkg/\xc3\xa9t\xc3\xa9,\"q\".py");
  EXPECT_EQ(a.entries[1].flags & 0x0800, 0x0800) << "UTF-8 name flag (APPNOTE bit 11)";
  EXPECT_EQ(a.entries[1].extra_len, 0);
  const std::string record = read_member(f.out(), "pkg-1.0.dist-info/RECORD");
  EXPECT_NE(record.find(std::string("\"pkg/\xc3\xa9t\xc3\xa9,\"\"q\"\".py\",") + kShaAbc + ",3\n"), std::string::npos) << record;
}

TEST(WheelWriter, FileChangingSizeWhilePackingFailsAndLeavesNothing) {
  // /proc files stat as 0 bytes but read as more: the same as a file that
  // grows between listing and packing, without any timing.
  Fixture f;
  f.contents.members.push_back({"pkg/zz_growing", "/proc/self/status", std::nullopt, false});
  const fs::path out = f.out();
  fs::create_directories(out.parent_path());
  try {
    write_wheel(f.contents, out, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("changed size while being packed"), std::string::npos) << what;
    EXPECT_NE(what.find("/proc/self/status"), std::string::npos) << what;
    EXPECT_NE(what.find("pkg-1.0-py3-none-any.whl"), std::string::npos) << what;
  }
  EXPECT_EQ(dir_listing(out.parent_path()), std::vector<std::string>{});
}

TEST(WheelWriter, DeclaredSizeMismatchFails) {
  Fixture f;
  f.contents.members[0].size = 4;  // a.py holds 3 bytes
  EXPECT_THROW(write_wheel(f.contents, f.out(), {}), Error);
  EXPECT_EQ(dir_listing(f.out().parent_path()), std::vector<std::string>{});
}

TEST(WheelWriter, MissingSourceFails) {
  Fixture f;
  f.contents.members[0].source = f.tmp.path() / "gone.py";
  f.contents.members[0].size = std::nullopt;
  try {
    write_wheel(f.contents, f.out(), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gone.py"), std::string::npos);
  }
  EXPECT_EQ(dir_listing(f.out().parent_path()), std::vector<std::string>{});
}

TEST(WheelWriter, DuplicateAndDistInfoMembersRejected) {
  Fixture f;
  auto dup = f.contents;
  dup.members.push_back(dup.members[1]);
  try {
    write_wheel(dup, f.out(), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("duplicate member 'pkg/sub/m.py'"), std::string::npos) << e.what();
  }
  auto clash = f.contents;
  clash.members.push_back({"pkg-1.0.dist-info/RECORD", f.tmp.path() / "src/a.py", 3, false});
  try {
    write_wheel(clash, f.out(), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find(".dist-info"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(f.out()));
}

TEST(WheelWriter, MembersUnderAnotherDistInfoOrDataDirectoryRejected) {
  // The generated .dist-info is the only one a wheel may have, and a
  // top-level *.data is the installer's data directory: pip refuses both.
  Fixture f;
  for (const std::string path : {"other-2.0.dist-info/__init__.py", "pkg-1.0.data/__init__.py"}) {
    auto bad = f.contents;
    bad.members.push_back({path, f.tmp.path() / "src/a.py", 3, false});
    try {
      write_wheel(bad, f.out(), {});
      FAIL() << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      EXPECT_NE(std::string(e.what()).find("member '" + path + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("pip refuses"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(f.out()));
  }
}

TEST(WheelWriter, StagedWheelIsInvisibleUntilCommitted) {
  Fixture f;
  const fs::path out = f.out();
  {
    StagedWheel s = stage_wheel(f.contents, out, {});
    EXPECT_FALSE(fs::exists(out));
    // The hidden temp file, and the lock that proves it is ours (scratch_owner.hpp).
    const auto staged = dir_listing(out.parent_path());
    ASSERT_EQ(staged.size(), 2u);
    EXPECT_TRUE(staged[0].starts_with(".kwheel-owner-") || staged[1].starts_with(".kwheel-owner-"));
    EXPECT_TRUE(staged[0].find(".kwheel-tmp-") != std::string::npos || staged[1].find(".kwheel-tmp-") != std::string::npos);
    EXPECT_EQ(s.info.sha256.size(), 64u);
  }  // destroyed uncommitted
  EXPECT_EQ(dir_listing(out.parent_path()), std::vector<std::string>{});
  StagedWheel s = stage_wheel(f.contents, out, {});
  const std::string staged_hash = s.info.sha256;
  s.commit();
  EXPECT_EQ(dir_listing(out.parent_path()), std::vector<std::string>{out.filename().string()});
  EXPECT_EQ(sha256sum(out), staged_hash);
}

TEST(WheelWriter, OverwritesAnExistingWheelAtomically) {
  Fixture f;
  write(f.out(), "old contents");
  write_wheel(f.contents, f.out(), {});
  EXPECT_EQ(read_member(f.out(), "pkg/a.py"), "abc");
  EXPECT_EQ(dir_listing(f.out().parent_path()).size(), 1u);
}

TEST(WheelWriter, MembersOfManyChunksRoundTripAtEveryLevel) {
  // Sizes around the deflater's chunk: an exact multiple (the last chunk is
  // empty), one with a tail, and one just under a chunk. libzip reads them
  // back through zlib and checks each CRC; the bytes must be the input's.
  TempDir tmp;
  std::string pattern;
  for (size_t i = 0; pattern.size() < 2 * kDeflateChunk + 12345; ++i)
    pattern += std::to_string(i * 2654435761u) + (i % 7 ? "," : "\n");
  const std::vector<std::pair<std::string, size_t>> sizes = {
      {"pkg/exact.so", 2 * kDeflateChunk}, {"pkg/tail.so", 2 * kDeflateChunk + 12345}, {"pkg/under.so", kDeflateChunk - 1}};
  WheelContents contents;
  contents.dist_info = "pkg-1.0.dist-info";
  contents.metadata = pattern.substr(0, 5000);
  contents.wheel = "Wheel-Version: 1.0\n";
  for (const auto& [name, size] : sizes) {
    const fs::path src = tmp.path() / "src" / fs::path(name).filename();
    write(src, pattern.substr(0, size));
    contents.members.push_back({name, src, size, false});
  }
  for (int level : {0, 1, 6, 9}) {
    SCOPED_TRACE("level " + std::to_string(level));
    const fs::path out = tmp.path() / ("l" + std::to_string(level)) / "pkg-1.0-py3-none-any.whl";
    WriteOptions o;
    o.compression_level = level;
    write_wheel(contents, out, o);
    for (const auto& [name, size] : sizes) {
      const std::string got = read_member(out, name);
      EXPECT_EQ(got.size(), size) << name;
      EXPECT_TRUE(got == pattern.substr(0, size)) << name;
    }
    EXPECT_EQ(read_member(out, "pkg-1.0.dist-info/METADATA"), contents.metadata);
    if (level > 0) {  // compressed for real: well under the input size
      EXPECT_LT(fs::file_size(out), (4 * kDeflateChunk) * 3 / 4);
    }
  }
}

namespace {

// Bytes that compress like a shared library: runs of a few recurring
// "instructions" with pseudo-random immediates, and stretches of noise.
std::string machine_like(size_t n, unsigned seed) {
  std::mt19937 rng(seed);  // its output sequence is fixed by the C++ standard
  static const std::string ops[] = {"\x48\x89\xe5", "\x48\x8b\x45", "\xe8", "\x0f\x1f\x44\x00\x00", "\xc3", "\x41\x57\x41\x56"};
  std::string out;
  out.reserve(n);
  while (out.size() < n) {
    if (rng() % 16 == 0) {
      for (int i = 0; i < 64; ++i) out += static_cast<char>(rng());
    } else {
      out += ops[rng() % 6];
      out += static_cast<char>(rng() % 8);
    }
  }
  out.resize(n);
  return out;
}

}  // namespace

TEST(WheelWriter, BytesAreThoseOfTheSerialWriter) {
  // The sha256 of each wheel was recorded from the one-chunk-at-a-time
  // writer (commit bc5bfc7, libdeflate 1.14, libzip 1.7.3) before deflate
  // went parallel: any later writer must give the same bytes, or reuse
  // fingerprints and reproducibility claims break. Sizes sit on and around
  // the 1 MiB chunk edges.
  TempDir tmp;
  WheelContents contents;
  contents.dist_info = "pkg-1.0.dist-info";
  contents.metadata = "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n";
  contents.wheel = "Wheel-Version: 1.0\n";
  const std::vector<std::pair<std::string, size_t>> sizes = {
      {"pkg/empty.py", 0}, {"pkg/one.py", 1}, {"pkg/exact.so", kDeflateChunk}, {"pkg/plus1.so", kDeflateChunk + 1},
      {"pkg/big.so", 3 * kDeflateChunk + 777}};
  unsigned seed = 1;
  for (const auto& [name, size] : sizes) {
    const fs::path src = tmp.path() / "src" / fs::path(name).filename();
    write(src, machine_like(size, seed++));
    contents.members.push_back({name, src, size, name.ends_with(".so")});
  }
  const std::vector<std::pair<int, std::string>> expected = {
      {1, "52ff2b1586580cdf54d8bbf0eca59aef6d143c1751ba28f1d33cca76cdb69880"},
      {6, "7e0ea6527c7be07e18646e25fbafab9dbd53f9ac229ebac1d3e4ad6918b7a8a2"},
      {9, "b8b689b9309fef49e090580bda8116253e5e88f7162f97a31ed794034e738e4a"}};
  // The writer's own one-worker pool, and a shared pool of four workers
  // with a budget of eight chunks, so chunks of one member run at once.
  DeflatePool shared(4);
  for (DeflatePool* pool : {static_cast<DeflatePool*>(nullptr), &shared})
    for (const auto& [level, sha] : expected) {
      WriteOptions o;
      o.compression_level = level;
      o.pool = pool;
      const fs::path out = tmp.path() / (pool ? "shared" : "own") / ("l" + std::to_string(level)) / "pkg-1.0-py3-none-any.whl";
      EXPECT_EQ(write_wheel(contents, out, o).sha256, sha) << "level " << level << (pool ? ", shared pool" : "");
    }
}

TEST(WheelWriter, DistInfoTextsAreWrittenBeforeMetadataAndListedInRecord) {
  Fixture f;
  f.contents.members = {{"pkg/a.py", f.tmp.path() / "src" / "a.py", 3, false}};
  f.contents.dist_info_texts = {{"hub_kernel.json", "abc"}};
  auto w = write_wheel(f.contents, f.out(), {});
  auto a = read_archive(f.out());
  std::vector<std::string> names;
  for (const auto& e : a.entries) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"pkg/a.py", "pkg-1.0.dist-info/hub_kernel.json", "pkg-1.0.dist-info/METADATA",
                                             "pkg-1.0.dist-info/WHEEL", "pkg-1.0.dist-info/RECORD"}));
  EXPECT_EQ(read_member(f.out(), "pkg-1.0.dist-info/hub_kernel.json"), "abc");
  EXPECT_EQ(read_member(f.out(), "pkg-1.0.dist-info/RECORD"),
            std::string("pkg/a.py,") + kShaAbc + ",3\npkg-1.0.dist-info/hub_kernel.json," + kShaAbc + ",3\npkg-1.0.dist-info/METADATA," + kShaAbc +
                ",3\npkg-1.0.dist-info/WHEEL," + kShaEmpty + ",0\npkg-1.0.dist-info/RECORD,,\n");
  EXPECT_EQ(w.record.size(), 5u);
}

TEST(WheelWriter, ADistInfoTextMayNotReplaceAGeneratedFileOrAMember) {
  for (const std::string name : {"METADATA", "RECORD", "RECORD.jws", "WHEEL", "x.json", "sub/x", ""}) {
    SCOPED_TRACE(name);
    Fixture f;
    f.contents.members.push_back({"pkg-1.0.dist-info/x.json", f.tmp.path() / "src" / "a.py", 3, false});
    f.contents.dist_info_texts = {{name, "{}"}};
    EXPECT_THROW(write_wheel(f.contents, f.out(), {}), Error);
    EXPECT_FALSE(fs::exists(f.out()));
  }
}
