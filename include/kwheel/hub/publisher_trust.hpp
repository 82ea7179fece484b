#pragma once
// Publisher trust, decided as kernels 0.17.2 decides it
// (_check_trust_remote_code in kernels/hf_hub.py) and at the same moment:
// before anything of a repo is resolved or fetched. A repo is built when
// the Hub marks its organisation trustedKernelPublisher
// (GET /api/organizations/{org}/overview), or when the user opted in: to
// every repo (--trust-remote-code, kernels' trust_remote_code=True) or to
// named repos (--trust-repo, kernels' allowlist). An answer that cannot be
// had or read refuses the repo, as in kernels, but as what it is (a refused
// token, an unreachable Hub, an endpoint that is no Hub), never as an
// untrusted publisher whose fix is to trust it. Offline the Hub cannot be
// asked: kernels then warns and goes on from the cache, and so does kwheel,
// saying so in the decision.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kwheel/hub/hub.hpp"

namespace kwheel {

struct TrustPolicy {
  bool trust_remote_code = false;  // every repo
  std::vector<std::string> repos;  // these repo ids (ORG/NAME), exactly as kernels compares them
};

struct TrustDecision {
  enum class Basis {
    trusted_publisher,  // the Hub marks the org trustedKernelPublisher
    trust_remote_code,  // the user trusts every repo
    trusted_repo,       // the user named this repo
    offline_unchecked,  // offline: not checked (kernels' rule), from the cache
  };
  std::string repo_id;
  std::string publisher;  // the org part of repo_id
  Basis basis = Basis::trusted_publisher;
  nlohmann::json to_json() const;
};

const char* basis_name(TrustDecision::Basis basis);

// Refuses a --trust-repo that is not a repo id (Error(usage)).
void check_trust_policy(const TrustPolicy& policy);

// The decision for the client's repo, asking the Hub only where no opt-in
// decides it. When the Hub answers that the org is not trusted, or is no
// organization (a 404, confirmed to be the Hub's by listing the repo's
// refs), the refusal is an Error(policy, Reason::untrusted_publisher)
// naming the org and both opt-ins. Otherwise the cause comes first and the
// opt-ins are not offered: Error(auth) for a refused token, Error(network)
// for a Hub that cannot be reached or an endpoint where none answers, the
// repo's own not-found error when neither org nor repo exists. `warn`
// hears the offline warning.
TrustDecision check_publisher_trust(HubClient& hub, const TrustPolicy& policy, const std::function<void(const std::string&)>& warn);

}  // namespace kwheel
