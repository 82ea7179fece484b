#include "kwheel/base/text.hpp"

#include <cctype>
#include <cstdio>

namespace kwheel {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = text.find(separator, start);
    out.emplace_back(text.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

namespace {

// Length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no
// overlongs, no surrogates, nothing above U+10FFFF), or 0.
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf;  // bounds of the second byte
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  return n;
}

// How many bytes of `text` at `i` printable() passes as one character: 0
// for a control (C0, DEL, C1) or a byte that does not start valid UTF-8.
size_t printable_length(std::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  size_t n = (c < 0x20 || c == 0x7f) ? 0 : utf8_length(text, i);
  if (n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f) n = 0;  // C1 controls
  return n;
}

}  // namespace

size_t utf8_length_at(std::string_view text, size_t i) { return utf8_length(text, i); }

bool valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

size_t unprintable_at(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = printable_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = printable_length(text, i);
    if (n == 0) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

namespace {

void put_escaped(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

bool is_c1_continuation(unsigned char c) { return c >= 0x80 && c <= 0x9f; }

// A trailing 0xC2 waits: the byte after it decides whether the pair is a
// C1 control (U+0080..U+009F). At a flush too, so a character is never
// split; at the end it passes as it is.
std::size_t control_ready(std::string_view waiting) {
  const bool c2_last = !waiting.empty() && static_cast<unsigned char>(waiting.back()) == 0xc2;
  return waiting.size() - (c2_last ? 1 : 0);
}

std::string escape_controls(std::string chunk) {
  std::string out;
  out.reserve(chunk.size());
  for (std::size_t i = 0; i < chunk.size(); ++i) {
    const auto c = static_cast<unsigned char>(chunk[i]);
    if (c == 0xc2 && i + 1 < chunk.size() && is_c1_continuation(static_cast<unsigned char>(chunk[i + 1]))) {
      put_escaped(out, c);
      put_escaped(out, static_cast<unsigned char>(chunk[++i]));
    } else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      put_escaped(out, c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

ControlEscapingStreambuf::ControlEscapingStreambuf(std::streambuf* target)
    : FilterStreambuf(target, control_ready, escape_controls) {}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& i : items) {
    if (!out.empty()) out += separator;
    out += i;
  }
  return out;
}

std::string hex_offset(std::uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string trim(std::string_view text) {
  constexpr std::string_view space = " \t\n\v\f\r";
  const size_t a = text.find_first_not_of(space);
  if (a == std::string_view::npos) return {};
  return std::string(text.substr(a, text.find_last_not_of(space) - a + 1));
}

std::string last_line(std::string_view text) {
  const size_t end = text.find_last_not_of("\r\n");
  if (end == std::string_view::npos) return {};
  const size_t nl = text.rfind('\n', end);
  const size_t start = nl == std::string_view::npos ? 0 : nl + 1;
  return std::string(text.substr(start, end - start + 1));
}

std::string last_lines(std::string_view text, size_t lines) {
  std::vector<std::string> kept;
  size_t end = text.size();
  while (kept.size() < lines && end > 0) {
    const size_t nl = text.rfind('\n', end - 1);
    const size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    std::string line(text.substr(start, end - start));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) kept.push_back(std::move(line));
    if (nl == std::string_view::npos) break;
    end = nl;
  }
  return join({kept.rbegin(), kept.rend()}, " | ");
}

std::string percent_decode(std::string_view s) {
  auto hex = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(static_cast<unsigned char>(c)) - 'a' + 10); };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) && std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace kwheel
