#include "kwheel/validate/wheel_signature.hpp"

#include <algorithm>
#include <vector>

#include "kwheel/kernel/kernel_metadata.hpp"

namespace kwheel {

std::string WheelSignature::summary() const {
  if (!error.empty()) return "invalid signature: " + error;
  return verdict ? verdict->describe() : "unsigned";
}

std::optional<WheelSignature> wheel_signature(const WheelArchive& wheel, const SignatureOptions& options, std::int64_t now) {
  const std::vector<std::string> members = wheel.members();
  for (const auto& m : members) {
    if (!m.ends_with("/metadata.json") || m.find('/') != m.rfind('/') || m.starts_with(wheel.dist_info() + "/")) continue;
    WheelSignature s;
    s.member = m;
    s.metadata_text = wheel.read(m, kMaxKernelMetadataBytes + 1);
    const std::string bundle_member = m + ".sigstore";
    std::optional<std::string> bundle;
    if (std::find(members.begin(), members.end(), bundle_member) != members.end()) bundle = wheel.read(bundle_member, kMaxKernelMetadataBytes + 1);
    SignatureOptions checking = options;
    checking.require = false;
    try {
      s.verdict = check_metadata_signature(s.metadata_text, bundle, checking,
                                           "wheel '" + wheel.path().filename().string() + "' member '" + bundle_member + "'", now);
    } catch (const sigstore::VerificationError& e) {
      s.error = e.what();
    }
    return s;
  }
  return std::nullopt;
}

}  // namespace kwheel
