// The manifest reader on files a person or a tool may have left: what
// kwheel writes is read whole, a field of the wrong type counts as absent,
// and anything that is not a kwheel-index 1 manifest is one input error.
#include "kwheel/index/site_manifest_reader.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"

namespace kwheel::site {
namespace {

namespace fs = std::filesystem;

class ManifestReaderTest : public ::testing::Test {
 protected:
  TempDir dir{"manifest-reader-test"};
  fs::path manifest = dir.path() / "kwheel-index.json";
  KeptSettings kept;
  std::vector<RecordedFile> files;

  void read(const std::string& text) {
    std::ofstream(manifest, std::ios::binary) << text;
    files.clear();
    read_manifest(manifest, dir.path(), kept, [&](RecordedFile&& f) { files.push_back(std::move(f)); });
  }
  // The one line of the Error(input) reading `text` gives.
  std::string refusal(const std::string& text) {
    try {
      read(text);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      return e.what();
    }
    ADD_FAILURE() << "accepted: " << text;
    return "";
  }
};

constexpr const char* kVariant =
    R"({"evidence":["libcudart.so.13"],"filename":"relu-1+torch2.11-cp39-abi3-linux_x86_64-cu130.whl","index":"variants/torch2.11",)"
    R"("label":"cu130","metadata_sha256":"","properties":{"nvidia":{"sm_arch":["90_real"]}},"requires_python":">=3.9",)"
    R"("sha256":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","size":12,"unclaimed":[],"version":"1+torch2.11"})";

TEST_F(ManifestReaderTest, WhatKwheelWritesIsReadWhole) {
  read(std::string(R"({"base_url":"https://x/","format":"kwheel-index 1","title":"T","variants":true,
"files": [
{"filename":"relu-1-py3-none-any.whl","gpu_code":["sm_90","sm_100"],"hub":{"commit":"c","repo":"r","url":"u"},"metadata_sha256":"m",)"
                   R"("project":"relu","requires_python":">=3.9","sha256":"s","signature":{"reason":"","standing":"trusted","summary":"signed"},)"
                   R"("size":42,"variant":)") +
       kVariant + R"(,"version":"1"},
{"filename":"gelu-1-py3-none-any.whl","project":"gelu","variant":{"left_out":"universal"}}
]})");
  EXPECT_EQ(kept.title, "T");
  EXPECT_EQ(kept.base_url, "https://x/");
  EXPECT_EQ(kept.variants, true);
  EXPECT_FALSE(kept.deps_index);
  ASSERT_EQ(files.size(), 2u);
  const RecordedFile& relu = files[0];
  EXPECT_TRUE(relu.gpu && relu.hub && relu.signature);
  EXPECT_EQ(relu.e.gpu_code, (std::vector<std::string>{"sm_90", "sm_100"}));
  EXPECT_EQ(relu.e.hub_commit, "c");
  EXPECT_EQ(relu.e.size, 42u);
  EXPECT_EQ(relu.e.signature.standing, SignatureStanding::trusted);
  EXPECT_EQ(relu.e.source, (dir.path() / "files" / "relu-1-py3-none-any.whl").string());
  ASSERT_TRUE(relu.e.variant && relu.e.variant->wheel);
  EXPECT_EQ(relu.e.variant->wheel->properties.at("nvidia").at("sm_arch"), (std::vector<std::string>{"90_real"}));
  const RecordedFile& gelu = files[1];
  EXPECT_FALSE(gelu.gpu || gelu.hub || gelu.signature);  // an older kwheel's record: read from the wheel
  ASSERT_TRUE(gelu.e.variant);
  EXPECT_EQ(gelu.e.variant->left_out, "universal");
}

TEST_F(ManifestReaderTest, AFieldOfTheWrongTypeCountsAsAbsent) {
  read(R"({"format":"kwheel-index 1","title":5,"future":{"files":[{"filename":"x"}]},"files":[
{"filename":"relu-1-py3-none-any.whl","project":"relu","size":-1,"gpu_code":"sm_90","hub":["r"],"version":{"a":"b"},)"
       R"("signature":{"standing":7,"summary":["s"]},"variant":{"filename":"v.whl","size":"12"},"sha256":["x"]}, 7, "s"]})");
  EXPECT_FALSE(kept.title);
  ASSERT_EQ(files.size(), 1u);  // the object under "future" is not a file
  const RecordedFile& f = files[0];
  EXPECT_EQ(f.e.size, 0u);
  EXPECT_FALSE(f.gpu);
  EXPECT_FALSE(f.hub);
  EXPECT_TRUE(f.signature);
  EXPECT_EQ(f.e.signature.standing, SignatureStanding::none);
  EXPECT_EQ(f.e.signature.summary, "");
  EXPECT_EQ(f.e.version, "");
  EXPECT_EQ(f.e.sha256, "");
  EXPECT_FALSE(f.e.variant);  // not what kwheel writes: derived again
}

TEST_F(ManifestReaderTest, AFileWithoutAUsableNameIsRefused) {
  for (const char* file : {R"({"filename":5,"project":"relu"})", R"({"filename":"../x.whl","project":"relu"})", R"({"filename":"..","project":"relu"})",
                           R"({"filename":"relu-1-py3-none-any.whl\u0000.metadata","project":"relu"})",
                           R"({"filename":"relu-1-py3-none-any.whl"})", R"({"project":"relu"})"})
    EXPECT_NE(refusal(std::string(R"({"format":"kwheel-index 1","files":[)") + file + "]}").find("lists a malformed file entry"), std::string::npos) << file;
}

TEST_F(ManifestReaderTest, AnythingButAKwheelManifestIsRefused) {
  const std::string deep = std::string(R"({"format":"kwheel-index 1","files":[{"filename":"a.whl","project":"a","variant":{"properties":{"a":{"b":[[[[[[]]]]]]}}}}]})");
  for (const std::string& text : {std::string(R"([{"format":"kwheel-index 1","files":[]}])"), std::string(R"({"format":"kwheel-index 2","files":[]})"),
                                  std::string(R"({"files":[]})"), std::string(R"({"format":"kwheel-index 1"})"),
                                  std::string(R"({"format":"kwheel-index 1","files":{}})"), std::string(R"({"format":"kwheel-index 1","files":[]} x)"),
                                  std::string(R"({"format":"kwheel-index 1","files":[)"), std::string("\"kwheel-index 1\""), std::string(""),
                                  std::string(R"({"format":"kwheel-index 1","files":[],"x":[[[[[[[[[[]]]]]]]]]]})"), deep})
    EXPECT_NE(refusal(text).find("is not a kwheel-index 1 manifest; rebuild the site into a new directory"), std::string::npos) << text;
}

}  // namespace
}  // namespace kwheel::site
