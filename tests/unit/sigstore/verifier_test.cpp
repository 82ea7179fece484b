// The verifier end to end on the conformance suite's bundles, and on
// mutations of them: each must be refused by the named check.
#include "kwheel/sigstore/verifier.hpp"

#include <gtest/gtest.h>

#include "kwheel/base/digest.hpp"
#include "sigstore/sigstore_fixtures.hpp"

using namespace kwheel;
using namespace kwheel::sigstore;
using namespace kwheel::testing::sigstore_fixtures;
using nlohmann::json;

namespace {

json& verifier_entry(json& b) { return b["verificationMaterial"]["tlogEntries"][0]; }

std::optional<Check> verifier_refusal(const std::string& name, const json& b) { return refused_by(name, b.dump()); }

}  // namespace

TEST(SigstoreVerifier, HappyPathsOfEveryBundleVersion) {
  for (const char* name : {"happy-path-v0.1", "happy-path-v0.2", "happy-path-v0.3", "happy-path-v0.3-new-mediaType"}) {
    SCOPED_TRACE(name);
    const VerificationResult r = verify_as(name, bundle_text(name));
    EXPECT_EQ(r.identity, kIdentity);
    EXPECT_EQ(r.issuer, kIssuer);
    EXPECT_TRUE(r.integrated_time.has_value());
    EXPECT_EQ(r.log_entry_kind, "hashedrekord 0.0.1");
  }
  const VerificationResult r = verify_as("happy-path-v0.3", bundle_text("happy-path-v0.3"));
  EXPECT_EQ(r.log_index, 79571823u);
  EXPECT_EQ(r.established_time, 1710869186);
}

TEST(SigstoreVerifier, RekorV2WithTimestamp) {
  const VerificationResult r = verify_as("rekor2-happy-path", bundle_text("rekor2-happy-path"));
  EXPECT_EQ(r.log_entry_kind, "hashedrekord 0.0.2");
  EXPECT_FALSE(r.integrated_time.has_value());
  ASSERT_EQ(r.timestamps.size(), 1u);
  EXPECT_EQ(format_rfc3339(r.timestamps[0]), "2025-06-12T12:02:20Z");
}

TEST(SigstoreVerifier, MessageNamesTheCheckAndTheBundle) {
  json b = bundle_json("happy-path-v0.3");
  b["messageSignature"]["signature"] = flip_b64(b["messageSignature"]["signature"], 10);
  std::string message;
  EXPECT_EQ(refused_by("happy-path-v0.3", b.dump(), &message), Check::signature);
  EXPECT_TRUE(message.starts_with("signature: bundle.sigstore.json: ")) << message;
}

TEST(SigstoreVerifier, FlippedSignatureIsRefusedBySignature) {
  json b = bundle_json("happy-path-v0.2");
  b["messageSignature"]["signature"] = flip_b64(b["messageSignature"]["signature"], 20);
  EXPECT_EQ(verifier_refusal("happy-path-v0.2", b), Check::signature);
}

TEST(SigstoreVerifier, FlippedProofHashIsRefusedByLogEntry) {
  json b = bundle_json("happy-path-v0.3");
  auto& hashes = verifier_entry(b)["inclusionProof"]["hashes"];
  hashes[3] = flip_b64(hashes[3]);
  EXPECT_EQ(verifier_refusal("happy-path-v0.3", b), Check::log_entry);
}

TEST(SigstoreVerifier, FlippedCheckpointIsRefusedByLogEntry) {
  json b = bundle_json("happy-path-v0.3");
  std::string cp = verifier_entry(b)["inclusionProof"]["checkpoint"]["envelope"];
  cp[cp.find('\n') + 1] ^= 0x01;  // the tree size, which the signature covers
  verifier_entry(b)["inclusionProof"]["checkpoint"]["envelope"] = cp;
  EXPECT_EQ(verifier_refusal("happy-path-v0.3", b), Check::log_entry);
}

TEST(SigstoreVerifier, FlippedSetIsRefusedByLogEntry) {
  json b = bundle_json("happy-path-v0.3");
  auto& set = verifier_entry(b)["inclusionPromise"]["signedEntryTimestamp"];
  set = flip_b64(set, 12);
  EXPECT_EQ(verifier_refusal("happy-path-v0.3", b), Check::log_entry);
}

