// Re-labelling a built wheel as a PEP 825 variant wheel, checked with
// libzip and Python's own RECORD rule (urlsafe base64 sha256 without
// padding, computed here by `openssl`/`base64` through the shell), not
// with kwheel's reader.
#include "kwheel/wheel/relabel.hpp"

#include <gtest/gtest.h>
#include <zip.h>

#include <fstream>
#include <map>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "test_support.hpp"

using namespace kwheel;
namespace fs = std::filesystem;
using kwheel::testing::sha256sum;
using kwheel::testing::slurp;

namespace {

void write(const fs::path& p, const std::string& content) { kwheel::testing::write_file(p, content); }

// name -> (bytes, unix mode) in archive order.
std::vector<std::pair<std::string, std::pair<std::string, unsigned>>> read_zip(const fs::path& p) {
  int err = 0;
  zip_t* z = zip_open(p.c_str(), ZIP_RDONLY, &err);
  EXPECT_NE(z, nullptr);
  std::vector<std::pair<std::string, std::pair<std::string, unsigned>>> out;
  for (zip_int64_t i = 0; z && i < zip_get_num_entries(z, 0); ++i) {
    zip_stat_t st;
    zip_stat_index(z, i, 0, &st);
    std::string bytes(st.size, '\0');
    zip_file_t* f = zip_fopen_index(z, i, 0);
    zip_fread(f, bytes.data(), st.size);
    zip_fclose(f);
    zip_uint8_t os = 0;
    zip_uint32_t attr = 0;
    zip_file_get_external_attributes(z, i, 0, &os, &attr);
    out.push_back({st.name, {bytes, (attr >> 16) & 0777}});
  }
  if (z) zip_close(z);
  return out;
}

// RECORD's hash of `bytes`, by the shell's tools.
std::string record_hash(const std::string& bytes, const fs::path& scratch) {
  write(scratch, bytes);
  const std::string cmd = "openssl dgst -sha256 -binary '" + scratch.string() + "' | base64 -w0 | tr '+/' '-_' | tr -d '='";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[128] = {};
  const size_t n = fread(buf, 1, sizeof buf - 1, p);
  pclose(p);
  return "sha256=" + std::string(buf, n);
}

class Relabel : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path src = dir.path() / "src";
    write(src / "__init__.py", "from ._ops import ops\n");
    write(src / "_ops.abi3.so", std::string("\x7f" "ELF fake object", 16));
    write(src / "LICENSE", "MIT\n");
    WheelContents c;
    c.dist_info = "img2gray-1.0+torch2.11.cu130.dist-info";
    c.metadata = "Metadata-Version: 2.1\nName: img2gray\nVersion: 1.0+torch2.11.cu130\nRequires-Dist: torch==2.11.*\n\nThe kernel.\nVersion: 9 (body text)\n";
    c.wheel = "Wheel-Version: 1.0\nGenerator: kwheel\nRoot-Is-Purelib: false\nTag: cp39-abi3-manylinux_2_28_x86_64\n";
    c.members = {{"img2gray/__init__.py", src / "__init__.py", std::nullopt, false},
                 {"img2gray/_ops.abi3.so", src / "_ops.abi3.so", std::nullopt, true},
                 {"img2gray-1.0+torch2.11.cu130.dist-info/licenses/LICENSE", src / "LICENSE", std::nullopt, false}};
    built = write_wheel(c, dir.path() / "in" / "img2gray-1.0+torch2.11.cu130-cp39-abi3-manylinux_2_28_x86_64.whl", WriteOptions{}).path;
  }
  TempDir dir{"relabel-test"};
  fs::path built;
  VariantRelabel relabel{"1.0+torch2.11", "cu130_sm90", "{\"variants\": {\"cu130_sm90\": {}}}\n", ""};
};

TEST_F(Relabel, KeepsThePackageBytesAndWritesAValidRecord) {
  const WheelArchive in(built);
  EXPECT_EQ(relabelled_filename(in, relabel), "img2gray-1.0+torch2.11-cp39-abi3-manylinux_2_28_x86_64-cu130_sm90.whl");
  StagedWheel staged = stage_relabelled(in, relabel, dir.path() / "out", WriteOptions{});
  staged.commit();
  const auto before = read_zip(built);
  const auto after = read_zip(staged.info.path);
  std::map<std::string, std::string> old_bytes, new_bytes;
  for (const auto& [n, e] : before) old_bytes[n] = e.first;
  for (const auto& [n, e] : after) new_bytes[n] = e.first;
  const std::string d = "img2gray-1.0+torch2.11.dist-info/";
  EXPECT_EQ(new_bytes["img2gray/__init__.py"], old_bytes["img2gray/__init__.py"]);
  EXPECT_EQ(new_bytes["img2gray/_ops.abi3.so"], old_bytes["img2gray/_ops.abi3.so"]);
  EXPECT_EQ(new_bytes[d + "licenses/LICENSE"], "MIT\n");
  EXPECT_EQ(new_bytes[d + "variant.json"], relabel.variant_json);
  // Only the header's Version changes; the body keeps its text.
  EXPECT_EQ(new_bytes[d + "METADATA"],
            "Metadata-Version: 2.1\nName: img2gray\nVersion: 1.0+torch2.11\nRequires-Dist: torch==2.11.*\n\nThe kernel.\nVersion: 9 (body text)\n");
  for (const auto& [n, _] : after) EXPECT_FALSE(n.starts_with("img2gray-1.0+torch2.11.cu130.dist-info/")) << n;
  // Every row hashes what the archive holds; every member has a row.
  std::map<std::string, std::string> rows;
  std::istringstream record(new_bytes[d + "RECORD"]);
  for (std::string line; std::getline(record, line);) rows[line.substr(0, line.find(','))] = line.substr(line.find(',') + 1);
  EXPECT_EQ(rows.size(), after.size());
  for (const auto& [n, bytes] : new_bytes) {
    if (n == d + "RECORD") continue;
    EXPECT_EQ(rows[n], record_hash(bytes, dir.path() / "h") + "," + std::to_string(bytes.size())) << n;
  }
  // Modes as installers read them; the .dist-info last.
  for (const auto& [n, e] : after) EXPECT_EQ(e.second, n.ends_with(".so") ? 0755u : 0644u) << n;
  EXPECT_EQ(after.back().first, d + "RECORD");
  EXPECT_TRUE(after.front().first.starts_with("img2gray/"));
}

