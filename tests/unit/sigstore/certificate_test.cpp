// Fulcio certificates: the chain at a time, key usage, identity.
#include "kwheel/sigstore/certificate.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "kwheel/sigstore/bundle.hpp"
#include "kwheel/sigstore/sct.hpp"
#include "sigstore/sigstore_fixtures.hpp"

using namespace kwheel;
using namespace kwheel::sigstore;
using namespace kwheel::testing::sigstore_fixtures;

TEST(SigstoreCertificate, ChainHoldsOnlyInsideTheLifetime) {
  const Bundle b = parse_bundle(bundle_text("happy-path-v0.3"), "b");
  const TrustedRoot root = embedded_trusted_root(false);
  const auto chain = verify_chain_at(b.certificate.get(), root, *b.entry.integrated_time);
  EXPECT_FALSE(chain.empty());
  EXPECT_NE(kwheel::testing::error_of([&] { verify_chain_at(b.certificate.get(), root, not_after(b.certificate.get()) + 1); }).find("certificate has expired"),
            std::string::npos);
  EXPECT_NE(kwheel::testing::error_of([&] { verify_chain_at(b.certificate.get(), embedded_trusted_root(true), *b.entry.integrated_time); })
                .find("does not verify"),
            std::string::npos);
  EXPECT_NO_THROW(check_code_signing_usage(b.certificate.get()));
  EXPECT_NO_THROW(verify_embedded_sct(b.certificate.get(), chain, root, std::vector{*b.entry.integrated_time}));
}

TEST(SigstoreCertificate, SctFromAnotherLogIsRefused) {
  const Bundle b = parse_bundle(bundle_text("invalid-ct-key_fail"), "b");
  const TrustedRoot root = root_for("invalid-ct-key_fail");
  const auto chain = verify_chain_at(b.certificate.get(), root, *b.entry.integrated_time);
  EXPECT_NE(kwheel::testing::error_of([&] { verify_embedded_sct(b.certificate.get(), chain, root, std::vector{*b.entry.integrated_time}); }).find("SCT"), std::string::npos);
}

TEST(SigstoreCertificate, IdentityFromFulcioExtensions) {
  const Bundle b = parse_bundle(bundle_text("happy-path-v0.3"), "b");
  const CertificateIdentity id = certificate_identity(b.certificate.get());
  ASSERT_EQ(id.sans.size(), 1u);
  EXPECT_EQ(id.sans[0], kIdentity);
  EXPECT_EQ(id.issuer_v1, kIssuer);
  EXPECT_EQ(id.issuer_v2, kIssuer);
  EXPECT_EQ(id.issuer(), kIssuer);
  EXPECT_EQ(id.source_repository_uri, "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon");
  EXPECT_TRUE(id.build_signer_uri.has_value());
}

TEST(SigstoreCertificate, CaInTheLeafPlaceIsRefusedOnEveryPath) {
  // issue 38, defect 7: the check lives in the chain check every bundle
  // version goes through. Fulcio's own intermediate, a CA that chains to the
  // root, offered as the signing certificate:
  const TrustedRoot root = embedded_trusted_root(false);
  for (const auto& ca : root.certificate_authorities) {
    if (ca.chain.size() < 2) continue;
    X509* intermediate = ca.chain.front().get();
    const std::int64_t inside = not_before(intermediate) + 1;
    EXPECT_NE(kwheel::testing::error_of([&] { verify_chain_at(intermediate, root, inside); }).find("is a CA certificate"), std::string::npos);
  }
}
