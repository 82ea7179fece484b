// The manifest on a real directory: each file's line is the bytes
// nlohmann's dump() makes of the same values (the form kwheel wrote before
// it wrote them by hand, so that a site's kwheel-index.json does not change
// on an upgrade), and read_site gives back every field written, files
// checked against their bytes.
#include "kwheel/index/site_manifest.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/index/site_directory.hpp"
#include "kwheel/index/site_wheels.hpp"

namespace kwheel::site {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

Entry plain(const std::string& filename, const std::string& project) {
  Entry e;
  e.filename = filename;
  e.project = project;
  e.version = "1.0+torch2.11.cu130";
  e.size = 11;
  e.requires_python = ">=3.9";
  e.gpu_code = {"sm_90", "sm_100"};
  e.signature = {"signed by \"kernels-community\" \xc3\xa9", SignatureStanding::trusted, ""};
  e.hub_repo = "kernels-community/relu";
  e.hub_commit = "0123456789abcdef0123456789abcdef01234567";
  e.hub_url = "https://huggingface.co/kernels-community/relu";
  return e;
}

// The object write_manifest wrote before, built as the json it was.
json as_nlohmann(const Entry& e) {
  json f{{"filename", e.filename},   {"project", e.project},
         {"version", e.version},     {"sha256", e.sha256},
         {"size", e.size},           {"requires_python", e.requires_python},
         {"metadata_sha256", e.metadata_sha256}, {"gpu_code", e.gpu_code},
         {"hub", {{"repo", e.hub_repo}, {"commit", e.hub_commit}, {"url", e.hub_url}}},
         {"signature", {{"summary", e.signature.summary},
                        {"standing", e.signature.standing == SignatureStanding::trusted ? "trusted" : "unsigned"},
                        {"reason", e.signature.reason}}}};
  if (e.variant && e.variant->wheel) {
    const VariantWheel& w = *e.variant->wheel;
    f["variant"] = {{"filename", w.filename}, {"index", w.index}, {"version", w.version}, {"label", w.label}, {"properties", w.properties},
                    {"evidence", w.evidence}, {"unclaimed", w.unclaimed}, {"sha256", w.sha256}, {"size", w.size},
                    {"requires_python", w.requires_python}, {"metadata_sha256", w.metadata_sha256}};
  } else if (e.variant) {
    f["variant"] = {{"left_out", e.variant->left_out}};
  }
  return f;
}

class SiteManifestTest : public ::testing::Test {
 protected:
  TempDir dir{"site-manifest-test"};
  fs::path site = dir.path() / "site";
  std::map<std::string, Entry> entries;
  KeptSettings kept;

  void add(Entry e, const std::string& bytes) {
    write_text(site / "files" / e.filename, bytes);
    write_text(site / "files" / (e.filename + ".metadata"), "Metadata-Version: 2.1\n");
    e.sha256 = sha256_hex(bytes);
    e.size = bytes.size();
    e.metadata_sha256 = sha256_hex("Metadata-Version: 2.1\n");
    entries.emplace(e.filename, std::move(e));
  }

  void SetUp() override {
    add(plain("relu-1.0+torch2.11.cu130-cp39-abi3-manylinux_2_28_x86_64.whl", "relu"), "relu wheel\n");
    Entry variant = plain("gelu-1.0+torch2.11.cu130-cp39-abi3-manylinux_2_28_x86_64.whl", "gelu");
    variant.signature = {"unsigned", SignatureStanding::unsigned_, "it has no metadata.json.sigstore\n\"tab\"\t"};
    VariantWheel w;
    w.filename = "gelu-1.0+torch2.11-cp39-abi3-manylinux_2_28_x86_64-cu130_sm90.whl";
    w.index = "variants/torch2.11";
    w.version = "1.0+torch2.11";
    w.label = "cu130_sm90";
    w.properties = {{"nvidia", {{"cuda_version_lower_bound", {"13.0"}}, {"sm_arch", {"90_real", "100_real"}}}}, {"abi", {{"cxx11", {"1"}}}}};
    w.evidence = {"libcudart.so.13"};
    w.sha256 = std::string(64, 'a');
    w.size = 4096;
    w.requires_python = ">=3.9";
    w.metadata_sha256 = std::string(64, 'b');
    variant.variant = std::make_shared<const RecordedVariant>(RecordedVariant{w, ""});
    add(std::move(variant), "gelu wheel\n");
    Entry left = plain("silu-1.0+torch.cpu-py3-none-any.whl", "silu");
    left.gpu_code.clear();
    left.hub_repo = left.hub_commit = left.hub_url = "";
    left.variant = std::make_shared<const RecordedVariant>(RecordedVariant{std::nullopt, "it is a universal build"});
    add(std::move(left), "silu wheel\n");
    kept.title = "Kernels";
    kept.signature_policy = signature_policy(SignatureOptions{});
  }
};

TEST_F(SiteManifestTest, EachFileIsTheLineNlohmannWouldHaveWritten) {
  write_manifest(site, entries, kept);
  const std::vector<std::string> lines = lines_of(site / "kwheel-index.json");
  ASSERT_EQ(lines.size(), 2 + entries.size() + 1);  // head, "files": [, one a line, ]}
  size_t i = 2;
  for (const auto& [name, e] : entries) {
    std::string line = lines[i++];
    if (line.ends_with(",")) line.pop_back();
    EXPECT_EQ(line, as_nlohmann(e).dump()) << name;
  }
  EXPECT_EQ(lines.back(), "]}");
  const json whole = json::parse(std::ifstream(site / "kwheel-index.json"));
  EXPECT_EQ(whole["files"].size(), entries.size());
  EXPECT_EQ(whole["title"], "Kernels");
}

TEST_F(SiteManifestTest, ReadSiteGivesBackEveryFieldWritten) {
  write_manifest(site, entries, kept);
  KeptSettings back;
  SiteOptions o;
  o.jobs = 2;
  const auto read = read_site(site, back, o);
  ASSERT_EQ(read.size(), entries.size());
  EXPECT_EQ(back.title, kept.title);
  for (const auto& [name, e] : entries) {
    const Entry& r = read.at(name);
    EXPECT_EQ(as_nlohmann(r).dump(), as_nlohmann(e).dump()) << name;
    EXPECT_FALSE(r.refreshed) << name;  // nothing was missing: the wheel was not opened
    EXPECT_EQ(r.source, (site / "files" / name).string());
  }
}

TEST_F(SiteManifestTest, AServedFileWithOtherBytesIsRefused) {
  write_manifest(site, entries, kept);
  write_text(site / "files" / "relu-1.0+torch2.11.cu130-cp39-abi3-manylinux_2_28_x86_64.whl", "other wheel\n");
  KeptSettings back;
  try {
    (void)read_site(site, back, SiteOptions{});
    FAIL() << "a changed file was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("no longer matches the sha256"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kwheel::site
