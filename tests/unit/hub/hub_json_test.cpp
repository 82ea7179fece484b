// The Hub's JSON answers (tree entries, refs, revision info), in the shapes
// tests/hub/server.py and the real Hub send them, and the malformed shapes a
// broken server or proxy sends instead.
#include "kwheel/hub/hub_json.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/hub/http.hpp"

using namespace kwheel;
using nlohmann::json;

namespace {

const std::string kSha1 = "0123456789abcdef0123456789abcdef01234567";
const std::string kSha256 = "a3f1c2d4e5b6a7980123456789abcdef0123456789abcdef0123456789abcdef";

ErrorKind kind_of(const json& j) {
  try {
    parse_tree_entry(j, "http://hub");
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::usage;  // "did not throw"
}

}  // namespace

TEST(HubJson, TreeEntries) {
  TreeEntry dir = parse_tree_entry(json::parse(R"({"type":"directory","oid":"x","size":0,"path":"build/torch27-cxx11-cu126-x86_64-linux"})"), "h");
  EXPECT_EQ(dir.type, "directory");
  EXPECT_EQ(dir.path, "build/torch27-cxx11-cu126-x86_64-linux");

  TreeEntry plain = parse_tree_entry({{"type", "file"}, {"oid", kSha1}, {"size", 12u}, {"path", "build/v/p/__init__.py"}}, "h");
  EXPECT_EQ(plain.size, 12u);
  EXPECT_FALSE(plain.lfs_sha256);
  EXPECT_EQ(plain.etag(), kSha1);

  TreeEntry lfs = parse_tree_entry({{"type", "file"}, {"oid", kSha1}, {"size", 7u}, {"path", "build/v/p/_p.so"},
                                    {"lfs", {{"oid", "sha256:" + kSha256}, {"size", 7u}, {"pointerSize", 132}}}},
                                   "h");
  ASSERT_TRUE(lfs.lfs_sha256);
  EXPECT_EQ(*lfs.lfs_sha256, kSha256);
  EXPECT_EQ(lfs.etag(), kSha256);
}

TEST(HubJson, MalformedTreeEntriesAreNetworkErrors) {
  for (const char* text : {R"([])", R"("file")", R"({"type":"file"})", R"({"type":"link","path":"a"})",
                           R"({"type":"file","path":"a","oid":"0123","size":1})",
                           R"({"type":"file","path":"a","size":-1,"oid":"0123456789abcdef0123456789abcdef01234567"})",
                           R"({"type":"file","path":"a","size":1,"oid":"0123456789ABCDEF0123456789abcdef01234567"})",
                           R"({"type":"file","path":"a","size":1,"oid":"0123456789abcdef0123456789abcdef01234567","lfs":{"oid":"xyz"}})",
                           R"({"type":"file","path":"a","size":1,"oid":"0123456789abcdef0123456789abcdef01234567","lfs":[]})"})
    EXPECT_EQ(kind_of(json::parse(text)), ErrorKind::network) << text;
  json mismatched = {{"type", "file"}, {"oid", kSha1}, {"size", 7u}, {"path", "a"}, {"lfs", {{"oid", kSha256}, {"size", 8u}}}};
  EXPECT_EQ(kind_of(mismatched), ErrorKind::network);
}

TEST(HubJson, Refs) {
  json body = {{"branches", {{{"name", "main"}, {"ref", "refs/heads/main"}, {"targetCommit", kSha1}}}},
               {"tags", {{{"name", "v0.1.1"}, {"ref", "refs/tags/v0.1.1"}, {"targetCommit", kSha1}}}},
               {"converts", json::array()}};
  auto refs = parse_refs(body, "h");
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0].name, "main");
  EXPECT_EQ(refs[0].kind, "branch");
  EXPECT_EQ(refs[1].name, "v0.1.1");
  EXPECT_EQ(refs[1].kind, "tag");
  EXPECT_EQ(refs[1].commit, kSha1);
  EXPECT_TRUE(parse_refs(json::object(), "h").empty());
  EXPECT_TRUE(parse_refs(json::array(), "h").empty());
  EXPECT_THROW(parse_refs(json::parse(R"({"tags":[{"name":"v1"}]})"), "h"), Error);
  EXPECT_THROW(parse_refs(json::parse(R"({"branches":[7]})"), "h"), Error);
}

