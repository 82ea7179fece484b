#include "kwheel/sigstore/public_key.hpp"

#include <openssl/core_names.h>
#include <openssl/pem.h>

#include "kwheel/base/error.hpp"

namespace kwheel::sigstore {

namespace {

std::string curve_of(EVP_PKEY* key) {
  char name[64] = {};
  size_t len = 0;
  if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, name, sizeof name, &len) != 1) return {};
  return name;
}

}  // namespace

EvpPkeyPtr load_spki_der(std::span<const unsigned char> der, const std::string& what) {
  const unsigned char* p = der.data();
  EvpPkeyPtr key(d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size())));
  if (!key || p != der.data() + der.size()) {
    openssl_error();
    throw Error(ErrorKind::input, what + " is not a DER public key");
  }
  return key;
}

X509Ptr load_certificate_der(std::span<const unsigned char> der, const std::string& what) {
  const unsigned char* p = der.data();
  X509Ptr cert(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
  if (!cert || p != der.data() + der.size()) {
    openssl_error();
    throw Error(ErrorKind::input, what + " is not a DER certificate");
  }
  return cert;
}

EvpPkeyPtr load_public_pem(std::string_view pem, const std::string& what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  EvpPkeyPtr key(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!key) {
    openssl_error();
    throw Error(ErrorKind::input, what + " is not a PEM public key");
  }
  return key;
}

Bytes key_id(EVP_PKEY* key) {
  unsigned char* der = nullptr;
  const int len = i2d_PUBKEY(key, &der);
  if (len <= 0) throw std::runtime_error("OpenSSL: cannot encode a public key");
  Bytes id = sha256(std::span<const unsigned char>(der, static_cast<size_t>(len)));
  OPENSSL_free(der);
  return id;
}

const EVP_MD* default_digest(EVP_PKEY* key) {
  if (EVP_PKEY_is_a(key, "ED25519")) return nullptr;
  if (EVP_PKEY_is_a(key, "EC")) {
    const std::string curve = curve_of(key);
    if (curve == "secp384r1" || curve == "P-384") return EVP_sha384();
    if (curve == "secp521r1" || curve == "P-521") return EVP_sha512();
  }
  return EVP_sha256();
}

bool verify_message(EVP_PKEY* key, const EVP_MD* md, std::span<const unsigned char> signature, std::span<const unsigned char> data) {
  EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  const bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key) == 1 &&
                  EVP_DigestVerify(ctx.get(), signature.data(), signature.size(), data.data(), data.size()) == 1;
  if (!ok) openssl_error();
  return ok;
}

bool verify_prehashed(EVP_PKEY* key, const EVP_MD* md, std::span<const unsigned char> signature, std::span<const unsigned char> digest) {
  if (EVP_PKEY_is_a(key, "ED25519")) return false;  // Ed25519 signs messages, never digests
  EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new(key, nullptr));
  const bool ok = ctx && EVP_PKEY_verify_init(ctx.get()) == 1 && EVP_PKEY_CTX_set_signature_md(ctx.get(), md) == 1 &&
                  EVP_PKEY_verify(ctx.get(), signature.data(), signature.size(), digest.data(), digest.size()) == 1;
  if (!ok) openssl_error();
  return ok;
}

std::optional<std::string> key_details(EVP_PKEY* key) {
  if (EVP_PKEY_is_a(key, "ED25519")) return "PKIX_ED25519";
  if (EVP_PKEY_is_a(key, "EC")) {
    const std::string curve = curve_of(key);
    if (curve == "prime256v1" || curve == "P-256") return "PKIX_ECDSA_P256_SHA_256";
    if (curve == "secp384r1" || curve == "P-384") return "PKIX_ECDSA_P384_SHA_384";
    if (curve == "secp521r1" || curve == "P-521") return "PKIX_ECDSA_P521_SHA_512";
    return std::nullopt;
  }
  if (EVP_PKEY_is_a(key, "RSA")) {
    const int bits = EVP_PKEY_get_bits(key);
    if (bits == 2048 || bits == 3072 || bits == 4096) return "PKIX_RSA_PKCS1V15_" + std::to_string(bits) + "_SHA256";
  }
  return std::nullopt;
}

}  // namespace kwheel::sigstore
