// RFC 8785 for the subset an inclusion promise uses.
#include "kwheel/sigstore/canonical_json.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"

using namespace kwheel;
using namespace kwheel::sigstore;

TEST(SigstoreCanonicalJson, SortedCompactEscaped) {
  const nlohmann::json j = {{"logIndex", 7}, {"body", "a\"b\\c\n\x01"}, {"integratedTime", 1689177396}, {"logID", "\xc3\xa9"}};
  EXPECT_EQ(canonical_json(j), "{\"body\":\"a\\\"b\\\\c\\n\\u0001\",\"integratedTime\":1689177396,\"logID\":\"\xc3\xa9\",\"logIndex\":7}");
}

TEST(SigstoreCanonicalJson, RefusesFloats) {
  EXPECT_NE(kwheel::testing::error_of([] { canonical_json({{"a", 1.5}}); }).find("floating-point"), std::string::npos);
}
