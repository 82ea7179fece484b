#pragma once
// Public keys (and certificates) as the trusted root and bundles carry them (DER
// SubjectPublicKeyInfo, or PEM for --key), their RFC 6962 key ID, and one
// signature check for the three families Sigstore signs with: ECDSA
// (P-256/P-384/P-521, hash by curve or by the key's declared details),
// Ed25519 (pure, no prehash) and RSA PKCS#1 v1.5 with SHA-256.
#include <optional>
#include <span>
#include <string>

#include "kwheel/sigstore/codec.hpp"
#include "kwheel/sigstore/openssl_handles.hpp"

namespace kwheel::sigstore {

// Throws Error(input) naming `what` when the bytes are not a public key.
EvpPkeyPtr load_spki_der(std::span<const unsigned char> der, const std::string& what);
EvpPkeyPtr load_public_pem(std::string_view pem, const std::string& what);
// A whole DER certificate (nothing after it): the trusted root's CAs and
// TSAs, and a bundle's signing certificate. Error(input) naming `what`.
X509Ptr load_certificate_der(std::span<const unsigned char> der, const std::string& what);

// SHA-256 of the DER SubjectPublicKeyInfo: how Rekor and CT name a key.
Bytes key_id(EVP_PKEY* key);

// The hash an ECDSA key signs with when nothing says otherwise: SHA-256
// for P-256, SHA-384 for P-384, SHA-512 for P-521; RSA SHA-256; Ed25519 none.
const EVP_MD* default_digest(EVP_PKEY* key);

// Whether `signature` is `key`'s over `data` (hashed with `md`; nullptr for
// Ed25519). A malformed signature is simply false.
bool verify_message(EVP_PKEY* key, const EVP_MD* md, std::span<const unsigned char> signature, std::span<const unsigned char> data);

// Whether `signature` is `key`'s over an already computed `digest` (the
// prehashed ECDSA/RSA check a hashedrekord's signature is).
bool verify_prehashed(EVP_PKEY* key, const EVP_MD* md, std::span<const unsigned char> signature, std::span<const unsigned char> digest);

// "PKIX_ECDSA_P256_SHA_256" style names of the protobuf PublicKeyDetails,
// for the key in a certificate (Rekor v2's verifier.keyDetails); nullopt for
// a key Sigstore does not sign with.
std::optional<std::string> key_details(EVP_PKEY* key);

}  // namespace kwheel::sigstore
