// Trusted roots: the embedded ones, closed validity intervals, malformed
// roots.
#include "kwheel/sigstore/trusted_root.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "sigstore/sigstore_fixtures.hpp"

using namespace kwheel;
using namespace kwheel::sigstore;
using namespace kwheel::testing::sigstore_fixtures;

TEST(SigstoreTrustedRoot, EmbeddedRootsParse) {
  for (bool staging : {false, true}) {
    const TrustedRoot r = embedded_trusted_root(staging);
    EXPECT_FALSE(r.tlogs.empty());
    EXPECT_FALSE(r.ctlogs.empty());
    EXPECT_FALSE(r.certificate_authorities.empty());
    for (const auto& k : r.tlogs) EXPECT_EQ(k.key_id.size(), 32u);
  }
}

TEST(SigstoreTrustedRoot, ValidityIsClosed) {
  const TimeRange r{100, 200};
  EXPECT_TRUE(r.contains(100));
  EXPECT_TRUE(r.contains(200));
  EXPECT_FALSE(r.contains(99));
  EXPECT_FALSE(r.contains(201));
  EXPECT_TRUE((TimeRange{100, std::nullopt}.contains(1LL << 40)));
}

TEST(SigstoreTrustedRoot, MissingStartIsMalformed) {
  const std::string text = read_text(kCases / "trust-root-tlog-missing-validity-start_fail" / "trusted_root.json");
  EXPECT_NE(kwheel::testing::error_of([&] { parse_trusted_root(text, "root"); }).find("validFor has no start"), std::string::npos);
}

TEST(SigstoreTrustedRoot, WrongMediaTypeAndJunk) {
  auto j = nlohmann::json::parse(read_text(kCases / "rekor2-happy-path" / "trusted_root.json"));
  j["mediaType"] = "application/vnd.dev.sigstore.trustedroot+json;version=0.2";
  EXPECT_NE(kwheel::testing::error_of([&] { parse_trusted_root(j.dump(), "root"); }).find("unsupported mediaType"), std::string::npos);
  EXPECT_NE(kwheel::testing::error_of([] { parse_trusted_root("[]", "root"); }).find("not a JSON object"), std::string::npos);
}

TEST(SigstoreTrustedRoot, LogKeysByKeyIdOrAll) {
  const TrustedRoot r = embedded_trusted_root(false);
  const Bytes data{'x'};
  const Bytes junk(70, 0x30);
  EXPECT_FALSE(verify_with_log_keys(r.tlogs, r.tlogs[0].key_id, junk, data, {}));
  EXPECT_FALSE(verify_with_log_keys(r.tlogs, Bytes(32, 0), junk, data, {}));
}
