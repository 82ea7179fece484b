// hub_kernel.json as kwheel writes and link reads it, and the origin older
// wheels' METADATA records (kernel_origin.hpp). Expected texts are written
// out by hand: sorted keys, one-space indent, a final newline.
#include "kwheel/wheel/kernel_origin.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kwheel/base/error.hpp"

using namespace kwheel;

namespace {
const std::string kCommit(40, 'a');
KernelOrigin sample() { return {"img2gray", "kernels-community/img2gray", kCommit, "torch-cpu", 1}; }
}  // namespace

TEST(KernelOrigin, TheFileIsSortedAndTheSameEveryTime) {
  EXPECT_EQ(render_hub_kernel_json(sample()),
            "{\n \"package\": \"img2gray\",\n \"repo_id\": \"kernels-community/img2gray\",\n \"revision\": \"" + kCommit +
                "\",\n \"variant\": \"torch-cpu\",\n \"version\": 1\n}\n");
  KernelOrigin dir = sample();
  dir.repo_id.clear();
  dir.revision.clear();
  EXPECT_NE(render_hub_kernel_json(dir).find("\"repo_id\": null"), std::string::npos);
}

TEST(KernelOrigin, ReadsBackWhatItWrites) {
  const KernelOrigin o = parse_hub_kernel_json(render_hub_kernel_json(sample()), "x");
  EXPECT_EQ(o.package, "img2gray");
  EXPECT_EQ(o.repo_id, "kernels-community/img2gray");
  EXPECT_EQ(o.revision, kCommit);
  EXPECT_EQ(o.variant, "torch-cpu");
  EXPECT_EQ(o.version, 1u);
  const KernelOrigin d = parse_hub_kernel_json(R"({"package":"p","repo_id":null,"revision":null,"variant":"torch-cpu","version":2})", "x");
  EXPECT_TRUE(d.repo_id.empty());
  EXPECT_TRUE(d.revision.empty());
}

TEST(KernelOrigin, RefusesWhatCouldEscapeTheCacheOrNameNothing) {
  const std::string ok_rest = R"("revision":null,"variant":"torch-cpu","version":1})";
  for (const std::string& bad : std::vector<std::string>{"[]", "{}",
                                R"({"package":"../x","repo_id":"a/b",)" + ok_rest,
                                R"({"package":"p","repo_id":"a/../b",)" + ok_rest,
                                R"({"package":"p","repo_id":"a/b","revision":"main","variant":"torch-cpu","version":1})",
                                R"({"package":"p","repo_id":"a/b","revision":null,"variant":"../../x","version":1})",
                                R"({"package":"p","repo_id":"a/b","revision":null,"variant":"torch-cpu","version":-1})",
                                R"({"package":"p","repo_id":"a/b","revision":null,"variant":"torch-cpu","version":"1"})"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_hub_kernel_json(bad, "where"), Error);
  }
}

TEST(KernelOrigin, OlderWheelsTellItInTheirMetadata) {
  const std::string md = "Metadata-Version: 2.4\nName: img2gray\nVersion: 2.5+torch.cpu\nKeywords: hf-kernel\n"
                         "Project-URL: Hub revision, https://huggingface.co/kernels/org/img2gray/tree/" + kCommit +
                         "\n\nBuild variant `torch-cpu` of the img2gray kernel, packaged as a wheel by kwheel.\n";
  const auto o = origin_from_metadata(parse_metadata_fields(md));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->repo_id, "org/img2gray");
  EXPECT_EQ(o->revision, kCommit);
  EXPECT_EQ(o->variant, "torch-cpu");
  EXPECT_EQ(o->version, 2u);
  EXPECT_TRUE(o->package.empty());
  // A directory build recorded no revision: nothing names its repo.
  EXPECT_FALSE(origin_from_metadata(parse_metadata_fields("Metadata-Version: 2.4\nName: x\nVersion: 1.0\nKeywords: hf-kernel\n\nBuild variant `torch-cpu` of\n")));
}
