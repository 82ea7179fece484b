// A file:// index is read with the caps an HTTP one has, and its links may
// lead only to regular files of its own site (pin_source.hpp): /dev/zero,
// a FIFO, ../ and symlinks out of the site, absolute paths elsewhere are
// one Error(input) each, before a byte of them is read. Each pin here would
// hash /dev/zero for ever or read it until memory ran out without the check.
#include "kwheel/index/pin_source.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

namespace kwheel {
// Named, not anonymous: the unit tests build as one unity file per domain.
namespace pin_source_test {

namespace fs = std::filesystem;
using testing::error_of;
using testing::sha256sum;

const std::string kWheel = "img2gray-1+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl";

class FileIndex : public ::testing::Test {
 protected:
  FileIndex() {
    fs::create_directories(site() / "files");
    const std::string di = "img2gray-1+torch2.7.cu126.dist-info";
    testing::write_test_wheel(site() / "files" / kWheel,
                              {{"img2gray/__init__.py", "\n"},
                               {di + "/METADATA", "Metadata-Version: 2.1\nName: img2gray\nVersion: 1+torch2.7.cu126\nKeywords: hf-kernel\n"},
                               {di + "/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp39-abi3-linux_x86_64\n"}},
                              di + "/RECORD");
  }
  // SITE/simple/img2gray/index.json (PEP 691) listing `filename` at `url`:
  // the file name stays a valid wheel name of the project whatever the URL.
  void page(const std::string& url, const std::string& filename = kWheel) {
    fs::create_directories(site() / "simple" / "img2gray");
    const nlohmann::json files{{{"filename", filename}, {"url", url}, {"hashes", {{"sha256", std::string(64, 'a')}}}}};
    std::ofstream(site() / "simple" / "img2gray" / "index.json") << nlohmann::json{{"meta", {{"api-version", "1.1"}}}, {"name", "img2gray"}, {"files", files}}.dump();
  }
  PinRequest request(bool lock = false) const {
    PinRequest r;
    r.source = "file://" + (site() / "simple").string();
    r.name = "img2gray";
    r.target = testing::linux_cpython311("2.7.1", "12.6");
    if (lock) {
      r.repo_id = "org/img2gray";
      r.commit = std::string(40, '1');
    }
    return r;
  }
  std::string refused(const PinRequest& req) {
    const std::string e = error_of([&] { pin(req); }, ErrorKind::input);
    EXPECT_NE(e.find("index page file://" + (site() / "simple").string() + "/img2gray/ links '"), std::string::npos) << e;
    EXPECT_NE(e.find("a file:// index may link only regular files of its own site"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    return e;
  }
  fs::path site() const { return dir_.path() / "site"; }
  fs::path outside() const { return dir_.path() / "outside"; }

 private:
  TempDir dir_{"unit"};
};

TEST_F(FileIndex, ALinkToDevZeroIsRefusedWithAndWithoutLock) {
  page("file:///dev/zero");
  for (const bool lock : {false, true}) {
    const std::string e = refused(request(lock));
    EXPECT_NE(e.find("links 'file:///dev/zero', which resolves to '/dev/zero', outside the site '" + fs::canonical(site()).string() + "'"), std::string::npos) << e;
  }
  page("/dev/zero");  // an absolute path, not a URL
  EXPECT_NE(refused(request(true)).find("links '/dev/zero', which resolves to '/dev/zero', outside the site"), std::string::npos);
}

TEST_F(FileIndex, RelativeEscapesAndSymlinksOutOfTheSiteAreRefused) {
  fs::create_directories(outside());
  fs::copy_file(site() / "files" / kWheel, outside() / kWheel);
  page("../../../outside/" + kWheel);
  EXPECT_NE(refused(request()).find("outside the site"), std::string::npos);
  page("..%2F..%2F..%2Foutside%2F" + kWheel);  // decoded only when the file is opened: still out
  EXPECT_NE(refused(request()).find("outside the site"), std::string::npos);
  page("file://" + (outside() / kWheel).string());
  EXPECT_NE(refused(request()).find("outside the site"), std::string::npos);
  fs::create_directories(site() / "links");
  fs::create_symlink(outside() / kWheel, site() / "links" / kWheel);
  page("../../links/" + kWheel);
  EXPECT_NE(refused(request()).find("resolves to '" + fs::canonical(outside() / kWheel).string() + "', outside the site"), std::string::npos);
  fs::create_symlink("/dev/zero", site() / "files" / "zero.whl");
  page("../../files/zero.whl");
  EXPECT_NE(refused(request(true)).find("resolves to '/dev/zero', outside the site"), std::string::npos);
  // The project's directory itself may not be a way out either.
  fs::remove_all(site() / "simple" / "img2gray");
  fs::create_directories(outside() / "img2gray");
  std::ofstream(outside() / "img2gray" / "index.html") << "<a href=\"x\">x</a>";
  fs::create_directory_symlink(outside() / "img2gray", site() / "simple" / "img2gray");
  const std::string e = error_of([&] { pin(request()); }, ErrorKind::input);
  EXPECT_NE(e.find("outside the site"), std::string::npos) << e;
}

TEST_F(FileIndex, ALinkInsideTheSiteMustBeARegularFile) {
  fs::create_directories(site() / "fifo");
  ASSERT_EQ(::mkfifo((site() / "fifo" / kWheel).c_str(), 0600), 0);
  page("../../fifo/" + kWheel);
  EXPECT_NE(refused(request(true)).find("which is not a regular file"), std::string::npos);
  fs::create_directories(site() / "dir" / kWheel);
  page("../../dir/" + kWheel);
  EXPECT_NE(refused(request()).find("which is not a regular file"), std::string::npos);
  page("../../files/missing-" + kWheel);
  EXPECT_NE(refused(request()).find("which is not a regular file"), std::string::npos);
}

TEST_F(FileIndex, APageIsARegularFileUnderTheHttpCap) {
  fs::create_directories(site() / "simple" / "img2gray");
  fs::create_symlink("/dev/zero", site() / "simple" / "img2gray" / "index.json");
  const std::string e = error_of([&] { pin(request()); }, ErrorKind::input);
  EXPECT_NE(e.find("index.json' is not a regular file"), std::string::npos) << e;
  EXPECT_NE(e.find("rebuild the index with `kwheel index`"), std::string::npos) << e;
  fs::remove(site() / "simple" / "img2gray" / "index.json");
  const fs::path big = site() / "simple" / "img2gray" / "index.html";
  std::ofstream(big).close();
  fs::resize_file(big, (16u << 20) + 1);  // sparse: nothing is written
  const std::string over = error_of([&] { pin(request()); }, ErrorKind::input);
  EXPECT_NE(over.find("over the 16 MiB limit"), std::string::npos) << over;
}

TEST_F(FileIndex, AVariantIndexPageLinkingDevZeroIsRefused) {
  fs::create_directories(site() / "simple" / "img2gray");
  const nlohmann::json files{{{"filename", "img2gray-1+torch2.11-variants.json"}, {"url", "file:///dev/zero"}, {"hashes", {{"sha256", std::string(64, 'a')}}}},
                             {{"filename", kWheel}, {"url", "../../files/" + kWheel}, {"hashes", {{"sha256", std::string(64, 'a')}}}}};
  std::ofstream(site() / "simple" / "img2gray" / "index.json") << nlohmann::json{{"meta", {{"api-version", "1.1"}}}, {"name", "img2gray"}, {"files", files}}.dump();
  EXPECT_NE(refused(request()).find("links 'file:///dev/zero'"), std::string::npos);
}

TEST_F(FileIndex, AKwheelSitesSubIndexesLinkTheSitesFilesAndASymlinkedSiteWorks) {
  // SITE/kwheel-index.json marks the site: SITE/torch2.7-cu126/simple/ links SITE/files/.
  std::ofstream(site() / "kwheel-index.json") << "{}";
  const fs::path sub = site() / "torch2.7-cu126" / "simple" / "img2gray";
  fs::create_directories(sub);
  const std::string sha = sha256sum(site() / "files" / kWheel);
  std::ofstream(sub / "index.html") << "<a href=\"../../../files/" + kWheel + "#sha256=" + sha + "\">" + kWheel + "</a>\n";
  PinRequest req = request();
  req.source = "file://" + (site() / "torch2.7-cu126" / "simple").string();
  EXPECT_EQ(pin(req).requirement, "img2gray==1+torch2.7.cu126 --hash=sha256:" + sha);
  fs::create_directory_symlink(site(), outside());
  req.source = "file://" + (outside() / "torch2.7-cu126" / "simple").string();
  EXPECT_EQ(pin(req).requirement, "img2gray==1+torch2.7.cu126 --hash=sha256:" + sha);
  EXPECT_EQ(file_index_site(outside() / "torch2.7-cu126" / "simple"), fs::canonical(site()));
  // Without kwheel-index.json, a root named simple links what is beside it.
  fs::remove(site() / "kwheel-index.json");
  EXPECT_EQ(file_index_site(site() / "simple"), fs::canonical(site()));
  EXPECT_EQ(file_index_site(site() / "torch2.7-cu126"), fs::canonical(site() / "torch2.7-cu126"));
}

}  // namespace pin_source_test
}  // namespace kwheel
