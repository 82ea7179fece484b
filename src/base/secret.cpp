#include "kwheel/base/secret.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace kwheel {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte two hex digits at t[i] stand for, or -1.
int hex_byte(std::string_view t, size_t i) {
  if (i + 2 > t.size()) return -1;
  const int hi = hex_value(t[i]), lo = hex_value(t[i + 1]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// How many characters at t[i] spell byte c in one of the encodings a secret
// comes back in (literal, '+' for a space, %HH and %25HH in any case, JSON
// \" \\ \/ \uHHHH, printable()'s \xHH), or 0.
size_t spelled_at(std::string_view t, size_t i, unsigned char c) {
  if (i >= t.size()) return 0;
  const char x = t[i];
  if (static_cast<unsigned char>(x) == c) return 1;
  if (x == '+' && c == ' ') return 1;
  if (x == '%') {
    if (hex_byte(t, i + 1) == c) return 3;
    if (t.substr(i + 1, 2) == "25" && hex_byte(t, i + 3) == c) return 5;
    return 0;
  }
  if (x != '\\' || i + 1 >= t.size()) return 0;
  const char n = t[i + 1];
  if (n == static_cast<char>(c) && (c == '"' || c == '\\' || c == '/')) return 2;
  if (n == 'x' && hex_byte(t, i + 2) == c) return 4;
  if (n == 'u' && t.substr(i + 2, 2) == "00" && hex_byte(t, i + 4) == c) return 6;
  return 0;
}

// Length of the spelling of `secret` that starts at t[i], or 0.
size_t secret_at(std::string_view t, size_t i, std::string_view secret) {
  size_t at = i;
  for (unsigned char c : secret) {
    const size_t n = spelled_at(t, at, c);
    if (n == 0) return 0;
    at += n;
  }
  return at - i;
}

void redact_form(std::string& text, std::string_view form) {
  if (form.empty()) return;
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = secret_at(text, i, form);
    if (n == 0) {
      ++i;
      continue;
    }
    out.append(text, copied, i - copied);
    out += "***";
    i += n;
    copied = i;
  }
  if (copied == 0) return;
  out.append(text, copied, std::string::npos);
  text = std::move(out);
}

std::string base64(std::string_view bytes, bool url) {
  const char* alphabet = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                             : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += alphabet[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += alphabet[(acc << (6 - bits)) & 63];
  return out;
}

// What base64 makes of the secret wherever it sits in the encoded data:
// for each of the three alignments, the characters that depend on the
// secret's bytes alone (so "Basic base64(user:secret)" and a token inside
// any longer base64 blob are both caught). Short cores are left out: they
// would match unrelated text.
std::vector<std::string> base64_cores(const std::string& secret) {
  std::vector<std::string> cores;
  for (size_t k = 0; k < 3; ++k) {
    const std::string data = std::string(k, '\0') + secret;
    const size_t first = (8 * k + 5) / 6, end = 8 * data.size() / 6;
    for (bool url : {false, true}) {
      const std::string b = base64(data, url);
      if (end > first && end - first >= 6) cores.push_back(b.substr(first, end - first));
    }
  }
  return cores;
}

// Every form of a secret, longest first so a whole match wins over a part.
std::vector<std::string> forms_of(const std::string& secret) {
  std::vector<std::string> forms = base64_cores(secret);
  forms.push_back(secret);
  return forms;
}

struct Registry {
  std::mutex mutex;
  std::vector<std::string> forms;  // longest first
};

Registry& registry() {
  static Registry r;
  return r;
}

void add_forms(std::vector<std::string> more) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (auto& f : more)
    if (!f.empty() && std::find(r.forms.begin(), r.forms.end(), f) == r.forms.end()) r.forms.push_back(std::move(f));
  std::stable_sort(r.forms.begin(), r.forms.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

}  // namespace

std::string Secret::redact(std::string text) const {
  // Registered forms first: a whole "Basic" credential must go before this
  // secret's own base64 core breaks it up and leaves the user's part.
  text = redact_secrets(std::move(text));
  if (value_.empty()) return text;
  for (const auto& f : forms_of(value_)) redact_form(text, f);
  return text;
}

void register_secret(const Secret& secret) {
  if (!secret.empty()) add_forms(forms_of(secret.reveal()));
}

void register_secret_form(const std::string& form) { add_forms({form}); }

std::string redact_secrets(std::string text) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& f : r.forms) redact_form(text, f);
  return text;
}

namespace {

// Whole lines only: a secret written in two pieces is then seen whole.
std::size_t through_last_newline(std::string_view waiting) {
  const std::size_t end = waiting.rfind('\n');
  return end == std::string_view::npos ? 0 : end + 1;
}

}  // namespace

RedactingStreambuf::RedactingStreambuf(std::streambuf* target)
    : FilterStreambuf(target, through_last_newline, redact_secrets) {}

}  // namespace kwheel
