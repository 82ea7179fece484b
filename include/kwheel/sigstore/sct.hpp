#pragma once
// The signed certificate timestamp Fulcio embeds in every signing
// certificate (RFC 6962 section 3.3): proof that the certificate was
// logged in a CT log the trusted root names, checked by rebuilding the
// precertificate entry the log signed.
#include <cstdint>
#include <span>
#include <vector>

#include "kwheel/sigstore/openssl_handles.hpp"
#include "kwheel/sigstore/trusted_root.hpp"

namespace kwheel::sigstore {

// `chain` is the verified chain above `leaf`, issuer first
// (verify_chain_at). Exactly one embedded SCT, SHA-256, signed by a key of
// root.ctlogs valid at every time of `established` (the signing times the
// verifier established) over the precertificate. Throws Error(input)
// saying why not.
void verify_embedded_sct(X509* leaf, const std::vector<X509Ptr>& chain, const TrustedRoot& root,
                         std::span<const std::int64_t> established);

}  // namespace kwheel::sigstore
