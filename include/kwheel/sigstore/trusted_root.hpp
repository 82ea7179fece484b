#pragma once
// Sigstore's trusted root (application/vnd.dev.sigstore.trustedroot+json;
// version=0.1): the Fulcio CAs that issue signing certificates, the Rekor
// and CT logs' keys, and the timestamp authorities, each valid for a time
// range. The production and staging roots travel inside the binary
// (sigstore-data/, from sigstore-python's release).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/sigstore/codec.hpp"
#include "kwheel/sigstore/openssl_handles.hpp"

namespace kwheel::sigstore {

// A closed interval [start, end]: the conformance suite's
// trust-root-*-validity-end-inclusive cases sign exactly at `end`.
struct TimeRange {
  std::int64_t start = 0;
  std::optional<std::int64_t> end;
  bool contains(std::int64_t t) const { return start <= t && (!end || t <= *end); }
};

// A transparency log (Rekor) or CT log key.
struct LogKey {
  std::string base_url;
  Bytes log_id;   // as the root names it (Rekor v2's is the signed-note key ID)
  Bytes key_id;   // SHA-256 of the DER SubjectPublicKeyInfo, what sigstore-python looks keys up by
  EvpPkeyPtr key;
  const EVP_MD* md = nullptr;  // by the key's declared details; nullptr for Ed25519
  TimeRange valid_for;
};

// A Fulcio CA or a timestamp authority: its chain, leaf (or intermediate)
// first and root last.
struct CertificateAuthority {
  std::string uri;
  std::vector<X509Ptr> chain;
  TimeRange valid_for;
};

struct TrustedRoot {
  std::vector<LogKey> tlogs;
  std::vector<LogKey> ctlogs;
  std::vector<CertificateAuthority> certificate_authorities;
  std::vector<CertificateAuthority> timestamp_authorities;
};

// Parses and checks a trusted root; bounded (size, nesting, counts). A key
// of an unknown or unsupported type is left out, as sigstore-python leaves
// it out of its keyring; a malformed one (bad base64, a validFor without
// start) makes the whole root invalid. Throws Error(input) naming `what`.
TrustedRoot parse_trusted_root(std::string_view json, const std::string& what);

// The public-good instance's root (production, or staging), as shipped in
// sigstore-data/.
TrustedRoot embedded_trusted_root(bool staging);

// Checks `signature` over `data` with the log key `log_id` names (by the
// SHA-256 of its SubjectPublicKeyInfo); when none matches, every key of
// `keys` is tried, as sigstore-python's Keyring does. A key is a candidate
// only when its validFor holds every time of `valid_at`: the verifier
// passes the established (signed) times, so a key the root retired before
// the signing, or had not yet started, vouches for nothing (sigstore-go's
// rule; sigstore-python only drops keys not yet valid now). Returns
// whether one verified.
bool verify_with_log_keys(const std::vector<LogKey>& keys, std::span<const unsigned char> log_id,
                          std::span<const unsigned char> signature, std::span<const unsigned char> data,
                          std::span<const std::int64_t> valid_at);

}  // namespace kwheel::sigstore
