#pragma once
// A variant's signature, as kernel-builder makes it and kernels 0.17.2
// checks it (`kernels verify-signature`): metadata.json.sigstore, a Sigstore
// bundle over metadata.json, whose digest covers every other file of the
// variant. kwheel verifies it offline, before metadata.json is parsed
// (kernels' rule: never parse unverified metadata), and holds the signer
// to an identity policy: a valid bundle by someone the policy does not name
// counts as unsigned, and says who signed it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "kwheel/sigstore/signer_policy.hpp"
#include "kwheel/sigstore/trusted_root.hpp"
#include "kwheel/sigstore/verifier.hpp"

namespace kwheel {

inline constexpr const char* kSignatureFile = "metadata.json.sigstore";
// A bundle is a few KiB (a certificate, a signature, a log entry, maybe
// timestamps); anything near this is not one.
inline constexpr std::uint64_t kMaxSignatureBytes = 1 << 20;

struct SignatureOptions {
  sigstore::SignerPolicy signers = sigstore::SignerPolicy::kernels_default();  // + --trusted-signer
  // --trusted-root; none: Sigstore's production root. Shared: options are
  // copied per kernel, and a root holds OpenSSL keys and certificates.
  std::shared_ptr<const sigstore::TrustedRoot> trusted_root;
  bool require = false;                               // --require-signature
  // sha256 of --trusted-root's bytes, "" for the built-in root: what a
  // verdict kept from an earlier run (kwheel index's manifest) was made with.
  std::string trusted_root_sha256;
};

struct SignatureVerdict {
  enum class Status {
    trusted,           // verified, by a signer the policy names
    untrusted_signer,  // verified, by someone else: counted as unsigned
    unsigned_,         // no metadata.json.sigstore
  } status = Status::unsigned_;
  std::optional<sigstore::VerificationResult> result;  // when a bundle verified
  bool signed_by_trusted() const { return status == Status::trusted; }
  // "signed": true only for a trusted signer; the signer whenever one verified.
  nlohmann::json to_json() const;
  // One line for people: "signed by W (issuer I), Rekor log index N, at T".
  std::string describe() const;
};

// Verifies `bundle_json` (absent: unsigned) over `metadata_json` with the
// options' root and policy at wall-clock `now`. A bundle that does not
// verify throws sigstore::VerificationError (its message names `where` and
// the check); so does `require` when the verdict is not `trusted`, naming
// the signer, if any, and the opt-in.
SignatureVerdict check_metadata_signature(std::string_view metadata_json, const std::optional<std::string>& bundle_json,
                                          const SignatureOptions& options, const std::string& where, std::int64_t now);

}  // namespace kwheel
