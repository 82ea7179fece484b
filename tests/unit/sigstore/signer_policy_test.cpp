// The identity policy: kernels 0.17.2's default signers (kernels/verify.py
// DEFAULT_POLICIES, carried as kernels-data/signers.json) and --trusted-signer.
#include "kwheel/sigstore/signer_policy.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"

using namespace kwheel;
using namespace kwheel::sigstore;
using kwheel::testing::error_of;

namespace {

const std::string kCommunity = "https://github.com/huggingface/kernels-community";
const std::string kBuild = kCommunity + "/.github/workflows/build.yaml@refs/heads/main";

// What Fulcio certifies for a GitHub Actions workflow run.
CertificateIdentity workflow_run(const std::string& workflow_uri, const std::string& repo_uri) {
  CertificateIdentity s;
  s.sans = {workflow_uri};
  s.issuer_v1 = s.issuer_v2 = kGitHubActionsIssuer;
  s.build_signer_uri = workflow_uri;
  s.source_repository_uri = repo_uri;
  return s;
}

}  // namespace

TEST(SignerPolicy, KernelsDefaultsTrustKernelsCommunitysWorkflowsOnMain) {
  const SignerPolicy p = SignerPolicy::kernels_default();
  for (const char* wf : {"build.yaml", "build-mac.yaml", "build-windows.yaml", "sign-old-builds.yaml"})
    EXPECT_TRUE(p.match(workflow_run(kCommunity + "/.github/workflows/" + wf + "@refs/heads/main", kCommunity))) << wf;
}

TEST(SignerPolicy, EveryPartOfAGithubRuleMustHold) {
  const SignerPolicy p = SignerPolicy::kernels_default();
  EXPECT_FALSE(p.match(workflow_run(kCommunity + "/.github/workflows/build.yaml@refs/heads/evil", kCommunity)));
  EXPECT_FALSE(p.match(workflow_run(kCommunity + "/.github/workflows/other.yaml@refs/heads/main", kCommunity)));
  EXPECT_FALSE(p.match(workflow_run(kBuild, "https://github.com/attacker/kernels-community")));
  CertificateIdentity wrong_issuer = workflow_run(kBuild, kCommunity);
  wrong_issuer.issuer_v1 = "https://accounts.google.com";
  EXPECT_FALSE(p.match(wrong_issuer));
  CertificateIdentity no_v2 = workflow_run(kBuild, kCommunity);
  no_v2.issuer_v2.reset();  // kernels' policy checks both issuer extensions
  EXPECT_FALSE(p.match(no_v2));
  CertificateIdentity no_repo = workflow_run(kBuild, kCommunity);
  no_repo.source_repository_uri.reset();
  EXPECT_FALSE(p.match(no_repo));
}

TEST(SignerPolicy, TrustedSignerAddsAWorkflowOrAnIdentity) {
  SignerPolicy p = SignerPolicy::kernels_default();
  const std::string ours = "https://github.com/acme/kernels/.github/workflows/release.yml@refs/heads/main";
  EXPECT_FALSE(p.match(workflow_run(ours, "https://github.com/acme/kernels")));
  p.add(ours);
  const auto rule = p.match(workflow_run(ours, "https://github.com/acme/kernels"));
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->source_repository, "https://github.com/acme/kernels");

  CertificateIdentity person;
  person.sans = {"release@acme.example"};
  person.issuer_v1 = "https://accounts.google.com";
  EXPECT_FALSE(p.match(person));
  p.add("issuer=https://accounts.google.com,identity=release@acme.example");
  EXPECT_TRUE(p.match(person));
  person.issuer_v1 = "https://evil.example";
  EXPECT_FALSE(p.match(person));
}

TEST(SignerPolicy, ATrustedSignerThatIsNeitherFormIsAUsageError) {
  SignerPolicy p;
  for (const char* bad : {"acme/kernels", "https://github.com/acme/kernels/.github/workflows/x.yml", "issuer=,identity=x",
                          "issuer=https://i,identity=", "identity=x"})
    EXPECT_NE(error_of([&] { p.add(bad); }, ErrorKind::usage).find("--trusted-signer"), std::string::npos) << bad;
}

TEST(SignerPolicy, ASignersDocumentIsChecked) {
  EXPECT_NE(error_of([] { SignerPolicy::parse("[]", "f.json"); }).find("f.json"), std::string::npos);
  EXPECT_NE(error_of([] { SignerPolicy::parse(R"({"signers": [{"kind": "github-workflow", "issuer": "i", "source_repository": "r"}]})", "f"); })
                .find("build_signers"), std::string::npos);
  EXPECT_NE(error_of([] { SignerPolicy::parse(R"({"signers": [{"kind": "x509", "issuer": "i"}]})", "f"); }).find("'x509'"), std::string::npos);
}

TEST(SignerPolicy, DescribeNamesTheWorkflowAndIssuer) {
  EXPECT_EQ(describe(workflow_run(kBuild, kCommunity)), kBuild + " (issuer " + kGitHubActionsIssuer + ")");
  EXPECT_EQ(SignerPolicy::identity("me@x.example", "https://issuer.example").describe(), "me@x.example (issuer https://issuer.example)");
}
