// Requires-Dist as pip reads it: the corpus test holds kwheel's PEP 508
// parser to what pip's vendored packaging made of 489 values
// (tests/data/requirements/corpus.json, by scripts/update-requirement-corpus).
#include "kwheel/packaging/requirement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"

namespace kwheel {
namespace {

using testing::error_of;

// Where kwheel refuses what packaging accepts, on purpose; nothing else.
std::string deliberate_refusal(const nlohmann::json& c) {
  if (c["url"].get<bool>()) return "direct URL";
  for (const auto& s : c["specifiers"])
    if (s.get<std::string>().starts_with("===")) return "arbitrary equality";
  const std::string name = c["name"];
  if (name.ends_with("_")) return "name ending in '_' (PEP 508 forbids it; its PEP 503 form would not parse)";
  return "";
}

TEST(RequirementCorpus, AcceptsWhatPipAcceptsAndFindsTheSameParts) {
  const auto corpus = nlohmann::json::parse(
      read_small_file(std::filesystem::path(KWHEEL_TEST_DATA) / "requirements" / "corpus.json", 16 << 20, "requirement corpus"));
  ASSERT_GE(corpus["cases"].size(), 400u);
  size_t accepted = 0, deliberate = 0;
  for (const auto& c : corpus["cases"]) {
    const std::string text = c["text"];
    SCOPED_TRACE(text);
    if (c["packaging"] == "refuses") {
      EXPECT_THROW(parse_requirement(text), Error) << "packaging: " << c["why"];
      continue;
    }
    if (const std::string why = deliberate_refusal(c); !why.empty()) {
      ++deliberate;
      EXPECT_THROW(parse_requirement(text), Error) << why;
      continue;
    }
    Requirement r;
    ASSERT_NO_THROW(r = parse_requirement(text));
    ++accepted;
    EXPECT_EQ(r.name, c["name"]);
    std::vector<std::string> extras = r.extras, specs = r.specifiers;
    std::sort(extras.begin(), extras.end());
    extras.erase(std::unique(extras.begin(), extras.end()), extras.end());
    std::sort(specs.begin(), specs.end());
    EXPECT_EQ(extras, c["extras"].get<std::vector<std::string>>());
    EXPECT_EQ(specs, c["specifiers"].get<std::vector<std::string>>());
    EXPECT_EQ(!r.marker.empty(), c["marker"].get<bool>());
    // What pip is handed parses again to the same requirement.
    const Requirement again = parse_requirement(r.for_pip());
    EXPECT_EQ(again.for_pip(), r.for_pip());
  }
  EXPECT_GT(accepted, 100u);
  EXPECT_GT(deliberate, 5u);
}

TEST(Requirement, PipOptionsAreNotRequirements) {
  for (const char* option : {"--find-links=http://127.0.0.1:9/", "--log=/tmp/x", "-r other.txt", "-e .", "--index-url http://h/"})
    EXPECT_NE(error_of([&] { parse_requirement(option); }).find("a requirement starts with a project name"), std::string::npos) << option;
}

TEST(Requirement, RefusalsSayWhyWithoutQuotingTheValue) {
  const std::string url = error_of([] { parse_requirement("evil @ https://evil.example/evil.whl"); });
  EXPECT_NE(url.find("a direct URL (name @ URL)"), std::string::npos) << url;
  EXPECT_EQ(url.find("evil.example"), std::string::npos) << url;
  EXPECT_NE(error_of([] { parse_requirement("evil===x.whl"); }).find("'==='"), std::string::npos);
  EXPECT_NE(error_of([] { parse_requirement("einops\x1b[2J"); }).find("control character"), std::string::npos);
  EXPECT_NE(error_of([] { parse_requirement(std::string(5000, 'a')); }).find("over the 4096-byte limit"), std::string::npos);
}

TEST(Requirement, ForPipIsNeverAFileNameOrAnOption) {
  // pip takes "x.whl", or anything ending in an archive's extension before
  // the ';', for a file to install.
  EXPECT_EQ(parse_requirement("x.whl").for_pip(), "x-whl");
  EXPECT_EQ(parse_requirement("foo==1.0+local.zip").for_pip(), "foo (==1.0+local.zip)");
  EXPECT_EQ(parse_requirement("Foo.Bar [x,y] >= 1.0 , < 2 ; python_version >= '3.9'").for_pip(), "foo-bar[x,y] (>=1.0,<2) ; python_version >= '3.9'");
  EXPECT_EQ(parse_requirement("  einops  ").for_pip(), "einops");
}

}  // namespace
}  // namespace kwheel
