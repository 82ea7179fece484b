#include "kwheel/sigstore/verifier.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "kwheel/base/enum_name.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/sigstore/certificate.hpp"
#include "kwheel/sigstore/public_key.hpp"
#include "kwheel/sigstore/rekor_entry.hpp"
#include "kwheel/sigstore/sct.hpp"
#include "kwheel/sigstore/timestamp.hpp"

namespace kwheel::sigstore {

namespace {

// Runs one check: a kwheel::Error from it becomes that check's refusal.
template <class F>
auto run_check(Check check, const std::string& what, F&& f) {
  try {
    return f();
  } catch (const VerificationError&) {
    throw;
  } catch (const Error& e) {
    throw VerificationError(check, what, e.what(), e.reason());
  }
}

// When it was signed, from signed sources only (sigstore-python's
// _establish_time): every TSA genTime that verifies, and the log's
// integrated time when an inclusion promise vouches for it (the SET is
// checked in log_entry). These times, and nothing the bundle states
// unsigned, then choose which CA, CT log key and log key may vouch.
struct EstablishedTimes {
  std::vector<std::int64_t> all;      // what every later check is held to
  std::vector<std::int64_t> tsa;      // the TSA genTimes among them
  std::optional<std::int64_t> promised;  // the integrated time under the SET
};

EstablishedTimes establish_time(const Bundle& b, const TrustedRoot& root, std::int64_t now) {
  EstablishedTimes times;
  if (!b.timestamps.empty()) {
    if (root.timestamp_authorities.empty())
      throw Error(ErrorKind::input, "the bundle carries signed timestamps but the trusted root names no timestamp authority");
    times.tsa = verify_timestamps(b.timestamps, b.message_signature->signature, root, now);
  }
  times.all = times.tsa;
  const TlogEntry& e = b.entry;
  if (e.integrated_time && e.signed_entry_timestamp) {
    if (e.version != "0.0.1" || (e.kind != "hashedrekord" && e.kind != "dsse"))
      throw Error(ErrorKind::input, "an integrated time is only meaningful for hashedrekord and dsse 0.0.1 entries");
    times.promised = e.integrated_time;
    times.all.push_back(*e.integrated_time);
  }
  if (times.all.empty() && !b.timestamps.empty())
    throw Error(ErrorKind::input, "none of the bundle's " + std::to_string(b.timestamps.size()) +
                                      " signed timestamps verifies with a timestamp authority of the trusted root (signed by the "
                                      "certificate it lists, over this signature, within its validFor), and there is no inclusion "
                                      "promise: nothing establishes when it was signed");
  if (times.all.empty()) throw Error(ErrorKind::input, "no signed timestamp or inclusion promise verifies: nothing establishes when it was signed");
  return times;
}

// The signer, and the name the policy knows it by.
std::string match_identity(X509* cert, const SignerPolicy* policy, VerificationResult& r) {
  r.signer = certificate_identity(cert);
  const auto issuer = r.signer.issuer();
  if (!issuer) throw Error(ErrorKind::input, "the certificate records no OIDC issuer");
  r.issuer = *issuer;
  r.build_signer_uri = r.signer.build_signer_uri;
  r.source_repository_uri = r.signer.source_repository_uri;
  if (!policy) return r.signer.sans.empty() ? std::string() : r.signer.sans.front();
  const auto rule = policy->match(r.signer);
  if (!rule)
    throw Error(ErrorKind::input, "the certificate names " + printable(join(r.signer.sans, ", ")) + " (issuer " + printable(*issuer) +
                                      "), which is not a trusted signer: " + policy->describe());
  return rule->identity ? *rule->identity : *r.signer.build_signer_uri;
}

}  // namespace

std::string_view to_string(Check c) {
  static constexpr EnumName<Check> names[] = {
      {Check::bundle, "bundle"},
      {Check::established_time, "established time"},
      {Check::certificate_chain, "certificate chain"},
      {Check::sct, "signed certificate timestamp"},
      {Check::key_usage, "key usage"},
      {Check::identity, "identity"},
      {Check::log_entry, "log entry"},
      {Check::certificate_validity, "certificate validity"},
      {Check::artifact_digest, "artifact digest"},
      {Check::signature, "signature"},
      {Check::log_body, "log body"},
  };
  return enum_name(c, names);
}

VerificationResult verify_bundle(const Bundle& b, std::span<const unsigned char> digest, const SignerPolicy* policy, const TrustedRoot& root,
                                 const std::string& what, std::int64_t now) {
  if (b.dsse || !b.message_signature)
    throw VerificationError(Check::bundle, what, "DSSE envelopes are not verified yet; kwheel verifies message signatures",
                            Reason::unsupported_bundle);
  X509* cert = b.certificate.get();
  VerificationResult r;
  const EstablishedTimes established = run_check(Check::established_time, what, [&] { return establish_time(b, root, now); });
  const std::vector<std::int64_t>& times = established.all;
  std::vector<X509Ptr> chain;
  for (std::int64_t t : times) chain = run_check(Check::certificate_chain, what, [&] { return verify_chain_at(cert, root, t); });
  run_check(Check::sct, what, [&] { verify_embedded_sct(cert, chain, root, times); });
  run_check(Check::key_usage, what, [&] { check_code_signing_usage(cert); });
  r.identity = run_check(Check::identity, what, [&] { return match_identity(cert, policy, r); });
  run_check(Check::log_entry, what, [&] { verify_log_entry(b.entry, root, times); });
  run_check(Check::certificate_validity, what, [&] {
    for (std::int64_t t : times)
      if (t < not_before(cert) || t > not_after(cert))
        throw Error(ErrorKind::input, "the certificate was not valid at " + format_rfc3339(t) + " (valid " + format_rfc3339(not_before(cert)) +
                                          " to " + format_rfc3339(not_after(cert)) + ")");
  });
  const MessageSignature& ms = *b.message_signature;
  run_check(Check::artifact_digest, what, [&] {
    if (digest.size() != 32) throw Error(ErrorKind::input, "the artifact digest is not SHA-256");
    if (ms.sha256 && !std::ranges::equal(*ms.sha256, digest))
      throw Error(ErrorKind::input, "the bundle's message digest is not the artifact's SHA-256");
  });
  run_check(Check::signature, what, [&] {
    if (!verify_prehashed(X509_get0_pubkey(cert), EVP_sha256(), ms.signature, digest))
      throw Error(ErrorKind::input, "the signature does not verify over the artifact with the certificate's key");
  });
  run_check(Check::log_body, what, [&] { verify_entry_body(b.entry, cert, ms.signature, digest); });
  // What is reported is what was verified: the entry's logIndex only where
  // the SET signs it, else the index the inclusion proof proves; the
  // integrated time only where the SET signs it.
  r.log_index = established.promised ? b.entry.log_index : b.entry.inclusion_proof.log_index;
  r.log_entry_kind = b.entry.kind + " " + b.entry.version;
  r.integrated_time = established.promised;
  r.timestamps = established.tsa;
  r.established_time = *std::min_element(times.begin(), times.end());
  return r;
}

VerificationResult verify_bundle_text(std::string_view text, std::span<const unsigned char> digest, const SignerPolicy* policy,
                                      const TrustedRoot& root, const std::string& what, std::int64_t now) {
  const Bundle b = run_check(Check::bundle, what, [&] { return parse_bundle(text, what); });
  return verify_bundle(b, digest, policy, root, what, now);
}

nlohmann::json to_json(const VerificationResult& r) {
  nlohmann::json j{{"ok", true},
                   {"identity", r.identity},
                   {"issuer", r.issuer},
                   {"log_index", r.log_index},
                   {"log_entry", r.log_entry_kind},
                   {"established_time", format_rfc3339(r.established_time)}};
  j["integrated_time"] = r.integrated_time ? nlohmann::json(format_rfc3339(*r.integrated_time)) : nlohmann::json(nullptr);
  j["timestamps"] = nlohmann::json::array();
  for (auto t : r.timestamps) j["timestamps"].push_back(format_rfc3339(t));
  j["build_signer_uri"] = r.build_signer_uri ? nlohmann::json(*r.build_signer_uri) : nlohmann::json(nullptr);
  j["source_repository_uri"] = r.source_repository_uri ? nlohmann::json(*r.source_repository_uri) : nlohmann::json(nullptr);
  return j;
}

}  // namespace kwheel::sigstore
