// Rekor entries: the SET's payload, the whole entry check, the logged body.
#include "kwheel/sigstore/rekor_entry.hpp"

#include "kwheel/sigstore/timestamp.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "sigstore/sigstore_fixtures.hpp"

using namespace kwheel;
using namespace kwheel::sigstore;
using namespace kwheel::testing::sigstore_fixtures;

TEST(SigstoreRekorEntry, PromisePayloadIsCanonical) {
  const Bundle b = parse_bundle(bundle_text("happy-path-v0.3"), "b");
  const std::string p = inclusion_promise_payload(b.entry);
  EXPECT_TRUE(p.starts_with("{\"body\":\"eyJhcGlWZXJzaW9uIjoiMC4wLjEi")) << p;
  EXPECT_NE(p.find("\",\"integratedTime\":1710869186,\"logID\":\"c0d23d6ad406973f9559f3ba2d1ca01f84147d8ffc5b8445c224f98b9591801d\",\"logIndex\":79571823}"),
            std::string::npos)
      << p;
}

TEST(SigstoreRekorEntry, V1AndV2EntriesVerify) {
  for (const char* name : {"happy-path-v0.1", "happy-path-v0.3", "rekor2-happy-path", "trust-root-tlog-validity-end-inclusive"}) {
    const Bundle b = parse_bundle(bundle_text(name), name);
    // The time the verifier would establish: the integrated time under the SET, else the TSA's.
    const std::int64_t signed_at = b.entry.integrated_time.value_or(1749729740);
    EXPECT_NO_THROW(verify_log_entry(b.entry, root_for(name), {signed_at})) << name;
    EXPECT_NO_THROW(verify_entry_body(b.entry, b.certificate.get(), b.message_signature->signature, artifact_digest())) << name;
  }
}

TEST(SigstoreRekorEntry, LogKeyOutsideItsValidityIsNotUsed) {
  const Bundle b = parse_bundle(bundle_text("trust-root-tlog-validity-end-inclusive"), "b");
  const TrustedRoot root = root_for("trust-root-tlog-validity-end-inclusive");
  EXPECT_NO_THROW(verify_log_entry(b.entry, root, {*b.entry.integrated_time}));  // exactly the key's validFor.end
  // One second past it, established by a signed source: no key may vouch.
  EXPECT_NE(kwheel::testing::error_of([&] { verify_log_entry(b.entry, root, {*b.entry.integrated_time + 1}); }).find("checkpoint"),
            std::string::npos);
}

TEST(SigstoreRekorEntry, UnsignedIntegratedTimeChoosesNoKey) {
  // issue 38, defect 9: a Rekor v2 entry has no SET, so an integratedTime
  // in it is the bundle's word only. Moved anywhere, it changes nothing:
  // the key is held to the established (TSA) time.
  Bundle b = parse_bundle(bundle_text("rekor2-happy-path"), "b");
  const TrustedRoot root = root_for("rekor2-happy-path");
  const std::int64_t tsa_time = timestamp_gen_time(b.timestamps.at(0));
  for (std::int64_t moved : {std::int64_t{1}, tsa_time, std::int64_t{4102444800}}) {
    b.entry.integrated_time = moved;
    EXPECT_NO_THROW(verify_log_entry(b.entry, root, {tsa_time})) << moved;
  }
  // And a TSA time outside the v2 log key's validFor is refused whatever the entry says.
  b.entry.integrated_time = tsa_time;
  EXPECT_NE(kwheel::testing::error_of([&] { verify_log_entry(b.entry, root, {1}); }).find("checkpoint"), std::string::npos);
}

TEST(SigstoreRekorEntry, BodyOfOtherMaterialIsRefused) {
  const Bundle b = parse_bundle(bundle_text("happy-path-v0.3"), "b");
  Bytes digest = artifact_digest();
  digest[0] ^= 1;
  EXPECT_NE(kwheel::testing::error_of([&] { verify_entry_body(b.entry, b.certificate.get(), b.message_signature->signature, digest); }).find("body"),
            std::string::npos);
  Bytes sig = b.message_signature->signature;
  sig[8] ^= 1;
  EXPECT_NE(kwheel::testing::error_of([&] { verify_entry_body(b.entry, b.certificate.get(), sig, artifact_digest()); }).find("body"), std::string::npos);
}
