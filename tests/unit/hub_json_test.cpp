// The Hub's JSON answers (tree entries, refs, revision info), in the shapes
// tests/hub/server.py and the real Hub send them, and the malformed shapes a
// broken server or proxy sends instead.
#include "kwheel/hub_json.hpp"

#include <gtest/gtest.h>

#include "kwheel/error.hpp"

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