TEST(SigstoreVerifier, ShiftedIntegratedTimeIsRefusedByLogEntry) {
  json b = bundle_json("happy-path-v0.3");
  verifier_entry(b)["integratedTime"] = std::to_string(std::stoll(verifier_entry(b)["integratedTime"].get<std::string>()) + 1);
  EXPECT_EQ(verifier_refusal("happy-path-v0.3", b), Check::log_entry);
}

TEST(SigstoreVerifier, FlippedBodyIsRefusedByLogEntry) {
  json b = bundle_json("happy-path-v0.3");
  auto& body = verifier_entry(b)["canonicalizedBody"];
  body = flip_b64(body, 40);
  EXPECT_EQ(verifier_refusal("happy-path-v0.3", b), Check::log_entry);
}

TEST(SigstoreVerifier, UnknownMediaTypeIsRefusedByBundle) {
  json b = bundle_json("happy-path-v0.3");
  b["mediaType"] = "application/vnd.dev.sigstore.bundle+json;version=0.4";
  EXPECT_EQ(verifier_refusal("happy-path-v0.3", b), Check::bundle);
}

TEST(SigstoreVerifier, WrongIdentityOrIssuerIsRefusedByIdentity) {
  const std::string text = bundle_text("happy-path-v0.3");
  for (const SignerPolicy& p : {SignerPolicy::identity("https://example.com/other", kIssuer), SignerPolicy::identity(kIdentity, "https://accounts.google.com")}) {
    try {
      verify_bundle_text(text, artifact_digest(), &p, root_for("happy-path-v0.3"), "b", now());
      ADD_FAILURE() << "verified with " << p.describe();
    } catch (const VerificationError& e) {
      EXPECT_EQ(e.check(), Check::identity) << e.what();
      EXPECT_EQ(e.kind(), ErrorKind::input);
    }
  }
}

TEST(SigstoreVerifier, OtherArtifactIsRefusedByDigest) {
  try {
    const SignerPolicy expected = SignerPolicy::identity(kIdentity, kIssuer);
    verify_bundle_text(bundle_text("happy-path-v0.3"), sha256(std::string_view("not a.txt")), &expected,
                       root_for("happy-path-v0.3"), "b", now());
    ADD_FAILURE() << "verified another artifact";
  } catch (const VerificationError& e) {
    EXPECT_EQ(e.check(), Check::artifact_digest) << e.what();
  }
}

TEST(SigstoreVerifier, ConformanceFailuresNameTheirCheck) {
  const std::pair<const char*, Check> cases[] = {
      {"bundle-from-wrong-instance_fail", Check::certificate_chain},
      {"invalid-ct-key_fail", Check::sct},
      {"set-invalid-signature_fail", Check::log_entry},
      {"checkpoint-wrong-roothash_fail", Check::log_entry},
      {"signature-mismatch_fail", Check::signature},
      {"wrong-hashedrekord-entry_fail", Check::log_body},
      {"rekor2-timestamp-payload-mismatch_fail", Check::established_time},
      {"rekor2-timestamp-with-incorrect-time_fail", Check::certificate_chain},
      {"bundle-with-root-cert_fail", Check::bundle},
  };
  for (const auto& [name, check] : cases) {
    SCOPED_TRACE(name);
    std::string message;
    EXPECT_EQ(refused_by(name, bundle_text(name), &message), check) << message;
  }
}

TEST(SigstoreVerifier, DsseIsUnsupportedNotForged) {
  try {
    verify_as("happy-path-intoto-in-dsse-v3", bundle_text("happy-path-intoto-in-dsse-v3"));
    ADD_FAILURE() << "a DSSE bundle verified";
  } catch (const VerificationError& e) {
    EXPECT_EQ(e.check(), Check::bundle);
    EXPECT_EQ(e.reason(), Reason::unsupported_bundle);
  }
}

