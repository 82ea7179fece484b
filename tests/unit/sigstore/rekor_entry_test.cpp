// Rekor entries: the SET's payload, the whole entry check, the logged body.
#include "kwheel/sigstore/rekor_entry.hpp"

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
    EXPECT_NO_THROW(verify_log_entry(b.entry, root_for(name), {1749729740})) << name;
    EXPECT_NO_THROW(verify_entry_body(b.entry, b.certificate.get(), b.message_signature->signature, artifact_digest())) << name;
  }
}

TEST(SigstoreRekorEntry, LogKeyOutsideItsValidityIsNotUsed) {
  Bundle b = parse_bundle(bundle_text("trust-root-tlog-validity-end-inclusive"), "b");
  *b.entry.integrated_time += 1;  // one second past the key's validFor.end
  EXPECT_NE(kwheel::testing::error_of([&] { verify_log_entry(b.entry, root_for("trust-root-tlog-validity-end-inclusive"), {}); }).find("checkpoint"),
            std::string::npos);
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
