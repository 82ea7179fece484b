#include "kwheel/hub/child_tool_access.hpp"

#include "kwheel/hub/url.hpp"

namespace kwheel {

namespace {

// "scheme://" end, and the authority's end (the first '/', '?' or '#').
std::pair<size_t, size_t> authority_span(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return {std::string::npos, std::string::npos};
  const size_t start = scheme + 3;
  const size_t end = url.find_first_of("/?#", start);
  return {start, end == std::string::npos ? url.size() : end};
}

}  // namespace

const IndexLogin* login_for(const ChildToolAccess& access, const std::string& url) {
  auto it = access.logins.find(url);
  // "…/simple" and "…/simple/" are one index to pip and uv.
  if (it == access.logins.end()) it = access.logins.find(url.ends_with("/") ? url.substr(0, url.size() - 1) : url + "/");
  return it == access.logins.end() ? nullptr : &it->second;
}

std::string url_with_login(const std::string& url, const IndexLogin& login) {
  const auto [start, end] = authority_span(url);
  if (start == std::string::npos) return url;
  register_secret(login.password);
  const std::string userinfo = encode_component(login.username) + (login.password.empty() ? "" : ":" + encode_component(login.password.reveal()));
  register_secret_form(userinfo);
  return url.substr(0, start) + userinfo + "@" + url.substr(start);
}

bool has_userinfo(const std::string& url) {
  const auto [start, end] = authority_span(url);
  return start != std::string::npos && url.find('@', start) < end;
}

}  // namespace kwheel
