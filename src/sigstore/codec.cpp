#include "kwheel/sigstore/codec.hpp"

#include <ctime>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"

namespace kwheel::sigstore {

namespace {

int codec_b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

int codec_digits(std::string_view s, size_t at, size_t n) {
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

Bytes decode_base64(std::string_view input, const std::string& what) {
  auto bad = [&] { return Error(ErrorKind::input, what + " is not valid base64"); };
  // Line breaks are MIME's wrapping (`base64` wraps at 76 columns, and the
  // conformance suite's bundles were edited with it); they carry no data.
  std::string unwrapped;
  if (input.find_first_of("\r\n") != std::string_view::npos)
    for (char c : input)
      if (c != '\r' && c != '\n') unwrapped += c;
  std::string_view text = unwrapped.empty() ? input : std::string_view(unwrapped);
  // Padding only completes a final quantum: "QQ==" or "QQ", never "QQ=".
  if (text.size() % 4 == 0)
    for (int i = 0; i < 2 && !text.empty() && text.back() == '='; ++i) text.remove_suffix(1);
  if (text.size() % 4 == 1) throw bad();
  Bytes out;
  out.reserve(text.size() / 4 * 3 + 2);
  unsigned acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = codec_b64_value(c);
    if (v < 0) throw bad();
    acc = (acc << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((acc >> bits) & 0xff));
    }
  }
  // Leftover bits must be zero: otherwise two spellings decode alike.
  if (bits && (acc & ((1u << bits) - 1))) throw bad();
  return out;
}

std::int64_t parse_rfc3339(std::string_view s, const std::string& what) {
  auto bad = [&] { return Error(ErrorKind::input, what + " is not an RFC 3339 time: '" + std::string(s.substr(0, 64)) + "'"); };
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':') throw bad();
  std::tm tm{};
  tm.tm_year = codec_digits(s, 0, 4) - 1900;
  tm.tm_mon = codec_digits(s, 5, 2) - 1;
  tm.tm_mday = codec_digits(s, 8, 2);
  tm.tm_hour = codec_digits(s, 11, 2);
  tm.tm_min = codec_digits(s, 14, 2);
  tm.tm_sec = codec_digits(s, 17, 2);
  if (tm.tm_year < 0 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour < 0 ||
      tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 || tm.tm_sec > 60)
    throw bad();
  size_t at = 19;
  if (at < s.size() && s[at] == '.') {
    ++at;
    const size_t digits = at;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
    if (at == digits || at - digits > 9) throw bad();
  }
  std::int64_t offset = 0;
  const std::string_view zone = s.substr(at);
  if (zone == "Z" || zone == "z") {
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    const int h = codec_digits(zone, 1, 2), m = codec_digits(zone, 4, 2);
    if (h < 0 || h > 23 || m < 0 || m > 59) throw bad();
    offset = (zone[0] == '+' ? 1 : -1) * (h * 3600 + m * 60);
  } else {
    throw bad();
  }
  return static_cast<std::int64_t>(timegm(&tm)) - offset;
}

std::string format_rfc3339(std::int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Bytes sha256(std::span<const unsigned char> data) { return sha256(as_text(data)); }

Bytes sha256(std::string_view data) {
  Hasher h(DigestAlgorithm::sha256);
  h.update(data);
  return h.finish();
}

}  // namespace kwheel::sigstore
