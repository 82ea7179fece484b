#include "kwheel/sigstore/rekor_entry.hpp"

#include <openssl/pem.h>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/sigstore/canonical_json.hpp"
#include "kwheel/sigstore/checkpoint.hpp"
#include "kwheel/sigstore/merkle.hpp"
#include "kwheel/sigstore/public_key.hpp"

namespace kwheel::sigstore {

using nlohmann::json;

namespace {

Error entry_error(const std::string& part, const std::string& why) { return Error(ErrorKind::input, part + ": " + why); }

std::string certificate_pem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) throw std::runtime_error("OpenSSL: cannot write a PEM certificate");
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

Bytes certificate_der(X509* cert) {
  unsigned char* der = nullptr;
  const int len = i2d_X509(cert, &der);
  if (len <= 0) throw std::runtime_error("OpenSSL: cannot encode a certificate");
  Bytes out(der, der + len);
  OPENSSL_free(der);
  return out;
}

json hashedrekord_v001(X509* cert, std::span<const unsigned char> signature, std::span<const unsigned char> digest) {
  const std::string pem = certificate_pem(cert);
  return {{"apiVersion", "0.0.1"},
          {"kind", "hashedrekord"},
          {"spec",
           {{"data", {{"hash", {{"algorithm", "sha256"}, {"value", to_hex(digest)}}}}},
            {"signature",
             {{"content", standard_b64(signature)},
              {"publicKey", {{"content", standard_b64(std::span(reinterpret_cast<const unsigned char*>(pem.data()), pem.size()))}}}}}}}};
}

json hashedrekord_v002(X509* cert, std::span<const unsigned char> signature, std::span<const unsigned char> digest) {
  const auto details = key_details(X509_get0_pubkey(cert));
  if (!details) throw entry_error("log entry", "the signing certificate's key is not one Rekor v2 records");
  return {{"apiVersion", "0.0.2"},
          {"kind", "hashedrekord"},
          {"spec",
           {{"hashedRekordV002",
             {{"data", {{"algorithm", "SHA2_256"}, {"digest", standard_b64(digest)}}},
              {"signature",
               {{"content", standard_b64(signature)},
                {"verifier", {{"keyDetails", *details}, {"x509Certificate", {{"rawBytes", standard_b64(certificate_der(cert))}}}}}}}}}}}};
}

std::string format_times(std::span<const std::int64_t> times) {
  std::string out;
  for (std::int64_t t : times) out += (out.empty() ? "" : ", ") + format_rfc3339(t);
  return out;
}

}  // namespace

std::string inclusion_promise_payload(const TlogEntry& e) {
  if (!e.integrated_time) throw entry_error("inclusion promise", "the entry has no integrated time");
  return canonical_json({{"body", standard_b64(e.canonicalized_body)},
                         {"integratedTime", *e.integrated_time},
                         {"logID", to_hex(e.log_id)},
                         {"logIndex", e.log_index}});
}

void verify_log_entry(const TlogEntry& e, const TrustedRoot& root, const std::vector<std::int64_t>& established) {
  const InclusionProof& p = e.inclusion_proof;
  try {
    verify_inclusion(e.canonicalized_body, p.log_index, p.tree_size, p.hashes, p.root_hash);
  } catch (const Error& err) {
    throw entry_error("inclusion proof", err.what());
  }
  // Which log key may vouch is decided by the established times alone:
  // times a signature covers (the TSA's genTime, the integrated time under
  // the SET). The entry's own integratedTime is not one of them unless its
  // SET verifies below, and a Rekor v2 entry, or a v1 entry without an
  // inclusion promise, has nothing that signs it: an attacker could move it
  // into a retired key's window (issue 38, defect 9).
  Checkpoint checkpoint;
  try {
    checkpoint = verify_checkpoint(p.checkpoint, e.log_id, p.root_hash, root.tlogs, established);
  } catch (const Error& err) {
    throw entry_error("checkpoint", err.what());
  }
  // The proof's treeSize is the bundle's word until it is the size the log
  // signed: with another size, the same hashes can prove the same leaf under
  // the same root at another index (the leaf 5 of 6 proves as leaf 3 of 4),
  // and without a SET that index is what is reported. sigstore-python 4.5.1
  // does not compare them (it reports no index).
  if (checkpoint.size != p.tree_size)
    throw entry_error("checkpoint", "the log signed a tree of " + std::to_string(checkpoint.size) + " entries; the inclusion proof claims " +
                                        std::to_string(p.tree_size));
  if (e.signed_entry_timestamp && e.integrated_time) {
    const std::string payload = inclusion_promise_payload(e);
    if (!verify_with_log_keys(root.tlogs, e.log_id, *e.signed_entry_timestamp,
                              std::span(reinterpret_cast<const unsigned char*>(payload.data()), payload.size()), established))
      throw entry_error("inclusion promise", "the signed entry timestamp does not verify with a log key valid at the signing time (" +
                                                 format_times(established) + ")");
  }
}

void verify_entry_body(const TlogEntry& e, X509* cert, std::span<const unsigned char> signature, std::span<const unsigned char> digest) {
  if (e.kind != "hashedrekord") throw entry_error("log entry", "a message signature needs a hashedrekord entry, not '" + e.kind.substr(0, 32) + "'");
  const json expected = e.version == "0.0.2" ? hashedrekord_v002(cert, signature, digest) : hashedrekord_v001(cert, signature, digest);
  const json actual = json::parse(as_text(e.canonicalized_body), nullptr, false);
  if (actual.is_discarded() || actual != expected)
    throw entry_error("log entry", "the logged hashedrekord " + e.version + " body is not the one this bundle's certificate, signature and artifact make");
}

}  // namespace kwheel::sigstore
