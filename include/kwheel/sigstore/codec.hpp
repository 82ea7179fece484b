#pragma once
// The encodings Sigstore's JSON uses: standard base64 for bytes, RFC 3339
// for times (kept as seconds since the epoch, UTC), and SHA-256.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel::sigstore {

using Bytes = std::vector<unsigned char>;

// RFC 4648 section 4 base64, '=' padding optional (protobuf's JSON writes
// it, some producers strip it), line breaks skipped. Anything else (spaces, the URL-safe
// alphabet, bits left over) throws Error(input, "<what> is not valid base64").
Bytes decode_base64(std::string_view text, const std::string& what);

// "2023-07-12T15:56:36Z" or with fractional seconds or a +hh:mm offset:
// seconds since the epoch (fractions dropped). Throws Error(input) naming `what`.
std::int64_t parse_rfc3339(std::string_view text, const std::string& what);
// The reverse, always "YYYY-MM-DDTHH:MM:SSZ": how errors and reports show a time.
std::string format_rfc3339(std::int64_t seconds);

Bytes sha256(std::span<const unsigned char> data);
Bytes sha256(std::string_view data);

inline std::string_view as_text(std::span<const unsigned char> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace kwheel::sigstore
