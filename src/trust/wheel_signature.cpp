#include "kwheel/trust/wheel_signature.hpp"

#include <vector>

#include "kwheel/kernel/kernel_metadata.hpp"
#include "kwheel/trust/chain_evidence.hpp"
#include "kwheel/trust/verify_chain.hpp"

namespace kwheel {

std::string WheelSignature::summary() const {
  if (!error.empty()) return "invalid: " + error;
  return verdict ? verdict->describe() : "unsigned";
}

std::optional<WheelSignature> wheel_signature(const WheelArchive& wheel, const SignatureOptions& options, std::int64_t now,
                                              bool record_verified) {
  const std::string any_metadata = package_with_metadata(wheel.members());
  if (any_metadata.empty()) return std::nullopt;
  WheelSignature s;
  s.member = any_metadata + "/metadata.json";
  // The whole chain kwheel verify checks, not the bundle alone: a signed
  // metadata.json beside swapped files must not read as signed.
  ChainOptions o;
  o.signatures = options;
  o.allow_unsigned = true;  // the caller shows who signed, or that nobody did
  o.now = now;
  o.record_verified = record_verified;
  const ChainItem item = verify_wheel(wheel, o);
  if (!item.ok()) {
    s.error = std::string(check_name(*item.failed)) + ": " + item.why;
    return s;
  }
  // The package verify found for the wheel's name speaks for it, not a metadata.json found elsewhere.
  s.member = item.package + "/metadata.json";
  s.verdict = item.signature;
  s.metadata_text = wheel.read(s.member, kMaxKernelMetadataBytes + 1);
  return s;
}

}  // namespace kwheel
