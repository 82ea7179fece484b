// RFC 3161 timestamps against the TSAs of the suite's staging root.
#include "kwheel/sigstore/timestamp.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "sigstore/sigstore_fixtures.hpp"

using namespace kwheel;
using namespace kwheel::sigstore;
using namespace kwheel::testing::sigstore_fixtures;

namespace {

struct TimestampCase {
  std::vector<Bytes> responses;
  Bytes signature;
};

TimestampCase timestamp_case(const std::string& name) {
  const auto b = bundle_json(name);
  TimestampCase c;
  for (const auto& t : b["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"])
    c.responses.push_back(decode_base64(t["signedTimestamp"].get<std::string>(), "ts"));
  c.signature = decode_base64(b["messageSignature"]["signature"].get<std::string>(), "sig");
  return c;
}

}  // namespace

TEST(SigstoreTimestamp, VerifiesWithAndWithoutEmbeddedCertificate) {
  for (const char* name : {"rekor2-happy-path", "rekor2-timestamp-with-embedded-cert", "rekor2-timestamp-without-embedded-cert",
                           "rekor2-timestamp-with-expired-cert-chain", "trust-root-tsa-validity-end-inclusive"}) {
    const TimestampCase c = timestamp_case(name);
    EXPECT_EQ(verify_timestamps(c.responses, c.signature, root_for(name), now()).size(), 1u) << name;
  }
}

TEST(SigstoreTimestamp, OtherMessageOrTsaVerifiesNothing) {
  TimestampCase c = timestamp_case("rekor2-happy-path");
  Bytes other = c.signature;
  other[5] ^= 1;
  EXPECT_TRUE(verify_timestamps(c.responses, other, root_for("rekor2-happy-path"), now()).empty());
  const TimestampCase untrusted = timestamp_case("rekor2-timestamp-untrusted-tsa-with-embedded-cert_fail");
  EXPECT_TRUE(verify_timestamps(untrusted.responses, untrusted.signature, root_for("rekor2-timestamp-untrusted-tsa-with-embedded-cert_fail"), now()).empty());
  const TimestampCase outside = timestamp_case("rekor2-timestamp-outside-trust-root-tsa-validity_fail");
  EXPECT_TRUE(verify_timestamps(outside.responses, outside.signature, root_for("rekor2-timestamp-outside-trust-root-tsa-validity_fail"), now()).empty());
}

TEST(SigstoreTimestamp, CountDuplicatesAndJunk) {
  TimestampCase c = timestamp_case("rekor2-happy-path");
  const TrustedRoot root = root_for("rekor2-happy-path");
  auto twice = c.responses;
  twice.push_back(twice[0]);
  EXPECT_NE(kwheel::testing::error_of([&] { verify_timestamps(twice, c.signature, root, now()); }).find("twice"), std::string::npos);
  std::vector<Bytes> many;
  for (int i = 0; i < 33; ++i) many.push_back(Bytes{static_cast<unsigned char>(i)});
  EXPECT_NE(kwheel::testing::error_of([&] { verify_timestamps(many, c.signature, root, now()); }).find("more than 32"), std::string::npos);
  EXPECT_NE(kwheel::testing::error_of([&] { verify_timestamps({Bytes{1, 2, 3}}, c.signature, root, now()); }).find("not a DER"), std::string::npos);
  EXPECT_EQ(format_rfc3339(timestamp_gen_time(c.responses[0])), "2025-06-12T12:02:20Z");
}
