#include "kwheel/base/url_userinfo.hpp"

#include <optional>
#include <vector>

#include "kwheel/base/secret.hpp"

namespace kwheel {

namespace {

bool ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_slash(char c) { return c == '/' || c == '\\'; }

int hex_value(char c) {
  if (ascii_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The length of "scheme" in "scheme:" at the start of `t` (RFC 3986 3.1), or 0.
size_t scheme_length(std::string_view t) {
  if (t.empty() || !ascii_alpha(t[0])) return 0;
  size_t j = 1;
  while (j < t.size() && (ascii_alpha(t[j]) || ascii_digit(t[j]) || t[j] == '+' || t[j] == '-' || t[j] == '.')) ++j;
  return j < t.size() && t[j] == ':' ? j : 0;
}

// One way to read the text: its characters, and for each of them (and for
// its end) the offset in the text as written where it starts.
struct Reading {
  std::string text;
  std::vector<size_t> from;
};

Reading as_written(std::string_view t) {
  Reading r{std::string(t), std::vector<size_t>(t.size() + 1)};
  for (size_t i = 0; i <= t.size(); ++i) r.from[i] = i;
  return r;
}

// `r` with one level of %HH decoded; nullopt when it holds none.
std::optional<Reading> decoded(const Reading& r) {
  Reading out;
  bool any = false;
  const std::string& t = r.text;
  for (size_t i = 0; i < t.size();) {
    const int hi = t[i] == '%' && i + 2 < t.size() ? hex_value(t[i + 1]) : -1;
    const int lo = hi >= 0 ? hex_value(t[i + 2]) : -1;
    out.from.push_back(r.from[i]);
    if (lo >= 0) {
      out.text += static_cast<char>(hi * 16 + lo);
      i += 3;
      any = true;
    } else {
      out.text += t[i++];
    }
  }
  out.from.push_back(r.from[t.size()]);
  if (!any) return std::nullopt;
  return out;
}

struct Userinfo {
  size_t begin = 0, at = 0;  // [begin, at) is "user[:password]", t[at] == '@'
  size_t colon = std::string::npos;  // the first ':' of it, npos for a user alone
};

// The userinfo of `t` read as url_userinfo.hpp says, or nullopt.
std::optional<Userinfo> find_userinfo(std::string_view t) {
  size_t start = 0;
  bool authority = false;  // after "scheme:/" or "//": a user alone counts too
  if (const size_t s = scheme_length(t)) {
    size_t k = s + 1;
    while (k < t.size() && is_slash(t[k])) ++k;
    if (k > s + 1) {
      start = k;
      authority = true;
    }
  } else if (t.size() >= 2 && is_slash(t[0]) && is_slash(t[1])) {
    start = 2;
    while (start < t.size() && is_slash(t[start])) ++start;
    authority = true;
  }
  size_t end = start;
  while (end < t.size() && !is_slash(t[end])) ++end;
  if (end == start) return std::nullopt;
  const size_t at = t.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < start) return std::nullopt;
  Userinfo u{start, at, t.substr(start, at - start).find(':')};
  if (u.colon != std::string_view::npos) u.colon += start;
  if (!authority && u.colon == std::string_view::npos) return std::nullopt;
  return u;
}

// The readings of `t`: as written, then decoded once and twice.
std::vector<Reading> readings(std::string_view t) {
  std::vector<Reading> out{as_written(t)};
  for (int level = 0; level < 2; ++level) {
    auto d = decoded(out.back());
    if (!d) break;
    out.push_back(std::move(*d));
  }
  return out;
}

}  // namespace

std::string without_userinfo(std::string_view text) {
  std::string out(text);
  // Each round removes one userinfo, so a bounded number of them ends it.
  for (int round = 0; round < 8; ++round) {
    bool removed = false;
    for (const Reading& r : readings(out)) {
      if (auto u = find_userinfo(r.text)) {
        out.erase(r.from[u->begin], r.from[u->at + 1] - r.from[u->begin]);
        removed = true;
        break;
      }
    }
    if (!removed) break;
  }
  return out;
}

bool holds_userinfo(std::string_view text) { return without_userinfo(text) != text; }

void register_userinfo_password(std::string_view text) {
  for (const Reading& r : readings(text)) {
    auto u = find_userinfo(r.text);
    if (!u || u->colon == std::string::npos || u->colon + 1 >= u->at) continue;
    register_secret(Secret(r.text.substr(u->colon + 1, u->at - u->colon - 1)));
    const size_t written = r.from[u->colon + 1];
    register_secret(Secret(std::string(text.substr(written, r.from[u->at] - written))));
  }
}

std::string lower_scheme(std::string url) {
  const size_t s = scheme_length(url);
  // Only before "//": "Wheels:2024/" is a directory, not a URL.
  if (s == 0 || url.compare(s, 3, "://") != 0) return url;
  for (size_t i = 0; i < s; ++i)
    if (url[i] >= 'A' && url[i] <= 'Z') url[i] = static_cast<char>(url[i] - 'A' + 'a');
  return url;
}

}  // namespace kwheel
