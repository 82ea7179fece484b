#include "kwheel/factory/reuse_state.hpp"

#include <gtest/gtest.h>

using namespace kwheel;

namespace {

const std::string kSha(64, 'a');

}  // namespace

TEST(ReuseState, WhatKwheelWritesReadsBack) {
  const ReuseState s{"fp", "2049:7:10:1.0:1.0", kSha, 10};
  auto back = parse_reuse_state(format_reuse_state(s));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->fingerprint, "fp");
  EXPECT_EQ(back->wheel_identity, "2049:7:10:1.0:1.0");
  EXPECT_EQ(back->sha256, kSha);
  EXPECT_EQ(back->size, 10u);
  EXPECT_EQ(reuse_state_path("/o/x-1.0-py3-none-any.whl"), "/o/.kwheel/x-1.0-py3-none-any.whl.json");
}

// A build that reported no digest (no --json) records none; the wheel is
// still reusable, and the digest is taken when a later run needs it.
TEST(ReuseState, AStateWithoutADigestIsWrittenWithoutTheKeyAndReadsBack) {
  const std::string text = format_reuse_state({"fp", "i", "", 10});
  EXPECT_EQ(text.find("sha256"), std::string::npos) << text;
  auto back = parse_reuse_state(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->sha256, "");
  EXPECT_EQ(back->size, 10u);
}

TEST(ReuseState, AnythingElseIsNotReusableNotAnError) {
  const std::string ok = R"("fingerprint":"fp","wheel_identity":"i","size":1)";
  for (const std::string& text : {
           std::string(""), std::string("null"), std::string("[]"), std::string("{"),
           "{" + ok + R"(,"sha256":123})",                    // the probe's case: aborted every build
           "{" + ok + R"(,"sha256":""})",                     // absent is written without the key
           "{" + ok + R"(,"sha256":null})",
           "{" + ok + R"(,"sha256":")" + kSha.substr(1) + "\"}",  // short
           "{" + ok + R"(,"sha256":")" + std::string(64, 'A') + "\"}",  // upper case
           R"({"fingerprint":1,"wheel_identity":"i","size":1,"sha256":")" + kSha + "\"}",
           R"({"fingerprint":"fp","wheel_identity":"i","size":-1,"sha256":")" + kSha + "\"}",
           R"({"fingerprint":"fp","wheel_identity":"i","size":"1","sha256":")" + kSha + "\"}",
           R"({"fingerprint":"fp","wheel_identity":"i","sha256":")" + kSha + "\"}",
           std::string(kMaxReuseStateBytes + 1, ' ') + "{}",
       })
    EXPECT_FALSE(parse_reuse_state(text)) << text.substr(0, 120);
  std::string deep(10000, '[');
  EXPECT_FALSE(parse_reuse_state(deep + std::string(10000, ']')));
}
