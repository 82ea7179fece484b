#pragma once
// Offline verification of a Sigstore bundle over an artifact, the checks
// of sigstore-python 4.x's Verifier.verify_artifact in its order, each a
// named Check (as sigstore-go names its verifier's steps): a failure says
// which check refused the bundle and why, and carries the check for
// callers that decide on it.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/sigstore/bundle.hpp"
#include "kwheel/sigstore/certificate.hpp"
#include "kwheel/sigstore/signer_policy.hpp"
#include "kwheel/sigstore/trusted_root.hpp"

namespace kwheel::sigstore {

enum class Check {
  bundle,                // well-formed, a kind kwheel verifies
  established_time,      // signed timestamps and the integrated time: when it was signed
  certificate_chain,     // the signing certificate chains to Fulcio at each established time
  sct,                   // the certificate was logged in a trusted CT log
  key_usage,             // digitalSignature and codeSigning
  identity,              // the expected SAN and OIDC issuer
  log_entry,             // inclusion proof, checkpoint, inclusion promise
  certificate_validity,  // each established time is inside the certificate's lifetime
  artifact_digest,       // the bundle's message digest is the artifact's
  signature,             // the signature over the artifact
  log_body,              // the logged entry is this certificate, signature and artifact
};

std::string_view to_string(Check c);

// A refused bundle: ErrorKind::input (exit 3), the message
// "<check>: <what>: <reason>". Reason::unsupported_bundle marks a bundle
// kwheel cannot verify yet rather than one that failed.
class VerificationError : public Error {
 public:
  VerificationError(Check check, const std::string& what, const std::string& reason, Reason r = Reason::unspecified)
      : Error(ErrorKind::input, std::string(to_string(check)) + ": " + what + ": " + reason, r), check_(check) {}
  Check check() const noexcept { return check_; }

 private:
  Check check_;
};

struct VerificationResult {
  CertificateIdentity signer;  // everything the certificate says of who signed
  std::string identity;        // the SAN or workflow the policy matched (no policy: the first SAN)
  std::string issuer;
  std::optional<std::string> build_signer_uri;
  std::optional<std::string> source_repository_uri;
  std::uint64_t log_index = 0;  // the entry's, as the SET signs it; without a SET, the inclusion proof's
  std::string log_entry_kind;  // "hashedrekord 0.0.1"
  std::optional<std::int64_t> integrated_time;  // only as an inclusion promise signs it (never Rekor v2's)
  std::vector<std::int64_t> timestamps;  // TSA genTimes that verified
  std::int64_t established_time = 0;     // the earliest verified time
};

// Verifies `bundle` over an artifact whose SHA-256 is `artifact_sha256`,
// signed by a signer `policy` allows, against `root`, at wall-clock `now`
// (seconds; TSAs not yet valid at `now` are not trusted). `what` names the
// bundle in messages. Throws VerificationError. A null `policy` checks
// every step but whose signature it is: the caller holds the result's
// signer to its own rules (a build counts another signer's valid bundle as
// unsigned, and names the signer).
VerificationResult verify_bundle(const Bundle& bundle, std::span<const unsigned char> artifact_sha256, const SignerPolicy* policy,
                                 const TrustedRoot& root, const std::string& what, std::int64_t now);

// What --json reports of a verified bundle: the signer, its issuer, the
// log entry and the times that verified ("ok": true).
nlohmann::json to_json(const VerificationResult& result);

// Parses then verifies; a parse failure is Check::bundle.
VerificationResult verify_bundle_text(std::string_view bundle_json, std::span<const unsigned char> artifact_sha256,
                                      const SignerPolicy* policy, const TrustedRoot& root, const std::string& what, std::int64_t now);

}  // namespace kwheel::sigstore
