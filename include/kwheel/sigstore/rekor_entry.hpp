#pragma once
// A Rekor log entry as a bundle carries it: proof that the log holds it
// (the Merkle inclusion proof up to a checkpoint the log signed), the
// inclusion promise (Rekor v1's signed entry timestamp, SET), and the body
// the log recorded, which must be the one rebuilt from the bundle's own
// certificate, signature and artifact digest (hashedrekord 0.0.1 for Rekor
// v1, 0.0.2 for Rekor v2).
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "kwheel/sigstore/bundle.hpp"
#include "kwheel/sigstore/trusted_root.hpp"

namespace kwheel::sigstore {

// What the SET signs: RFC 8785 JSON of body (base64), integratedTime,
// logID (hex) and logIndex. Throws Error(input) without an integrated time.
std::string inclusion_promise_payload(const TlogEntry& entry);

// The inclusion proof and its signed checkpoint, then the SET when the
// entry has one. Log keys are used only when valid at every `established`
// time (the verifier's signed times: TSA genTimes and the integrated time
// an inclusion promise covers), never by the entry's unsigned fields. Throws
// Error(input) "inclusion proof: ...", "checkpoint: ..." or "inclusion
// promise: ...".
void verify_log_entry(const TlogEntry& entry, const TrustedRoot& root, const std::vector<std::int64_t>& established);

// The body the log holds equals the hashedrekord rebuilt from `cert`,
// `signature` and the artifact's SHA-256. Throws Error(input).
void verify_entry_body(const TlogEntry& entry, X509* cert, std::span<const unsigned char> signature,
                       std::span<const unsigned char> artifact_sha256);

}  // namespace kwheel::sigstore
