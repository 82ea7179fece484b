#pragma once
// RFC 3161 signed timestamps from a timestamp authority (TSA): a bundle may
// carry some to prove when its signature existed, which Rekor v2 entries
// need (they have no integrated time). Verified with OpenSSL's TS API
// against the TSAs of the trusted root.
#include <cstdint>
#include <span>
#include <vector>

#include "kwheel/sigstore/codec.hpp"
#include "kwheel/sigstore/trusted_root.hpp"

namespace kwheel::sigstore {

constexpr size_t kMaxTimestamps = 32;  // sigstore-python's MAX_ALLOWED_TIMESTAMP

// The genTime of every response that a TSA of `root` signed over
// `signature` (the bundle's signature bytes) with the signing certificate
// the root lists for it (its certChain's first), that certificate's chain
// valid at that time and the time inside the TSA's validFor. A response no TSA vouches
// for is left out, as in sigstore-python (the caller decides whether enough
// remain). Throws Error(input) for more than 32 responses, a duplicate, or
// a response that is not DER.
std::vector<std::int64_t> verify_timestamps(const std::vector<Bytes>& responses, std::span<const unsigned char> signature,
                                            const TrustedRoot& root, std::int64_t now);

// The genTime of one response, unverified. Throws Error(input).
std::int64_t timestamp_gen_time(std::span<const unsigned char> response);

}  // namespace kwheel::sigstore
