#pragma once
// A Sigstore bundle (protobuf-specs' Bundle in its JSON form), media types
// v0.1, v0.2 and v0.3 (both spellings of v0.3), parsed into typed fields
// and checked for the invariants sigstore-python's Bundle._verify holds
// before any cryptography: the leaf certificate is there, exactly one log
// entry of a known version, an inclusion proof with its checkpoint, and an
// inclusion promise or signed timestamps to establish time with.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/sigstore/codec.hpp"
#include "kwheel/sigstore/openssl_handles.hpp"

namespace kwheel::sigstore {

enum class BundleVersion { v0_1, v0_2, v0_3 };

struct InclusionProof {
  std::uint64_t log_index = 0;
  Bytes root_hash;
  std::uint64_t tree_size = 0;
  std::vector<Bytes> hashes;
  std::string checkpoint;  // the signed note's text
};

struct TlogEntry {
  std::uint64_t log_index = 0;
  Bytes log_id;
  std::string kind;     // "hashedrekord", "dsse", ...
  std::string version;  // "0.0.1" (Rekor v1) or "0.0.2" (Rekor v2)
  std::optional<std::int64_t> integrated_time;  // Rekor v1 only; 0 in the JSON means none
  std::optional<Bytes> signed_entry_timestamp;  // the inclusion promise (SET)
  InclusionProof inclusion_proof;
  Bytes canonicalized_body;  // the entry as the log hashed it
};

struct MessageSignature {
  std::optional<Bytes> sha256;  // messageDigest, when the bundle names it
  Bytes signature;
};

struct Bundle {
  std::string media_type;
  BundleVersion version = BundleVersion::v0_3;
  X509Ptr certificate;                // the signing (leaf) certificate
  std::vector<X509Ptr> chain;         // v0.1/v0.2 certificates after the leaf (never trusted)
  TlogEntry entry;
  std::vector<Bytes> timestamps;      // RFC 3161 responses, DER
  std::optional<MessageSignature> message_signature;
  bool dsse = false;                  // a DSSE envelope instead of a message signature
};

// Throws Error(input) "<what> <why>" when the bundle is malformed, with
// Reason::unsupported_bundle for a well-formed bundle kwheel does not
// verify yet (a DSSE envelope, a managed key). Bounded: 16 MiB, nesting 32, 200,000
// values, 64 proof hashes.
Bundle parse_bundle(std::string_view json, const std::string& what);

std::string_view to_string(BundleVersion v);

}  // namespace kwheel::sigstore