TEST(HubJson, RevisionSha) {
  EXPECT_EQ(revision_sha({{"id", "user/img2gray"}, {"sha", kSha1}}), kSha1);
  EXPECT_FALSE(revision_sha(json::object()));
  EXPECT_FALSE(revision_sha(json::array()));
  EXPECT_FALSE(revision_sha({{"sha", 1}}));
  EXPECT_FALSE(revision_sha({{"sha", "main"}}));
  EXPECT_TRUE(is_git_sha1(kSha1));
  EXPECT_FALSE(is_git_sha1(kSha1 + "0"));
}

// Hub answers cost memory by their shape, not their size: 66 MB of nested
// arrays on /refs took 2.47 GB of RSS. Nesting and value counts are
// bounded while parsing, before the tree is built.
TEST(HubJsonLimits, ParsesWhatTheHubSends) {
  auto j = parse_hub_json(R"({"branches":[{"name":"v1","ref":"refs/heads/v1","targetCommit":")" + kSha1 + R"("}],"tags":[]})", "http://hub/refs");
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(parse_refs(*j, "h").size(), 1u);
  EXPECT_FALSE(parse_hub_json(R"({"branches": [)", "http://hub/refs").has_value());  // cut short: the caller may retry
  std::string at_limit = "[";
  for (int i = 0; i < kMaxHubJsonDepth - 1; ++i) at_limit += "[";
  at_limit += std::string(kMaxHubJsonDepth, ']');
  EXPECT_TRUE(parse_hub_json(at_limit, "h").has_value());  // exactly the depth limit
}

TEST(HubJsonLimits, DeepNestingIsRefusedBeforeItIsBuilt) {
  for (const std::string open : {"[", "{\"a\":"}) {
    std::string deep;
    for (int i = 0; i < 1000000; ++i) deep += open;
    const std::string msg = kwheel::testing::error_of([&] { parse_hub_json(deep, "http://hub/api/kernels/o/k/refs"); }, ErrorKind::network);
    EXPECT_NE(msg.find("nests deeper than 32 levels"), std::string::npos) << msg;
    EXPECT_NE(msg.find("http://hub/api/kernels/o/k/refs"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--endpoint"), std::string::npos) << msg;
  }
}

TEST(HubJsonLimits, TooManyValuesAreRefused) {
  std::string wide = "[";
  for (size_t i = 0; i <= kMaxHubJsonValues; ++i) wide += "[],";
  wide += "0]";
  const std::string msg = kwheel::testing::error_of([&] { parse_hub_json(wide, "h"); }, ErrorKind::network);
  EXPECT_NE(msg.find("more than 200000 JSON values"), std::string::npos) << msg;
  std::string keys = "{";
  for (size_t i = 0; i <= kMaxHubJsonValues; ++i) keys += "\"k" + std::to_string(i) + "\":0,";
  keys += "\"z\":0}";
  EXPECT_THROW(parse_hub_json(keys, "h"), Error);
}

TEST(HubJsonLimits, BodyOverTheCapIsRefused) {
  const std::string big(kMaxHubJsonBody + 1, ' ');
  const std::string msg = kwheel::testing::error_of([&] { parse_hub_json(big, "h"); }, ErrorKind::network);
  EXPECT_NE(msg.find("larger than 8 MiB"), std::string::npos) << msg;
}

TEST(HubJsonLimits, IllTypedAnswersAreErrorsNotAborts) {
  // Every field read with a type check: nlohmann's type_error never escapes.
  for (const char* body : {R"({"branches":[{"name":1,"targetCommit":"x"}]})", R"({"branches":[null]})", R"({"tags":[{"name":"v1","targetCommit":[]}]})"}) {
    auto j = parse_hub_json(body, "h");
    ASSERT_TRUE(j.has_value());
    EXPECT_THROW(parse_refs(*j, "h"), Error) << body;
  }
  for (const char* body : {R"({"sha":5})", R"({"sha":null})", R"([])", R"("x")", R"({"sha":"ABCDEF"})"}) {
    auto j = parse_hub_json(body, "h");
    ASSERT_TRUE(j.has_value());
    EXPECT_EQ(revision_sha(*j), std::nullopt) << body;
  }
  for (const char* body : {R"({"type":"file","path":"a","size":"1","oid":"x"})", R"({"type":"file","path":"a","size":-1,"oid":")" "0123456789abcdef0123456789abcdef01234567" R"("})",
                           R"({"type":7,"path":"a"})", R"({"type":"file","path":"a","size":1,"oid":"0123456789abcdef0123456789abcdef01234567","lfs":{"oid":3}})"}) {
    auto j = parse_hub_json(body, "h");
    ASSERT_TRUE(j.has_value());
    EXPECT_EQ(kind_of(*j), ErrorKind::network) << body;
  }
}
