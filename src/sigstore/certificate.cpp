#include "kwheel/sigstore/certificate.hpp"

#include <openssl/x509v3.h>

#include "kwheel/base/error.hpp"
#include "kwheel/sigstore/codec.hpp"

namespace kwheel::sigstore {

namespace {

std::int64_t asn1_seconds(const ASN1_TIME* t) {
  std::tm tm{};
  if (!t || ASN1_TIME_to_tm(t, &tm) != 1) throw Error(ErrorKind::input, "a certificate holds a malformed time");
  return static_cast<std::int64_t>(timegm(&tm));
}

std::string asn1_text(const ASN1_STRING* s) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), static_cast<size_t>(ASN1_STRING_length(s)));
}

// The value of extension `oid` (dotted), raw, or nullopt when absent.
std::optional<std::string> raw_extension(X509* cert, const char* oid) {
  ASN1_OBJECT* obj = OBJ_txt2obj(oid, 1);
  if (!obj) throw std::runtime_error("OpenSSL: cannot make an OID");
  const int at = X509_get_ext_by_OBJ(cert, obj, -1);
  ASN1_OBJECT_free(obj);
  if (at < 0) return std::nullopt;
  return asn1_text(X509_EXTENSION_get_data(X509_get_ext(cert, at)));
}

// Fulcio's newer extensions hold a DER UTF8String.
std::optional<std::string> utf8_extension(X509* cert, const char* oid) {
  auto raw = raw_extension(cert, oid);
  if (!raw) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(raw->data());
  ASN1_UTF8STRING* s = d2i_ASN1_UTF8STRING(nullptr, &p, static_cast<long>(raw->size()));
  if (!s || p != reinterpret_cast<const unsigned char*>(raw->data()) + raw->size()) {
    ASN1_UTF8STRING_free(s);
    openssl_error();
    throw Error(ErrorKind::input, std::string("the certificate's extension ") + oid + " is not a DER UTF8String");
  }
  std::string text = asn1_text(s);
  ASN1_UTF8STRING_free(s);
  return text;
}

void collect_sans(X509* cert, std::vector<std::string>& out) {
  GeneralNamesPtr names(static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return;
  const std::unique_ptr<ASN1_OBJECT, OpensslFree<ASN1_OBJECT, ASN1_OBJECT_free>> othername(OBJ_txt2obj("1.3.6.1.4.1.57264.1.7", 1));
  const ASN1_OBJECT* fulcio_othername = othername.get();
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names.get(), i);
    if (n->type == GEN_EMAIL || n->type == GEN_URI) {
      out.push_back(asn1_text(n->d.ia5));
    } else if (n->type == GEN_OTHERNAME && OBJ_cmp(n->d.otherName->type_id, fulcio_othername) == 0 &&
               n->d.otherName->value->type == V_ASN1_UTF8STRING) {
      out.push_back(asn1_text(n->d.otherName->value->value.utf8string));
    }
  }
}

}  // namespace

std::vector<X509Ptr> verify_chain_at(X509* leaf, const TrustedRoot& root, std::int64_t time) {
  // The signing certificate is an end entity on every bundle path (v0.1,
  // v0.2 and v0.3 alike): a CA in the leaf's place could issue further
  // "signing" certificates of its own (issue 38, defect 7). OpenSSL's chain
  // check without a purpose does not look at the leaf at all, and
  // X509_check_ca alone calls a cA=TRUE certificate without keyCertSign "not
  // a CA"; sigstore-python refuses either flag (cert_is_ca, and
  // cryptography's end-entity profile).
  const bool ca_flag = (X509_get_extension_flags(leaf) & EXFLAG_CA) != 0;
  const std::uint32_t ku = X509_get_key_usage(leaf);
  const bool cert_sign = ku != UINT32_MAX && (ku & KU_KEY_CERT_SIGN) != 0;
  if (ca_flag || cert_sign || X509_check_ca(leaf) > 0)
    throw Error(ErrorKind::input, std::string("the signing certificate is a CA certificate (") +
                                      (ca_flag ? "basicConstraints cA=TRUE" : cert_sign ? "keyUsage keyCertSign" : "OpenSSL's CA rules") +
                                      "), not an end entity");
  X509StorePtr store(X509_STORE_new());
  if (!store) throw std::runtime_error("OpenSSL: cannot make a certificate store");
  // Only the authorities whose validFor holds `time` anchor a chain then:
  // the trusted root retires a Fulcio CA by ending its validFor, and a
  // certificate it issued after that is not Fulcio's (issue 38, defect 8).
  bool any = false;
  for (const auto& ca : root.certificate_authorities) {
    if (!ca.valid_for.contains(time)) continue;
    any = true;
    for (const auto& cert : ca.chain) X509_STORE_add_cert(store.get(), cert.get());
  }
  openssl_error();  // a certificate listed twice is not an error worth keeping
  if (!any) throw Error(ErrorKind::input, "no certificate authority of the trusted root is valid at " + format_rfc3339(time));
  X509StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), leaf, nullptr) != 1)
    throw std::runtime_error("OpenSSL: cannot start a chain verification");
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(time));
  // Any Fulcio certificate anchors the chain, intermediates included: the
  // trusted root lists them as trusted, not as hints.
  X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_PARTIAL_CHAIN);
  if (X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    openssl_error();
    throw Error(ErrorKind::input, "the certificate chain does not verify at " + format_rfc3339(time) + " (" +
                                      X509_verify_cert_error_string(err) + ")");
  }
  std::vector<X509Ptr> chain;
  STACK_OF(X509)* built = X509_STORE_CTX_get0_chain(ctx.get());
  for (int i = 1; i < sk_X509_num(built); ++i) chain.push_back(share(sk_X509_value(built, i)));
  return chain;
}

void check_code_signing_usage(X509* cert) {
  const uint32_t ku = X509_get_key_usage(cert);
  if (ku == UINT32_MAX || !(ku & KU_DIGITAL_SIGNATURE))
    throw Error(ErrorKind::input, "the signing certificate's key usage lacks digitalSignature");
  const uint32_t eku = X509_get_extended_key_usage(cert);
  if (eku == UINT32_MAX || !(eku & XKU_CODE_SIGN))
    throw Error(ErrorKind::input, "the signing certificate's extended key usage lacks codeSigning");
}

CertificateIdentity certificate_identity(X509* cert) {
  CertificateIdentity id;
  collect_sans(cert, id.sans);
  id.issuer_v1 = raw_extension(cert, "1.3.6.1.4.1.57264.1.1");
  id.issuer_v2 = utf8_extension(cert, "1.3.6.1.4.1.57264.1.8");
  id.build_signer_uri = utf8_extension(cert, "1.3.6.1.4.1.57264.1.9");
  id.source_repository_uri = utf8_extension(cert, "1.3.6.1.4.1.57264.1.12");
  return id;
}

std::int64_t not_before(X509* cert) { return asn1_seconds(X509_get0_notBefore(cert)); }
std::int64_t not_after(X509* cert) { return asn1_seconds(X509_get0_notAfter(cert)); }

}  // namespace kwheel::sigstore
