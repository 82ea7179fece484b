// What find_kernels.py answers, read (installed_kernels.hpp): which origin
// each distribution gives, and why one gives none.
#include "kwheel/link/installed_kernels.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kwheel/base/error.hpp"

using namespace kwheel;

namespace {
const std::string kCommit(40, 'c');

std::string answer(const nlohmann::json& kernels) {
  return nlohmann::json{{"python", "/env/bin/python"}, {"prefix", "/env"}, {"kernels", kernels}}.dump();
}
}  // namespace

TEST(InstalledKernels, HubKernelJsonFirstThenOlderMetadata) {
  const std::string hub = R"({"package":"img2gray","repo_id":"org/img2gray","revision":")" + kCommit + R"(","variant":"torch-cpu","version":1})";
  const std::string md = "Metadata-Version: 2.4\nName: relu\nVersion: 3.1+torch.cpu\nKeywords: hf-kernel\nProject-URL: Hub revision, "
                         "https://huggingface.co/kernels/org/relu/tree/" + kCommit + "\n\nBuild variant `torch-cpu` of the relu kernel\n";
  const auto r = parse_installed_kernels(answer({{{"name", "img2gray"}, {"version", "1.2"}, {"location", "/env/site"}, {"hub_kernel", hub}, {"metadata", ""}},
                                                 {{"name", "relu"}, {"version", "3.1+torch.cpu"}, {"location", "/env/site"}, {"hub_kernel", nullptr}, {"metadata", md}}}),
                                         "py");
  EXPECT_EQ(r.prefix, "/env");
  ASSERT_EQ(r.kernels.size(), 2u);
  ASSERT_TRUE(r.kernels[0].origin);
  EXPECT_EQ(r.kernels[0].origin_from, "hub_kernel.json");
  EXPECT_EQ(r.kernels[0].origin->package, "img2gray");
  ASSERT_TRUE(r.kernels[1].origin);
  EXPECT_EQ(r.kernels[1].origin_from, "METADATA");
  EXPECT_EQ(r.kernels[1].origin->repo_id, "org/relu");
  EXPECT_EQ(r.kernels[1].origin->version, 3u);
}

TEST(InstalledKernels, ADirectoryBuildWithoutRepoIdSaysHowToFixIt) {
  const std::string hub = R"({"package":"img2gray","repo_id":null,"revision":null,"variant":"torch-cpu","version":1})";
  const auto r = parse_installed_kernels(answer({{{"name", "img2gray"}, {"version", "1.0"}, {"location", "/s"}, {"hub_kernel", hub}}}), "py");
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_FALSE(r.kernels[0].origin);
  EXPECT_NE(r.kernels[0].why.find("--repo-id ORG/NAME"), std::string::npos);
}

TEST(InstalledKernels, ABrokenHubKernelJsonIsTheKernelsReasonNotTheRuns) {
  const auto r = parse_installed_kernels(answer({{{"name", "x"}, {"version", "1"}, {"location", "/s"}, {"hub_kernel", "{"}}}), "py");
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_FALSE(r.kernels[0].origin);
  EXPECT_NE(r.kernels[0].why.find("'x' hub_kernel.json"), std::string::npos);
}

TEST(InstalledKernels, AnAnswerThatIsNoneIsAUsageError) {
  try {
    parse_installed_kernels("Traceback", "/usr/bin/python2");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("/usr/bin/python2"), std::string::npos);
  }
}
