#pragma once
// Whose signatures count: the identity policy a verified Sigstore bundle's
// signer is held to. A signature can verify and still be someone else's;
// kernels 0.17.2 accepts only the GitHub workflows of its DEFAULT_POLICIES
// (kernels/verify.py), which kwheel carries as data (kernels-data/signers.json,
// scripts/update-signers) and to which --trusted-signer adds.
#include <optional>
#include <string>
#include <vector>

#include "kwheel/sigstore/certificate.hpp"

namespace kwheel::sigstore {

// "https://github.com/o/r/.github/workflows/build.yaml@refs/heads/main
// (issuer https://token.actions.githubusercontent.com)": how messages name a signer.
std::string describe(const CertificateIdentity& signer);

// One rule. A GitHub workflow rule is kernels' GitHubWorkflowPolicy: both
// issuer extensions are GitHub Actions', the source repository is the
// repo's, and the build signer is one of the workflows. An identity rule is
// sigstore-python's policy.Identity: the OIDC issuer and one SAN.
struct TrustedSigner {
  enum class Kind { github_workflow, identity } kind = Kind::identity;
  std::string issuer;
  std::optional<std::string> source_repository;  // github_workflow
  std::vector<std::string> build_signers;        // github_workflow: any of
  std::optional<std::string> identity;           // identity: a SAN
  bool allows(const CertificateIdentity& signer) const;
  std::string describe() const;
};

class SignerPolicy {
 public:
  // kernels' own defaults (the embedded kernels-data/signers.json).
  static SignerPolicy kernels_default();
  // One signer: the SAN `identity` certified for OIDC issuer `issuer`, as
  // `kwheel verify --certificate-identity ID --certificate-oidc-issuer URL`.
  static SignerPolicy identity(std::string identity, std::string issuer);
  // Parses a signers.json document; Error(input) naming `where` and the field.
  static SignerPolicy parse(const std::string& json, const std::string& where);

  // --trusted-signer: a GitHub workflow URI
  // (https://github.com/ORG/REPO/.github/workflows/FILE@REF), or
  // "issuer=URL,identity=ID" for any other OIDC identity. Error(usage) otherwise.
  void add(const std::string& spec);

  // The first rule that allows `signer`, or nullopt.
  std::optional<TrustedSigner> match(const CertificateIdentity& signer) const;
  const std::vector<TrustedSigner>& signers() const { return signers_; }
  std::string describe() const;  // every rule, "; "-separated

 private:
  std::vector<TrustedSigner> signers_;
};

// The OIDC issuer of GitHub Actions, whose workflows sign kernel-builder's
// bundles (and whose identity a `--trusted-signer URI` rule expects).
inline constexpr const char* kGitHubActionsIssuer = "https://token.actions.githubusercontent.com";

}  // namespace kwheel::sigstore
