#include "kwheel/base/suggest.hpp"

#include <gtest/gtest.h>

namespace kwheel {
namespace {

const std::vector<std::string> kCommands = {"build", "variants", "validate", "inspect", "publish", "index", "pin", "verify"};

TEST(EditDistance, CountsEachKindOfEditOnce) {
  EXPECT_EQ(edit_distance("build", "build"), 0u);
  EXPECT_EQ(edit_distance("", "pin"), 3u);
  EXPECT_EQ(edit_distance("pin", ""), 3u);
  EXPECT_EQ(edit_distance("buld", "build"), 1u);     // insertion
  EXPECT_EQ(edit_distance("builds", "build"), 1u);   // deletion
  EXPECT_EQ(edit_distance("bailt", "built"), 1u);    // substitution
  EXPECT_EQ(edit_distance("biuld", "build"), 1u);    // adjacent swap: one edit, not two
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);  // the textbook pair
  // Optimal string alignment: a swapped pair is not edited again.
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);
}

TEST(EditDistance, IsSymmetric) {
  for (const auto& a : kCommands)
    for (const auto& b : kCommands) EXPECT_EQ(edit_distance(a, b), edit_distance(b, a)) << a << " " << b;
}

TEST(ClosestMatch, SuggestsTheCommandATypoMeant) {
  EXPECT_EQ(closest_match("biuld", kCommands), "build");
  EXPECT_EQ(closest_match("publsih", kCommands), "publish");
  EXPECT_EQ(closest_match("valdate", kCommands), "validate");
  EXPECT_EQ(closest_match("verfy", kCommands), "verify");
  EXPECT_EQ(closest_match("pinn", kCommands), "pin");
  EXPECT_EQ(closest_match("--outt", {"--out", "--output", "--jobs"}), "--out");
}

TEST(ClosestMatch, SuggestsNothingForAnUnrelatedWordOrAnExactOne) {
  EXPECT_EQ(closest_match("install", kCommands), std::nullopt);
  EXPECT_EQ(closest_match("x", kCommands), std::nullopt);
  EXPECT_EQ(closest_match("", kCommands), std::nullopt);
  EXPECT_EQ(closest_match("build", kCommands), std::nullopt);
  EXPECT_EQ(closest_match("biuld", {}), std::nullopt);
}

TEST(ClosestMatch, ATieGoesToTheEarlierCandidate) {
  EXPECT_EQ(closest_match("pan", {"pin", "pun"}), "pin");
  EXPECT_EQ(closest_match("pan", {"pun", "pin"}), "pun");
}

}  // namespace
}  // namespace kwheel
