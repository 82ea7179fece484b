#pragma once
// One way to reach any server, for every command that talks to a Hub or a
// package index: which CA bundle and client certificate TLS uses, and which
// credentials an index read sends, found as pip finds them.
//
// TLS, first given wins:
//   1. the command's own flag (--cert FILE; --ca-bundle on the Hub commands),
//      and what the command adds after it (publish: TWINE_CERT, then the
//      .pypirc section's ca_cert);
//   2. KWHEEL_CA_BUNDLE: kwheel's own, so it can differ from the rest;
//   3. SSL_CERT_FILE: what huggingface_hub 2.4 and kernels 0.17.2 (httpx2,
//      httpcore2's default_ssl_context), uv and OpenSSL itself read;
//   4. REQUESTS_CA_BUNDLE, then PIP_CERT: requests' and pip's (pip 26 lets
//      REQUESTS_CA_BUNDLE override its --cert/PIP_CERT, so it comes first);
//   5. the system CAs.
// A client certificate (one PEM file with the certificate and its key, as
// pip's --client-cert takes it): the flag, what the command adds (publish:
// TWINE_CLIENT_CERT, .pypirc client_cert), then SSL_CLIENT_CERT (uv's),
// then PIP_CLIENT_CERT.
//
// Credentials for an index, pip's order: the URL's user:password@, then
// the netrc file (netrc.hpp), then, when the index answers 401 to
// credentials that did not come from the URL, the keyring program
// (keyring.hpp). They go to the index's origin only, and the URL kwheel
// writes or prints never carries them.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/base/process.hpp"
#include "kwheel/base/secret.hpp"
#include "kwheel/hub/child_tool_access.hpp"
#include "kwheel/hub/http.hpp"
#include "kwheel/hub/keyring.hpp"
#include "kwheel/hub/transport.hpp"

