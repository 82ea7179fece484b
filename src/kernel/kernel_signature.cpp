#include "kwheel/kernel/kernel_signature.hpp"

#include <nlohmann/json.hpp>

#include "kwheel/base/error.hpp"
#include "kwheel/sigstore/codec.hpp"

namespace kwheel {

namespace {

const sigstore::TrustedRoot& root_of(const SignatureOptions& o) {
  static const sigstore::TrustedRoot production = sigstore::embedded_trusted_root(false);
  return o.trusted_root ? *o.trusted_root : production;
}

[[noreturn]] void refuse_unsigned(const SignatureVerdict& v, const std::string& where) {
  const std::string why = v.result ? "its signature is valid but by " + sigstore::describe(v.result->signer) + ", who is not a trusted signer"
                                   : "it has no " + std::string(kSignatureFile);
  throw sigstore::VerificationError(sigstore::Check::identity, where, why + "; --require-signature refuses it (trust a signer with --trusted-signer)");
}

}  // namespace

nlohmann::json SignatureVerdict::to_json() const {
  nlohmann::json j{{"signed", signed_by_trusted()}};
  j["status"] = status == Status::trusted ? "trusted" : status == Status::untrusted_signer ? "untrusted-signer" : "unsigned";
  if (result) j["signer"] = sigstore::to_json(*result);
  return j;
}

std::string SignatureVerdict::describe() const {
  if (!result) return "unsigned";
  const std::string who = sigstore::describe(result->signer) + ", Rekor log index " + std::to_string(result->log_index) + ", at " +
                          sigstore::format_rfc3339(result->established_time);
  return (status == Status::trusted ? "signed by " : "signed by an untrusted signer: ") + who;
}

SignatureVerdict check_metadata_signature(std::string_view metadata_json, const std::optional<std::string>& bundle_json,
                                          const SignatureOptions& o, const std::string& where, std::int64_t now) {
  SignatureVerdict v;
  if (bundle_json) {
    v.result = sigstore::verify_bundle_text(*bundle_json, sigstore::sha256(metadata_json), nullptr, root_of(o), where, now);
    v.status = o.signers.match(v.result->signer) ? SignatureVerdict::Status::trusted : SignatureVerdict::Status::untrusted_signer;
  }
  if (o.require && !v.signed_by_trusted()) refuse_unsigned(v, where);
  return v;
}

}  // namespace kwheel
