#pragma once
// How a child tool (uv, pip) reaches the indexes kwheel hands it: the CA
// file, the client certificate and the index credentials that kwheel's
// connection settings found (hub/connection: --cert, --client-cert, URL
// userinfo, netrc, keyring). Those settings are decided once, there; uv and
// pip get them from here, so `pin` and `validate` do not read a variable or
// a netrc of their own.
//
// Credentials reach a child only through its environment (an index URL
// with userinfo in UV_DEFAULT_INDEX / PIP_INDEX_URL), never its argv, which
// other users can read in /proc.
#include <map>
#include <optional>
#include <string>

#include "kwheel/base/secret.hpp"

namespace kwheel {

struct IndexLogin {
  std::string username;
  Secret password;
};

struct ChildToolAccess {
  std::optional<std::string> ca_file;      // PEM bundle to trust instead of the system's
  std::optional<std::string> client_cert;  // PEM holding the client certificate and its key
  // By index URL as the user wrote it without userinfo (e.g.
  // "https://pypi.example.com/simple/"); the login for that index.
  std::map<std::string, IndexLogin> logins;
};

// The login for `url` (no userinfo in it), or nullptr.
const IndexLogin* login_for(const ChildToolAccess& access, const std::string& url);

// `url` with the login's userinfo, percent-encoded; for a child's
// environment only (the Secret is registered, so errors redact it).
std::string url_with_login(const std::string& url, const IndexLogin& login);

// Whether `url` carries userinfo ("scheme://user[:pass]@host"): such a URL
// must not be written into a file kwheel writes.
bool has_userinfo(const std::string& url);

}  // namespace kwheel
