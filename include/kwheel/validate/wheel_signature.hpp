#pragma once
// The evidence a wheel kwheel built carries: <package>/metadata.json and
// the metadata.json.sigstore beside it. Read back and checked as a build
// checks them, by `inspect` and for the index's pages.
#include <cstdint>
#include <optional>
#include <string>

#include "kwheel/kernel/kernel_signature.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {

struct WheelSignature {
  std::string member;                       // "img2gray/metadata.json"
  std::string metadata_text;                // its bytes; parse them only when `verdict` is set
  std::optional<SignatureVerdict> verdict;  // when the bundle verified, or there is none
  std::string error;                        // when it did not verify: the check and why
  // "signed by W (issuer I), ...", "unsigned", or "invalid signature: ...".
  std::string summary() const;
};

// The wheel's top-level package metadata.json and its signature, checked
// at `now` (`options.require` is ignored: the caller decides); nullopt for
// a wheel that carries none.
std::optional<WheelSignature> wheel_signature(const WheelArchive& wheel, const SignatureOptions& options, std::int64_t now);

}  // namespace kwheel