namespace kwheel {

// A path and where it came from ("--cert", "TWINE_CERT", "SSL_CERT_FILE").
struct NamedPath {
  std::string from;
  std::string path;
};

// Read after the command's own sources, in this order.
inline constexpr const char* kCaVariables[] = {"KWHEEL_CA_BUNDLE", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"};
inline constexpr const char* kClientCertVariables[] = {"SSL_CLIENT_CERT", "PIP_CLIENT_CERT"};

struct TlsSettings {
  std::string ca_bundle;         // empty: the system CAs
  std::string ca_from = "system";  // the source of ca_bundle: a flag, a variable, or "system"
  std::string client_cert;       // empty: none
  std::string client_cert_from;  // its source, when set
};

// What a command was given before the variables, most important first: its
// flag, then its own extra sources; an entry with an empty path is not given.
struct TlsSources {
  std::vector<NamedPath> ca;
  std::vector<NamedPath> client_cert;
};

// The flags every command that reaches a server takes (src/cli adds them
// in one place).
struct TlsFlags {
  std::optional<std::string> cert;         // --cert FILE
  std::optional<std::string> ca_bundle;    // --ca-bundle FILE: the Hub commands' older name for --cert
  std::optional<std::string> client_cert;  // --client-cert FILE
};

// The flags first, then `ca_after` and `client_cert_after` (a command's own
// sources, e.g. publish's TWINE_CERT). Both --cert and --ca-bundle given is
// an Error(usage): they are one option.
TlsSources tls_sources(const TlsFlags& flags, std::vector<NamedPath> ca_after = {}, std::vector<NamedPath> client_cert_after = {});

// The first source given, then the variables; a path that is not a
// readable regular file is an Error(usage) naming where it came from.
TlsSettings resolve_tls(const TlsSources& sources);

// The TLS half of HttpOptions, and the fix a certificate-verification error
// names ("pass its CA certificate with --cert FILE").
void apply_tls(const TlsSettings& tls, HttpOptions& options);

// pip's own options for the same settings: "--cert FILE", "--client-cert
// FILE" (paths only, never a secret: fit for argv).
std::vector<std::string> pip_tls_args(const TlsSettings& tls);

// The environment a child (pip, uv, python with huggingface_hub) reads the
// same settings from: PIP_CERT, REQUESTS_CA_BUNDLE and SSL_CERT_FILE set to
// the bundle (requests would otherwise let an inherited REQUESTS_CA_BUNDLE
// win over pip's --cert), PIP_CLIENT_CERT and SSL_CLIENT_CERT to the client
// certificate; with the system CAs, the CA variables (CURL_CA_BUNDLE too)
// are removed, so the child trusts what kwheel trusted.
void apply_tls(const TlsSettings& tls, ProcessOptions& child);

// ---- credentials ----

struct UrlUserinfo {
  std::string url;                      // the URL without user:password@
  std::optional<std::string> username;  // percent-decoded
  std::optional<Secret> password;       // percent-decoded; nullopt: no ':' in the userinfo
};
// pip's split_auth_from_netloc: the userinfo is everything before the last
// '@' of the authority, user and password split at its first ':'.
UrlUserinfo split_userinfo(const std::string& url);

struct Credentials {
  enum class Source { url, netrc, keyring };
  std::string username;
  Secret password;
  Source source = Source::url;
  std::string from;  // for messages and --json: "the URL", the netrc file's path, "keyring (PATH)"
};

struct ConnectionSettings {
  TlsSettings tls;
  KeyringProvider keyring = KeyringProvider::automatic;
  // Where a netrc file pip would skip is said to be skipped (one line, no token).
  std::function<void(const std::string&)> warn;
};

// A package index and how to reach it. Its HttpClient sends the credentials
// to the index's origin only: a file the index links on another host gets
// none. Every credential is registered for redaction before it is sent.
class IndexConnection {
 public:
  // `url` may carry user:password@; `base` gives the retry rules and user
  // agent, the TLS half comes from `settings`.
  IndexConnection(const std::string& url, const ConnectionSettings& settings, HttpOptions base,
                  std::shared_ptr<Transport> transport = {});

  const std::string& url() const { return url_; }  // without userinfo: what is printed and written
  HttpClient& http() { return *http_; }
  // Where the credentials in use came from; "" when none are sent.
  std::string credentials_from() const { return credentials_ ? credentials_->from : ""; }
  const std::string& ca_from() const { return tls_.ca_from; }

  // The index URL with the credentials in use as its percent-encoded
  // userinfo, for a child's environment only (PIP_INDEX_URL,
  // UV_DEFAULT_INDEX): never argv (other users read /proc/PID/cmdline),
  // never printed. A Secret, registered for redaction; the plain URL when
  // there are no credentials.
  Secret url_with_credentials() const;

  // After a 401 from `answered_url`: pip asks keyring (the index URL, then
  // host:port) unless the credentials came from the URL. True when it gave
  // credentials, which the next request sends; asked once.
  bool retry_with_keyring(const std::string& answered_url);

  // What an answer other than 401/403 may mean for how the server is
  // reached ("" when nothing): a TLS front such as nginx's
  // `ssl_verify_client on` completes the handshake without a client
  // certificate and answers 400, so a 400 over HTTPS without one names
  // --client-cert.
  std::string status_hint(long status) const;

  // The error for a 401/403 from `answered_url`, Error(auth): what to
  // give, or whose credentials were refused.
  Error refused(const std::string& answered_url, long status) const;

 private:
  void use(Credentials credentials);
  std::string ways_to_give_credentials() const;

  std::string url_;
  std::string host_;
  std::optional<std::string> url_username_;
  std::optional<Credentials> credentials_;
  TlsSettings tls_;
  KeyringProvider keyring_;
  bool keyring_asked_ = false;
  std::unique_ptr<HttpClient> http_;
};

// The credentials pip would send first to `url` (no keyring: pip asks it
// only after a 401): the URL's, else the netrc file's for its host (a
// netrc file pip skips is skipped, said to `warn`).
std::optional<Credentials> initial_credentials(const UrlUserinfo& url, const std::string& host,
                                               const std::function<void(const std::string&)>& warn = {});

// What a child pip or uv needs to reach `urls` as kwheel does: the CA file
// and client certificate resolved here, and for each URL (keyed without
// its userinfo) the login pip would send first: the URL's, else netrc's.
// Keyring is left to the child, which asks it itself after a 401.
ChildToolAccess child_tool_access(const TlsSettings& tls, const std::vector<std::string>& urls,
                                  const std::function<void(const std::string&)>& warn = {});

}  // namespace kwheel
