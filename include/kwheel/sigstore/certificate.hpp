#pragma once
// Fulcio signing certificates: the chain to a trusted Fulcio CA at a given
// time, the key usages a code-signing certificate must carry, and the
// identity Fulcio wrote into it (the SAN and Fulcio's own extensions,
// OIDs 1.3.6.1.4.1.57264.1.*).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/sigstore/openssl_handles.hpp"
#include "kwheel/sigstore/trusted_root.hpp"

namespace kwheel::sigstore {

// The chain from `leaf` to one of the root's Fulcio certificates, valid at
// `time` (seconds since the epoch), leaf excluded, issuer first. Every
// certificate of a Fulcio CA whose validFor holds `time` is a trust anchor
// (as in sigstore-python's Store, which does not look at validFor); the
// bundle's own intermediates are never used. The leaf must not be a CA.
// Extended key usage codeSigning is allowed on the CAs. Throws
// Error(input) with the reason.
std::vector<X509Ptr> verify_chain_at(X509* leaf, const TrustedRoot& root, std::int64_t time);

// digitalSignature in keyUsage and codeSigning in extendedKeyUsage, both
// required. Throws Error(input) naming the one missing.
void check_code_signing_usage(X509* cert);

struct CertificateIdentity {
  std::vector<std::string> sans;  // email, URI, and Fulcio's otherName (1.3.6.1.4.1.57264.1.7) values
  std::optional<std::string> issuer_v1;  // 1.3.6.1.4.1.57264.1.1, the raw extension bytes
  std::optional<std::string> issuer_v2;  // 1.3.6.1.4.1.57264.1.8, a DER UTF8String
  std::optional<std::string> build_signer_uri;       // 1.3.6.1.4.1.57264.1.9
  std::optional<std::string> source_repository_uri;  // 1.3.6.1.4.1.57264.1.12
  // v1 where present (what sigstore-python's OIDCIssuer policy reads), else v2.
  std::optional<std::string> issuer() const { return issuer_v1 ? issuer_v1 : issuer_v2; }
};

// Throws Error(input) when an extension that is present is malformed.
CertificateIdentity certificate_identity(X509* cert);

// notBefore and notAfter as seconds since the epoch.
std::int64_t not_before(X509* cert);
std::int64_t not_after(X509* cert);

}  // namespace kwheel::sigstore