TEST_F(Relabel, IsReproducible) {
  const WheelArchive in(built);
  StagedWheel a = stage_relabelled(in, relabel, dir.path() / "a", WriteOptions{});
  StagedWheel b = stage_relabelled(in, relabel, dir.path() / "b", WriteOptions{});
  a.commit();
  b.commit();
  EXPECT_EQ(sha256sum(a.info.path), sha256sum(b.info.path));
}

TEST_F(Relabel, RefusesAWheelWhoseRecordDoesNotHold) {
  // The same archive with one member's bytes changed behind RECORD's back.
  const fs::path tampered = dir.path() / "t" / built.filename();
  fs::create_directories(tampered.parent_path());
  fs::copy_file(built, tampered);
  int err = 0;
  zip_t* z = zip_open(tampered.c_str(), 0, &err);
  const std::string evil = "import os\n";
  zip_source_t* s = zip_source_buffer(z, evil.data(), evil.size(), 0);
  zip_file_replace(z, zip_name_locate(z, "img2gray/__init__.py", 0), s, 0);
  zip_close(z);
  const WheelArchive in(tampered);
  EXPECT_THROW(stage_relabelled(in, relabel, dir.path() / "out", WriteOptions{}), Error);
  relabel.source = "dist/" + built.filename().string();
  const std::string why = kwheel::testing::error_of([&] { stage_relabelled(in, relabel, dir.path() / "out", WriteOptions{}); });
  EXPECT_EQ(why.rfind("cannot re-label '" + relabel.source + "' as a variant wheel: its RECORD check failed: ", 0), 0u) << why;
}

// A wheel another tool built, as the site accepts it: `extra` beside a
// package and a METADATA that says `version_line`, RECORD true to all.
fs::path foreign_wheel(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& extra,
                       const std::string& version_line = "Version: 1.0+torch2.11.cpu") {
  const std::string d = "img2gray-1.0+torch2.11.cpu.dist-info/";
  std::vector<std::pair<std::string, std::string>> files{
      {"img2gray/__init__.py", "x = 1\n"},
      {d + "METADATA", "Metadata-Version: 2.1\nName: img2gray\n" + version_line + "\n"},
      {d + "WHEEL", "Wheel-Version: 1.0\nGenerator: other\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}};
  files.insert(files.end(), extra.begin(), extra.end());
  const fs::path path = dir / "img2gray-1.0+torch2.11.cpu-py3-none-any.whl";
  fs::create_directories(dir);
  kwheel::testing::write_test_wheel(path, files, d + "RECORD");
  return path;
}

// What re-labelling cannot carry over is refused before anything is
// written, naming the wheel as its user gave it, never the variant wheel
// that would have been written (a file that exists nowhere).
TEST_F(Relabel, RefusesWhatItCannotCarryOverNamingTheWheelGiven) {
  const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> cases{
      {"a .data directory", {"img2gray-1.0+torch2.11.cpu.data/scripts/tool", "#!/bin/sh\n"}},
      {"a variant.json of its own", {"img2gray-1.0+torch2.11.cpu.dist-info/variant.json", "{}\n"}}};
  VariantRelabel null_label{"1.0+torch2.11", "null", "{\"variants\": {\"null\": {}}}\n", "dist/img2gray-1.0+torch2.11.cpu-py3-none-any.whl"};
  for (const auto& [what, member] : cases) {
    const WheelArchive in(foreign_wheel(dir.path() / "in" / what, {member}));
    const std::string why = kwheel::testing::error_of([&] { stage_relabelled(in, null_label, dir.path() / "out", WriteOptions{}); });
    EXPECT_EQ(why.rfind("cannot re-label '" + null_label.source + "' as a variant wheel: ", 0), 0u) << what << ": " << why;
    EXPECT_NE(why.find("'" + member.first.substr(0, member.first.find('/')) + "/"), std::string::npos) << what << ": " << why;
    EXPECT_EQ(why.find(relabelled_filename(in, null_label)), std::string::npos) << what << ": " << why;
    EXPECT_FALSE(fs::exists(dir.path() / "out" / relabelled_filename(in, null_label))) << what;
  }
}

// "Version:" without the space is a Version field to Python's email parser
// and to kwheel's reader (the site files the wheel under it): re-labelling
// reads it the same way.
TEST_F(Relabel, ReadsAVersionFieldWithoutTheSpace) {
  const WheelArchive in(foreign_wheel(dir.path() / "in", {}, "Version:1.0+torch2.11.cpu\r"));
  VariantRelabel null_label{"1.0+torch2.11", "null", "{\"variants\": {\"null\": {}}}\n", ""};
  EXPECT_EQ(relabelled_metadata(in, null_label), "Metadata-Version: 2.1\nName: img2gray\nVersion: 1.0+torch2.11\r\n");
  StagedWheel staged = stage_relabelled(in, null_label, dir.path() / "out", WriteOptions{});
  staged.commit();
  EXPECT_TRUE(fs::exists(staged.info.path));
}

}  // namespace
