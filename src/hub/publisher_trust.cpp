#include "kwheel/hub/publisher_trust.hpp"

#include <algorithm>

#include "kwheel/base/error.hpp"
#include "kwheel/base/enum_name.hpp"
#include "kwheel/hub/url.hpp"

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
  // Fail closed, as kernels does, but say why: the trust flags are offered
  // only when the Hub answered that the org is not trusted or is not an
  // organization. A refused token, a Hub that cannot be reached or is not
  // there throw from publisher_overview with their own cause and exit code:
  // their fix is the token or the endpoint, never trusting the repo.
  const std::string overview = display_url(hub.config().endpoint + "/api/organizations/" + d.publisher + "/overview");
  switch (hub.publisher_overview(d.publisher)) {
    case HubClient::PublisherAnswer::trusted:
      return d;
    case HubClient::PublisherAnswer::not_trusted:
      throw Error(ErrorKind::policy,
                  "repo '" + repo + "' is not from a trusted publisher: the Hub at " + display_url(hub.config().endpoint) + " does not mark '" +
                      d.publisher + "' trustedKernelPublisher (kernels refuses it too); " + opt_ins(repo),
                  Reason::untrusted_publisher);
    case HubClient::PublisherAnswer::no_such_organization:
      break;
  }
  // A 404 is "no such organization" only if a Hub gave it: a wrong
  // endpoint path gives one too. The repo's own refs tell them apart (the
  // build asks for them next anyway): listed, the Hub is there and the
  // namespace is not an organization (a user's); "repo not found" is the
  // real cause; anything else means no Hub answers at that endpoint.
  try {
    hub.list_refs();
  } catch (const Error& e) {
    if (e.reason() == Reason::repo_not_found || e.kind() == ErrorKind::network || e.kind() == ErrorKind::auth) throw;
    throw Error(ErrorKind::network, "the endpoint " + display_url(hub.config().endpoint) + " does not answer as a Hugging Face Hub: GET " + overview +
                                        " answered HTTP 404 and " + e.what() +
                                        "; check --endpoint / HF_ENDPOINT (a mirror's whole path, e.g. .../api/huggingfaceml/REPO)");
  }
  throw Error(ErrorKind::policy,
              "repo '" + repo + "' is not from a trusted publisher: the Hub at " + display_url(hub.config().endpoint) + " has no organization '" +
                  d.publisher + "' (GET " + overview + " answered HTTP 404; a user's namespace is not an organization, so kernels refuses it too); " +
                  opt_ins(repo),
              Reason::untrusted_publisher);
}

}  // namespace kwheel
