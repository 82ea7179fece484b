#include "kwheel/hub/url.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string_view>

#include "kwheel/base/error.hpp"
#include "kwheel/hub/curl_handles.hpp"
#include "kwheel/base/secret.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/base/url_userinfo.hpp"

namespace kwheel {

namespace {

using curl::Url;
using CurlStr = curl::String;

}  // namespace

std::string display_url(const std::string& url) { return redact_secrets(without_userinfo(url)); }

void register_url_credentials(const std::string& url) { register_userinfo_password(url); }

std::string url_origin(const std::string& url) {
  Url u(curl::library().url());
  // NON_SUPPORT_SCHEME: which schemes parse must not depend on the protocols
  // a libcurl was built with (the release build's has HTTP and HTTPS only);
  // whether kwheel follows a scheme is decided after parsing.
  if (!u || curl::library().url_set(u.get(), CURLUPART_URL, url.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) return {};
  char *scheme = nullptr, *host = nullptr, *port = nullptr;
  curl::library().url_get(u.get(), CURLUPART_SCHEME, &scheme, 0);
  curl::library().url_get(u.get(), CURLUPART_HOST, &host, 0);
  curl::library().url_get(u.get(), CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
  CurlStr s(scheme), h(host), p(port);
  if (!s || !h) return {};
  return ascii_lower(s.get()) + "://" + ascii_lower(h.get()) + ":" + (p ? p.get() : "");
}

std::string resolve_url(const std::string& base, const std::string& location) {
  Url u(curl::library().url());
  if (!u || curl::library().url_set(u.get(), CURLUPART_URL, base.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
      curl::library().url_set(u.get(), CURLUPART_URL, location.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK)
    throw Error(ErrorKind::network, "cannot follow redirect from " + display_url(base) + " to '" + display_url(location) + "'");
  char* out = nullptr;
  curl::library().url_get(u.get(), CURLUPART_URL, &out, 0);
  CurlStr o(out);
  std::string r = o ? o.get() : "";
  if (!r.starts_with("http://") && !r.starts_with("https://"))
    throw Error(ErrorKind::network, "refusing redirect from " + display_url(base) + " to non-HTTP URL '" + display_url(location) + "'");
  return r;
}

std::optional<std::string> link_next(const std::string& header) {
  // What regex_search of <([^>]*)>\s*;\s*rel\s*=\s*"?next"? finds (as
  // huggingface_hub reads the header), by hand: std::regex recurses once per
  // character and overflows the stack on a long header (curl passes up to
  // 100 KiB). Linear: every '<' before one '>' shares that '>'.
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; };
  auto rel_next_at = [&](size_t i) {  // \s*;\s*rel\s*=\s*"?next"? at i
    auto skip = [&] {
      while (i < header.size() && space(header[i])) ++i;
    };
    auto take = [&](std::string_view word) {
      if (header.compare(i, word.size(), word) != 0) return false;
      i += word.size();
      return true;
    };
    skip();
    if (!take(";")) return false;
    skip();
    if (!take("rel")) return false;
    skip();
    if (!take("=")) return false;
    skip();
    take("\"");
    return take("next");
  };
  size_t close = std::string::npos;
  bool close_ok = false;
  for (size_t open = header.find('<'); open != std::string::npos; open = header.find('<', open + 1)) {
    if (close == std::string::npos || close < open) {
      close = header.find('>', open + 1);
      if (close == std::string::npos) return std::nullopt;
      close_ok = rel_next_at(close + 1);
    }
    if (close_ok) return header.substr(open + 1, close - open - 1);
  }
  return std::nullopt;
}

std::string encode_component(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string encode_path(const std::string& path) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    out += encode_component(path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    out += '/';
    start = slash + 1;
  }
  return out;
}

}  // namespace kwheel
