// libzip writing through ArchiveFile must give the bytes its own file source
// gives, whatever the members' sizes: the archive is the same, only the
// writes differ (256 KiB pieces, in place). Failures keep their system error,
// which the wheel writer turns into advice (a full disk names -o).
#include "kwheel/wheel/archive_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zip.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "kwheel/base/temp_dir.hpp"

using namespace kwheel;
namespace fs = std::filesystem;

namespace {

// Members of many 256 KiB writes and between them, compressed and stored:
// libzip seeks back over each to write its local header again.
std::vector<std::pair<std::string, std::string>> members() {
  std::mt19937 rng(7);
  auto bytes = [&](size_t n, unsigned alphabet) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(rng() % alphabet);
    return s;
  };
  return {{"a/empty.py", ""}, {"a/small.py", "print('x')\n"}, {"a/noise.so", bytes(3 * (1 << 20) + 17, 256)},
          {"a/text.so", bytes((1 << 20) - 3, 4)}, {"a/exact.bin", bytes(1 << 20, 256)}};
}

void add_all(zip_t* za, const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [name, data] : files) {
    zip_source_t* src = zip_source_buffer(za, data.data(), data.size(), 0);
    ASSERT_NE(src, nullptr);
    const zip_int64_t i = zip_file_add(za, name.c_str(), src, ZIP_FL_ENC_UTF_8);
    ASSERT_GE(i, 0) << zip_strerror(za);
    ASSERT_EQ(zip_set_file_compression(za, static_cast<zip_uint64_t>(i), name.ends_with(".bin") ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 6), 0);
    ASSERT_EQ(zip_file_set_mtime(za, static_cast<zip_uint64_t>(i), 315532800 + 86400, 0), 0);
  }
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

void touch(const fs::path& p) { ::close(::open(p.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644)); }

// Opens an archive over `file` as the wheel writer does; adds `files`;
// returns zip_close's result, and the archive's error in `err`.
int write_through(ArchiveFile& file, const std::vector<std::pair<std::string, std::string>>& files, zip_error_t* err) {
  zip_error_init(err);
  zip_source_t* src = file.source(err);
  EXPECT_NE(src, nullptr);
  zip_t* za = zip_open_from_source(src, ZIP_CREATE | ZIP_TRUNCATE, err);
  if (!za) {
    zip_source_free(src);
    return -1;
  }
  add_all(za, files);
  if (zip_close(za) == 0) return 0;
  zip_error_set(err, zip_error_code_zip(zip_get_error(za)), zip_error_code_system(zip_get_error(za)));
  zip_discard(za);
  return -1;
}

}  // namespace

TEST(ArchiveFile, WritesTheBytesOfLibzipsOwnFileSource) {
  TempDir dir("archive-file");
  const auto files = members();
  const fs::path theirs = dir.path() / "theirs.zip", ours = dir.path() / "ours.zip";
  int zerr = 0;
  zip_t* za = zip_open(theirs.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &zerr);
  ASSERT_NE(za, nullptr) << zerr;
  add_all(za, files);
  ASSERT_EQ(zip_close(za), 0);

  touch(ours);
  ArchiveFile file(ours);
  zip_error_t err;
  ASSERT_EQ(write_through(file, files, &err), 0) << zip_error_strerror(&err);
  zip_error_fini(&err);
  const std::string a = slurp(theirs), b = slurp(ours);
  EXPECT_GT(b.size(), size_t{4} << 20);
  EXPECT_TRUE(a == b) << "archive of " << b.size() << " bytes differs from libzip's " << a.size();
}

TEST(ArchiveFile, AFullDiskIsReportedAsOne) {
  // /dev/full takes the open and refuses every write with ENOSPC.
  ArchiveFile file("/dev/full");
  zip_error_t err;
  EXPECT_NE(write_through(file, members(), &err), 0);
  EXPECT_EQ(zip_error_code_zip(&err), ZIP_ER_WRITE);
  EXPECT_EQ(zip_error_code_system(&err), ENOSPC);
  zip_error_fini(&err);
}

TEST(ArchiveFile, AFileThatIsGoneIsReportedWithItsErrno) {
  TempDir dir("archive-file");
  ArchiveFile file(dir.path() / "never-created.zip");
  zip_error_t err;
  EXPECT_NE(write_through(file, members(), &err), 0);
  EXPECT_EQ(zip_error_code_zip(&err), ZIP_ER_OPEN);
  EXPECT_EQ(zip_error_code_system(&err), ENOENT);
  zip_error_fini(&err);
  EXPECT_FALSE(fs::exists(dir.path() / "never-created.zip"));
}
