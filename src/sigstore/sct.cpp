#include "kwheel/sigstore/sct.hpp"

#include <openssl/x509v3.h>

#include "kwheel/base/error.hpp"
#include "kwheel/sigstore/public_key.hpp"

namespace kwheel::sigstore {

namespace {

void sct_put(Bytes& out, std::uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<unsigned char>((value >> (8 * i)) & 0xff));
}

// The precertificate's TBSCertificate: the final certificate's, without
// the SCT list extension (what OpenSSL's own SCT_CTX_set1_cert rebuilds).
Bytes precert_tbs(X509* leaf) {
  X509Ptr copy(X509_dup(leaf));
  if (!copy) throw std::runtime_error("OpenSSL: cannot copy a certificate");
  const int at = X509_get_ext_by_NID(copy.get(), NID_ct_precert_scts, -1);
  if (at >= 0) X509_EXTENSION_free(X509_delete_ext(copy.get(), at));
  unsigned char* der = nullptr;
  const int len = i2d_re_X509_tbs(copy.get(), &der);
  if (len <= 0) throw std::runtime_error("OpenSSL: cannot encode a TBSCertificate");
  Bytes tbs(der, der + len);
  OPENSSL_free(der);
  return tbs;
}

// A CT "precertificate signing certificate" (EKU 1.3.6.1.4.1.11129.2.4.4)
// issues on the CA's behalf; the key hash is then its issuer's.
bool is_preissuer(X509* cert) {
  ExtKeyUsagePtr eku(static_cast<EXTENDED_KEY_USAGE*>(X509_get_ext_d2i(cert, NID_ext_key_usage, nullptr, nullptr)));
  if (!eku) return false;
  for (int i = 0; i < sk_ASN1_OBJECT_num(eku.get()); ++i)
    if (OBJ_obj2nid(sk_ASN1_OBJECT_value(eku.get(), i)) == NID_ct_precert_signer) return true;
  return false;
}

// RFC 6962's digitally-signed struct for a precert_entry.
Bytes signed_data(SCT* sct, X509* leaf, std::span<const unsigned char> issuer_key_hash) {
  const Bytes tbs = precert_tbs(leaf);
  if (tbs.size() >= (1u << 24)) throw Error(ErrorKind::input, "the signing certificate is too large for an SCT");
  unsigned char* ext = nullptr;
  const size_t ext_len = SCT_get0_extensions(sct, &ext);
  Bytes out;
  sct_put(out, static_cast<std::uint64_t>(SCT_get_version(sct)), 1);
  sct_put(out, 0, 1);  // signature_type: certificate_timestamp
  sct_put(out, SCT_get_timestamp(sct), 8);
  sct_put(out, 1, 2);  // entry_type: precert_entry
  out.insert(out.end(), issuer_key_hash.begin(), issuer_key_hash.end());
  sct_put(out, tbs.size(), 3);
  out.insert(out.end(), tbs.begin(), tbs.end());
  sct_put(out, ext_len, 2);
  if (ext_len) out.insert(out.end(), ext, ext + ext_len);
  return out;
}

}  // namespace

void verify_embedded_sct(X509* leaf, const std::vector<X509Ptr>& chain, const TrustedRoot& root,
                         std::span<const std::int64_t> established) {
  int critical = 0;
  SctListPtr scts(static_cast<STACK_OF(SCT)*>(X509_get_ext_d2i(leaf, NID_ct_precert_scts, &critical, nullptr)));
  if (!scts) throw Error(ErrorKind::input, "the signing certificate carries no signed certificate timestamp");
  if (sk_SCT_num(scts.get()) != 1)
    throw Error(ErrorKind::input, "the signing certificate carries " + std::to_string(sk_SCT_num(scts.get())) + " SCTs, not one");
  SCT* sct = sk_SCT_value(scts.get(), 0);
  if (SCT_get_version(sct) != SCT_VERSION_V1) throw Error(ErrorKind::input, "the SCT is not version 1");
  const int nid = SCT_get_signature_nid(sct);
  if (nid != NID_ecdsa_with_SHA256 && nid != NID_sha256WithRSAEncryption)
    throw Error(ErrorKind::input, "the SCT is not signed with SHA-256");
  if (chain.empty()) throw Error(ErrorKind::input, "the signing certificate has no issuer to check its SCT with");
  X509* issuer = chain[0].get();
  if (is_preissuer(issuer)) {
    if (chain.size() < 2) throw Error(ErrorKind::input, "the SCT's precertificate issuer has no issuer in the chain");
    issuer = chain[1].get();
  }
  if (X509_check_ca(issuer) <= 0) throw Error(ErrorKind::input, "the SCT's issuer is not a CA");
  const Bytes issuer_key_hash = key_id(X509_get0_pubkey(issuer));
  const Bytes data = signed_data(sct, leaf, issuer_key_hash);
  unsigned char* log_id = nullptr;
  const size_t log_id_len = SCT_get0_log_id(sct, &log_id);
  unsigned char* sig = nullptr;
  const size_t sig_len = SCT_get0_signature(sct, &sig);
  // A CT log key vouches only inside its validFor, held to the signing
  // time the verifier established from signed sources, not to the SCT's own
  // timestamp: the holder of a retired key could write any timestamp into
  // an SCT it makes (issue 38, defect 8).
  if (!verify_with_log_keys(root.ctlogs, std::span<const unsigned char>(log_id, log_id_len), std::span<const unsigned char>(sig, sig_len), data,
                            established))
    throw Error(ErrorKind::input, "the SCT's signature does not verify with a CT log key of the trusted root valid at the signing time");
}

}  // namespace kwheel::sigstore