// Issue 38, defects 6-9: what the trusted root says of when each authority
// may vouch, and which times decide it. Real bundles of the suite, against
// their own trusted root with one window or one certificate changed.
namespace {

json case_root(const std::string& name) { return json::parse(read_text(kCases / name / "trusted_root.json")); }

std::optional<Check> refused_under(const std::string& name, const std::string& bundle, const json& root, std::string* message = nullptr) {
  const SignerPolicy expected = SignerPolicy::identity(kIdentity, kIssuer);
  try {
    verify_bundle_text(bundle, artifact_digest(), &expected, parse_trusted_root(root.dump(), "root"), "b", now());
  } catch (const VerificationError& e) {
    if (message) *message = e.what();
    return e.check();
  }
  return std::nullopt;
}

}  // namespace

TEST(SigstoreVerifier, TimestampByAnotherCertificateUnderTheTsaRootIsNotCounted) {
  // The token is signed by the TSA's leaf and embeds it; the root now lists
  // the TSA's root certificate as the signing certificate. The leaf still
  // chains to that root, but it is not the certificate the root names.
  const std::string name = "rekor2-timestamp-with-embedded-cert";
  json root = case_root(name);
  ASSERT_EQ(refused_under(name, bundle_text(name), root), std::nullopt);
  auto& chain = root["timestampAuthorities"][0]["certChain"]["certificates"];
  chain[0] = chain[1];
  std::string message;
  EXPECT_EQ(refused_under(name, bundle_text(name), root, &message), Check::established_time) << message;
}

TEST(SigstoreVerifier, FulcioCaOutsideItsValidityAnchorsNothing) {
  const std::string name = "rekor2-happy-path";
  json root = case_root(name);
  root["certificateAuthorities"][0]["validFor"]["end"] = "2025-01-01T00:00:00Z";  // before the 2025-06-12 signing
  std::string message;
  EXPECT_EQ(refused_under(name, bundle_text(name), root, &message), Check::certificate_chain) << message;
  EXPECT_NE(message.find("no certificate authority of the trusted root is valid at 2025-06-12T12:02:20Z"), std::string::npos) << message;
  root["certificateAuthorities"][0]["validFor"] = {{"start", "2025-06-13T00:00:00Z"}};  // started after it
  EXPECT_EQ(refused_under(name, bundle_text(name), root, &message), Check::certificate_chain) << message;
  root["certificateAuthorities"][0]["validFor"] = {{"start", "2025-06-12T12:02:20Z"}, {"end", "2025-06-12T12:02:20Z"}};  // closed interval
  EXPECT_EQ(refused_under(name, bundle_text(name), root), std::nullopt);
}

TEST(SigstoreVerifier, CtLogKeyOutsideItsValidityIsNotUsed) {
  const std::string name = "rekor2-happy-path";
  json root = case_root(name);
  for (auto& log : root["ctlogs"]) log["publicKey"]["validFor"]["end"] = "2025-01-01T00:00:00Z";
  std::string message;
  EXPECT_EQ(refused_under(name, bundle_text(name), root, &message), Check::sct) << message;
}

TEST(SigstoreVerifier, RekorV2IntegratedTimeIsNotSignedSoNotUsed) {
  // No SET covers a Rekor v2 entry: an integratedTime written into it,
  // before the log key's validFor or after, neither refuses the bundle nor
  // is reported as the time it was logged.
  for (const char* moved : {"1", "1749729740", "4102444800"}) {
    SCOPED_TRACE(moved);
    json b = bundle_json("rekor2-happy-path");
    verifier_entry(b)["integratedTime"] = moved;
    const VerificationResult r = verify_as("rekor2-happy-path", b.dump());
    EXPECT_FALSE(r.integrated_time.has_value());
    EXPECT_EQ(format_rfc3339(r.established_time), "2025-06-12T12:02:20Z");
  }
}

TEST(SigstoreVerifier, ReportedLogIndexIsTheSignedOne) {
  // Without a SET the entry's logIndex is signed by nothing; the index
  // reported is the one the inclusion proof proves.
  json b = bundle_json("rekor2-happy-path");
  const std::uint64_t proven = std::stoull(verifier_entry(b)["inclusionProof"]["logIndex"].get<std::string>());
  verifier_entry(b)["logIndex"] = std::to_string(proven + 1000);
  EXPECT_EQ(verify_as("rekor2-happy-path", b.dump()).log_index, proven);
}
