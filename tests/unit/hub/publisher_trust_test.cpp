// Publisher trust against a scripted Hub: the decision kernels 0.17.2 makes
// (_check_trust_remote_code), and which requests it takes to make it.
#include "kwheel/hub/publisher_trust.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "fake_transport.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"

using namespace kwheel;
using kwheel::testing::dropped;
using kwheel::testing::error_of;
using kwheel::testing::FakeTransport;
using kwheel::testing::ok;
using kwheel::testing::sent_header;

namespace {

const std::string kTrustHub = "https://hub.test";
const std::string kTrustToken = "hf_trustTestToken_41d9";
const std::string kTrustOverview = kTrustHub + "/api/organizations/acme/overview";

class PublisherTrust : public ::testing::Test {
 protected:
  HubClient client(bool offline = false) {
    HubConfig c;
    c.endpoint = kTrustHub;
    c.token = Secret(kTrustToken);
    c.cache_dir = cache_.path();
    c.offline = offline;
    return HubClient(c, "acme/relu", 1, hub_);
  }
  TrustDecision decide(const TrustPolicy& policy, bool offline = false) {
    HubClient hub = client(offline);
    return check_publisher_trust(hub, policy, [&](const std::string& w) { warnings_.push_back(w); });
  }
  Error refusal(const TrustPolicy& policy = {}) {
    try {
      decide(policy);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "the repo was not refused";
    return Error(ErrorKind::usage, "none");
  }

  TempDir cache_{"trust-test"};
  std::shared_ptr<FakeTransport> hub_ = std::make_shared<FakeTransport>();
  std::vector<std::string> warnings_;
};

}  // namespace

TEST_F(PublisherTrust, ATrustedPublisherIsAskedOnceWithTheToken) {
  hub_->on(kTrustOverview, {ok(R"({"name": "acme", "trustedKernelPublisher": true})")});
  const TrustDecision d = decide({});
  EXPECT_EQ(d.basis, TrustDecision::Basis::trusted_publisher);
  EXPECT_EQ(d.publisher, "acme");
  EXPECT_EQ(d.to_json()["basis"], "trusted-publisher");
  EXPECT_EQ(d.to_json()["checked"], true);
  ASSERT_EQ(hub_->sent.size(), 1u);
  EXPECT_EQ(sent_header(hub_->sent[0], "Authorization"), "Bearer " + kTrustToken);
}

TEST_F(PublisherTrust, AnOrgTheHubDoesNotMarkIsRefusedNamingTheOrgAndBothOptIns) {
  hub_->on(kTrustOverview, {ok(R"({"name": "acme", "trustedKernelPublisher": false})")});
  const Error e = refusal();
  EXPECT_EQ(e.kind(), ErrorKind::policy);
  EXPECT_EQ(e.reason(), Reason::untrusted_publisher);
  const std::string what = e.what();
  EXPECT_NE(what.find("'acme'"), std::string::npos) << what;
  EXPECT_NE(what.find("--trust-repo acme/relu"), std::string::npos) << what;
  EXPECT_NE(what.find("--trust-remote-code"), std::string::npos) << what;
  EXPECT_EQ(what.find('\n'), std::string::npos);
}

TEST_F(PublisherTrust, OnlyALiteralTrueTrusts) {
  for (const char* body : {R"({"name": "acme"})", R"({"trustedKernelPublisher": "true"})", R"({"trustedKernelPublisher": 1})", "[true]"}) {
    hub_->on(kTrustOverview, {ok(body)});
    EXPECT_EQ(refusal().reason(), Reason::untrusted_publisher) << body;
  }
}

TEST_F(PublisherTrust, AUserNamespaceIsNoOrganizationAndIsRefusedWithTheOptIns) {
  // No overview (404, huggingface_hub's "no such organization"), but the
  // repo is listed: a Hub answered, and the namespace is not an organization.
  hub_->on(kTrustHub + "/api/kernels/acme/relu/refs", {ok(R"({"branches": [], "tags": []})")});
  const Error e = refusal();
  EXPECT_EQ(e.kind(), ErrorKind::policy);
  EXPECT_EQ(e.reason(), Reason::untrusted_publisher);
  const std::string what = e.what();
  EXPECT_NE(what.find("has no organization 'acme'"), std::string::npos) << what;
  EXPECT_NE(what.find("--trust-repo acme/relu"), std::string::npos) << what;
}

TEST_F(PublisherTrust, A404WhereNoHubAnswersIsTheEndpointNotTheOrg) {
  // Neither the overview nor the repo's refs (as a kernel or a model repo)
  // are there, and no answer carries the Hub's error code: a wrong path.
  const Error e = refusal();
  EXPECT_EQ(e.kind(), ErrorKind::network);
  const std::string what = e.what();
  EXPECT_TRUE(what.starts_with("the endpoint " + kTrustHub + " does not answer as a Hugging Face Hub")) << what;
  EXPECT_EQ(what.find("--trust"), std::string::npos) << what;
}

TEST_F(PublisherTrust, NeitherOrgNorRepoIsRepoNotFound) {
  kwheel::testing::FakeAnswer missing;
  missing.status = 404;
  missing.headers["x-error-code"] = "RepoNotFound";
  hub_->on(kTrustHub + "/api/kernels/acme/relu/refs", {missing});
  hub_->on(kTrustHub + "/api/models/acme/relu/refs", {missing});
  const Error e = refusal();
  EXPECT_EQ(e.kind(), ErrorKind::not_found);
  EXPECT_EQ(e.reason(), Reason::repo_not_found);
  EXPECT_EQ(std::string(e.what()).find("--trust"), std::string::npos) << e.what();
}

TEST_F(PublisherTrust, AHubThatCannotBeReachedRefusesAsANetworkError) {
  hub_->on(kTrustOverview, {dropped()});
  const Error e = refusal();
  EXPECT_EQ(e.kind(), ErrorKind::network);
  EXPECT_TRUE(std::string(e.what()).starts_with("cannot reach the Hub at " + kTrustHub)) << e.what();
  EXPECT_EQ(std::string(e.what()).find("--trust"), std::string::npos) << e.what();
}

TEST_F(PublisherTrust, AServerErrorNamesTheRequestAndItsStatus) {
  kwheel::testing::FakeAnswer down;
  down.status = 503;
  hub_->on(kTrustOverview, {down});
  const Error e = refusal();
  EXPECT_EQ(e.kind(), ErrorKind::network);
  // Retried, as every Hub request is, then named with its last status.
  EXPECT_TRUE(std::string(e.what()).starts_with("cannot reach the Hub at " + kTrustHub)) << e.what();
  EXPECT_NE(std::string(e.what()).find(kTrustOverview + " after 5 attempts: HTTP 503"), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).find("--trust"), std::string::npos) << e.what();
}

