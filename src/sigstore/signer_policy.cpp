#include "kwheel/sigstore/signer_policy.hpp"

#include <algorithm>
#include <regex>

#include <nlohmann/json.hpp>

#include "kwheel/base/embedded_data.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel::sigstore {
using nlohmann::json;

namespace {

bool equals(const std::optional<std::string>& have, const std::string& want) { return have && *have == want; }

// https://github.com/ORG/REPO/.github/workflows/FILE@REF -> "ORG/REPO".
std::optional<std::string> workflow_repo(const std::string& uri) {
  static const std::regex re(R"(^https://github\.com/([A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100})/\.github/workflows/[A-Za-z0-9_.-]{1,200}@refs/[A-Za-z0-9_./-]{1,200}$)");
  std::smatch m;
  if (uri.size() > 600 || !std::regex_match(uri, m, re)) return std::nullopt;
  return m[1].str();
}

std::string field_string(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string() || it->get<std::string>().empty())
    throw Error(ErrorKind::input, where + ": a signer needs a non-empty string '" + key + "'");
  return it->get<std::string>();
}

TrustedSigner parse_signer(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error(ErrorKind::input, where + ": each signer must be an object");
  TrustedSigner s;
  const std::string kind = field_string(j, "kind", where);
  s.issuer = field_string(j, "issuer", where);
  if (kind == "github-workflow") {
    s.kind = TrustedSigner::Kind::github_workflow;
    s.source_repository = field_string(j, "source_repository", where);
    auto list = j.find("build_signers");
    if (list == j.end() || !list->is_array() || list->empty())
      throw Error(ErrorKind::input, where + ": a github-workflow signer needs a non-empty 'build_signers' list");
    for (const auto& u : *list) {
      if (!u.is_string()) throw Error(ErrorKind::input, where + ": 'build_signers' holds a non-string");
      s.build_signers.push_back(u.get<std::string>());
    }
  } else if (kind == "identity") {
    s.identity = field_string(j, "identity", where);
  } else {
    throw Error(ErrorKind::input, where + ": signer kind '" + kind + "' is neither github-workflow nor identity");
  }
  return s;
}

}  // namespace

std::string describe(const CertificateIdentity& signer) {
  const std::string who = signer.build_signer_uri ? *signer.build_signer_uri : signer.sans.empty() ? "an unnamed signer" : signer.sans.front();
  return printable(who) + " (issuer " + printable(signer.issuer().value_or("unknown")) + ")";
}

bool TrustedSigner::allows(const CertificateIdentity& signer) const {
  if (kind == Kind::identity)
    return equals(signer.issuer(), issuer) && std::find(signer.sans.begin(), signer.sans.end(), *identity) != signer.sans.end();
  // kernels' GitHubWorkflowPolicy: OIDCIssuer and OIDCIssuerV2 both.
  return equals(signer.issuer_v1, issuer) && equals(signer.issuer_v2, issuer) && signer.source_repository_uri == source_repository &&
         signer.build_signer_uri && std::find(build_signers.begin(), build_signers.end(), *signer.build_signer_uri) != build_signers.end();
}

std::string TrustedSigner::describe() const {
  if (kind == Kind::identity) return *identity + " (issuer " + issuer + ")";
  return "workflows of " + *source_repository + " (" + join(build_signers, ", ") + ")";
}

SignerPolicy SignerPolicy::parse(const std::string& text, const std::string& where) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("signers") || !doc["signers"].is_array())
    throw Error(ErrorKind::input, where + ": not a signers document ({\"signers\": [...]})");
  SignerPolicy p;
  for (const auto& s : doc["signers"]) p.signers_.push_back(parse_signer(s, where));
  return p;
}

SignerPolicy SignerPolicy::kernels_default() {
  static const SignerPolicy policy = parse(std::string(embedded_data("signers")), "kernels-data/signers.json");
  return policy;
}

SignerPolicy SignerPolicy::identity(std::string identity, std::string issuer) {
  SignerPolicy p;
  TrustedSigner s;
  s.issuer = std::move(issuer);
  s.identity = std::move(identity);
  p.signers_.push_back(std::move(s));
  return p;
}

std::string SignerPolicy::describe() const {
  std::vector<std::string> rules;
  for (const auto& s : signers_) rules.push_back(s.describe());
  return rules.empty() ? "no signer" : join(rules, "; ");
}

void SignerPolicy::add(const std::string& spec) {
  TrustedSigner s;
  if (auto repo = workflow_repo(spec)) {
    s.kind = TrustedSigner::Kind::github_workflow;
    s.issuer = kGitHubActionsIssuer;
    s.source_repository = "https://github.com/" + *repo;
    s.build_signers = {spec};
  } else if (spec.starts_with("issuer=") && spec.find(",identity=") != std::string::npos) {
    const size_t at = spec.find(",identity=");
    s.issuer = spec.substr(7, at - 7);
    s.identity = spec.substr(at + 10);
    if (s.issuer.empty() || s.identity->empty() || unprintable_at(spec) != std::string::npos)
      throw Error(ErrorKind::usage, "--trusted-signer '" + spec + "' names an empty issuer or identity");
  } else {
    throw Error(ErrorKind::usage, "--trusted-signer '" + spec +
                                      "' is neither a GitHub workflow (https://github.com/ORG/REPO/.github/workflows/FILE@refs/heads/BRANCH) nor "
                                      "issuer=URL,identity=ID");
  }
  signers_.push_back(std::move(s));
}

std::optional<TrustedSigner> SignerPolicy::match(const CertificateIdentity& signer) const {
  for (const auto& s : signers_)
    if (s.allows(signer)) return s;
  return std::nullopt;
}

}  // namespace kwheel::sigstore
