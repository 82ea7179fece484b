#pragma once
// The evidence a wheel kwheel built carries: <package>/metadata.json and
// the metadata.json.sigstore beside it, with the whole chain behind them
// (RECORD, the signature, the files against the digest: verify_chain.hpp),
// as `inspect` and the index's pages show it.
#include <cstdint>
#include <optional>
#include <string>

#include "kwheel/kernel/kernel_signature.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {

struct WheelSignature {
  std::string member;                       // "img2gray/metadata.json"
  std::string metadata_text;                // its bytes; parse them only when `verdict` is set
  std::optional<SignatureVerdict> verdict;  // when the chain held (signed or not)
  std::string error;                        // when it did not: the check and why
  // "signed by W (issuer I), ...", "unsigned", or "invalid: <check>: ...".
  std::string summary() const;
};

// The wheel's top-level package metadata.json, its signature and the
// files it vouches for, checked at `now` (`options.require` is ignored: the
// caller decides); nullopt for a wheel that carries no metadata.json.
// `record_verified`: the caller already held the members to RECORD.
std::optional<WheelSignature> wheel_signature(const WheelArchive& wheel, const SignatureOptions& options, std::int64_t now,
                                              bool record_verified = false);

}  // namespace kwheel
