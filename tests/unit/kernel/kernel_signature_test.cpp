// A variant's metadata.json.sigstore held to the identity policy: trusted,
// another signer (counted as unsigned), unsigned, and --require-signature.
// The bundle is a real production one (sigstore-conformance's happy path,
// signed by the suite's GitHub workflow over a.txt): a.txt plays metadata.json.
#include "kwheel/kernel/kernel_signature.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sigstore/sigstore_fixtures.hpp"

using namespace kwheel;
namespace sf = kwheel::testing::sigstore_fixtures;

namespace {

const std::string kSignedText = sf::read_text(sf::kCases / "a.txt");

SignatureOptions trusting(const std::string& identity) {
  SignatureOptions o;
  o.signers = sigstore::SignerPolicy::identity(identity, sf::kIssuer);
  return o;
}

SignatureVerdict verdict_of(const std::string& text, const std::optional<std::string>& bundle, const SignatureOptions& o) {
  return check_metadata_signature(text, bundle, o, "variant 'v': metadata.json.sigstore", sf::now());
}

}  // namespace

TEST(KernelSignature, ABundleByATrustedSignerIsTrusted) {
  const SignatureVerdict v = verdict_of(kSignedText, sf::bundle_text("happy-path-v0.3"), trusting(sf::kIdentity));
  EXPECT_EQ(v.status, SignatureVerdict::Status::trusted);
  ASSERT_TRUE(v.result);
  EXPECT_EQ(v.result->identity, sf::kIdentity);
  EXPECT_EQ(v.to_json()["signed"], true);
  EXPECT_TRUE(v.describe().starts_with("signed by " + sf::kIdentity)) << v.describe();
}

TEST(KernelSignature, AValidBundleByAnotherSignerCountsAsUnsignedAndNamesIt) {
  // kernels' own defaults trust kernels-community's workflows, not the suite's.
  const SignatureVerdict v = verdict_of(kSignedText, sf::bundle_text("happy-path-v0.3"), SignatureOptions{});
  EXPECT_EQ(v.status, SignatureVerdict::Status::untrusted_signer);
  EXPECT_FALSE(v.signed_by_trusted());
  EXPECT_EQ(v.to_json()["signed"], false);
  EXPECT_EQ(v.to_json()["signer"]["identity"], sf::kIdentity);
}

TEST(KernelSignature, NoBundleIsUnsigned) {
  const SignatureVerdict v = verdict_of(kSignedText, std::nullopt, SignatureOptions{});
  EXPECT_EQ(v.status, SignatureVerdict::Status::unsigned_);
  EXPECT_EQ(v.to_json(), (nlohmann::json{{"signed", false}, {"status", "unsigned"}}));
}

TEST(KernelSignature, RequireRefusesUnsignedAndOtherSignersNamingThem) {
  SignatureOptions o;
  o.require = true;
  for (const auto& bundle : {std::optional<std::string>(), std::optional<std::string>(sf::bundle_text("happy-path-v0.3"))}) {
    try {
      verdict_of(kSignedText, bundle, o);
      ADD_FAILURE() << "accepted";
    } catch (const sigstore::VerificationError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--require-signature"), std::string::npos) << what;
      EXPECT_NE(what.find(bundle ? sf::kIdentity : "no metadata.json.sigstore"), std::string::npos) << what;
    }
  }
  o = trusting(sf::kIdentity);
  o.require = true;
  EXPECT_EQ(verdict_of(kSignedText, sf::bundle_text("happy-path-v0.3"), o).status, SignatureVerdict::Status::trusted);
}

TEST(KernelSignature, OtherBytesThanTheSignedOnesFailWhateverThePolicy) {
  for (const SignatureOptions& o : {SignatureOptions{}, trusting(sf::kIdentity)}) {
    try {
      verdict_of(kSignedText + " ", sf::bundle_text("happy-path-v0.3"), o);
      ADD_FAILURE() << "accepted changed metadata";
    } catch (const sigstore::VerificationError& e) {
      EXPECT_EQ(e.check(), sigstore::Check::artifact_digest) << e.what();
      EXPECT_NE(std::string(e.what()).find("metadata.json.sigstore"), std::string::npos) << e.what();
    }
  }
}
