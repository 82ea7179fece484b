#include "kwheel/hub/publisher_trust.hpp"

#include <algorithm>

#include "kwheel/base/error.hpp"
#include "kwheel/base/enum_name.hpp"

namespace kwheel {

namespace {

std::string opt_ins(const std::string& repo_id) {
  return "pass --trust-repo " + repo_id + " to build this repo anyway, or --trust-remote-code to trust every repo";
}

}  // namespace

const char* basis_name(TrustDecision::Basis b) {
  using B = TrustDecision::Basis;
  static constexpr EnumName<B> names[] = {{B::trusted_publisher, "trusted-publisher"},
                                          {B::trust_remote_code, "trust-remote-code"},
                                          {B::trusted_repo, "trusted-repo"},
                                          {B::offline_unchecked, "offline-unchecked"}};
  return enum_name(b, names).data();
}

nlohmann::json TrustDecision::to_json() const {
  return {{"repo", repo_id}, {"publisher", publisher}, {"checked", basis != Basis::offline_unchecked}, {"basis", basis_name(basis)}};
}

void check_trust_policy(const TrustPolicy& policy) {
  for (const auto& r : policy.repos)
    if (!looks_like_repo_id(r))
      throw Error(ErrorKind::usage, "--trust-repo '" + r + "' is not a Hub repo id; give ORG/NAME, e.g. --trust-repo kernels-community/activation");
}

TrustDecision check_publisher_trust(HubClient& hub, const TrustPolicy& policy, const std::function<void(const std::string&)>& warn) {
  const std::string& repo = hub.repo_id();
  TrustDecision d{repo, repo.substr(0, repo.find('/'))};
  using B = TrustDecision::Basis;
  auto decided = [&](B basis) {
    d.basis = basis;
    return d;
  };
  if (policy.trust_remote_code) return decided(B::trust_remote_code);
  if (std::find(policy.repos.begin(), policy.repos.end(), repo) != policy.repos.end()) return decided(B::trusted_repo);
  if (hub.config().offline) {
    warn("skipping the publisher trust check for '" + repo + "': offline, the Hub cannot be asked (kernels does the same); the files come from the cache");
    return decided(B::offline_unchecked);
  }
  bool trusted = false;
  try {
    trusted = hub.trusted_publisher(d.publisher);
  } catch (const Error& e) {
    // A network fault or a refused token stays what it is: the fix is
    // there, not in trusting the repo.
    const bool keep = e.kind() == ErrorKind::network || e.kind() == ErrorKind::auth;
    throw Error(keep ? e.kind() : ErrorKind::policy,
                "repo '" + repo + "': could not verify whether its publisher '" + d.publisher + "' is trusted (" + e.what() + "); " + opt_ins(repo),
                Reason::untrusted_publisher);
  }
  if (!trusted)
    throw Error(ErrorKind::policy,
                "repo '" + repo + "' is not from a trusted publisher: the Hub at " + hub.config().endpoint + " does not mark '" + d.publisher +
                    "' trustedKernelPublisher (kernels refuses it too); " + opt_ins(repo),
                Reason::untrusted_publisher);
  return d;
}

}  // namespace kwheel