TEST_F(PublisherTrust, OptInsDecideWithoutAskingTheHub) {
  TrustPolicy every;
  every.trust_remote_code = true;
  EXPECT_EQ(decide(every).basis, TrustDecision::Basis::trust_remote_code);
  TrustPolicy named;
  named.repos = {"other/x", "acme/relu"};
  EXPECT_EQ(decide(named).basis, TrustDecision::Basis::trusted_repo);
  EXPECT_TRUE(hub_->sent.empty());
}

TEST_F(PublisherTrust, AnotherRepoOfTheOrgIsNotCoveredByANamedRepo) {
  hub_->on(kTrustOverview, {ok(R"({"trustedKernelPublisher": false})")});
  TrustPolicy named;
  named.repos = {"acme/relu2", "ACME/relu"};  // kernels compares ids exactly
  EXPECT_EQ(refusal(named).reason(), Reason::untrusted_publisher);
}

TEST_F(PublisherTrust, OfflineItWarnsAndGoesOnUnchecked) {
  const TrustDecision d = decide({}, true);
  EXPECT_EQ(d.basis, TrustDecision::Basis::offline_unchecked);
  EXPECT_EQ(d.to_json()["checked"], false);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("acme/relu"), std::string::npos);
  EXPECT_TRUE(hub_->sent.empty());
}

TEST(TrustPolicyCheck, ATrustedRepoMustBeARepoId) {
  TrustPolicy p;
  p.repos = {"acme"};
  EXPECT_NE(error_of([&] { check_trust_policy(p); }, ErrorKind::usage).find("--trust-repo 'acme'"), std::string::npos);
  p.repos = {"acme/relu"};
  check_trust_policy(p);
}

TEST_F(PublisherTrust, ARefusedTokenIsAnAuthenticationErrorWithoutTheOptIns) {
  kwheel::testing::FakeAnswer refused;
  refused.status = 401;
  refused.headers["x-error-message"] = "Invalid credentials in Authorization header";
  hub_->on(kTrustOverview, {refused});
  const Error e = refusal();
  EXPECT_EQ(e.kind(), ErrorKind::auth);
  const std::string what = e.what();
  EXPECT_TRUE(what.starts_with("GET " + kTrustOverview + " answered HTTP 401 (Invalid credentials in Authorization header)")) << what;
  EXPECT_NE(what.find("rejected the token"), std::string::npos) << what;
  EXPECT_EQ(what.find("--trust"), std::string::npos) << what;
}
