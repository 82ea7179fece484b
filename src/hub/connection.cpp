#include "kwheel/hub/connection.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "kwheel/base/environment.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/netrc.hpp"
#include "kwheel/hub/url.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

// The first source given, then the variables, in order.
std::optional<NamedPath> first_given(const std::vector<NamedPath>& sources, std::initializer_list<const char*> variables) {
  for (const auto& s : sources)
    if (!s.path.empty()) return s;
  for (const char* name : variables)
    if (auto v = env_value(name)) return NamedPath{name, *v};
  return std::nullopt;
}

void check_readable(const NamedPath& p, const std::string& holding) {
  std::error_code ec;
  if (fs::is_regular_file(p.path, ec) && ::access(p.path.c_str(), R_OK) == 0) return;
  // A variable can be unset; a flag or a config file line is fixed where it is written.
  const bool variable = std::all_of(p.from.begin(), p.from.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
  throw Error(ErrorKind::usage, p.from + " '" + p.path + "' is not a readable file; give a PEM file of " + holding +
                                    (variable ? ", or unset " + p.from : ""));
}

// The authority of an absolute URL: [start, end) after "scheme://".
std::pair<size_t, size_t> authority(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return {std::string::npos, std::string::npos};
  const size_t start = scheme + 3;
  return {start, std::min(url.find_first_of("/?#", start), url.size())};
}

// The URL's host name as netrc names machines: lower-case, no port, no
// brackets around an IPv6 address (urllib's hostname).
std::string url_hostname(const std::string& url) {
  auto [start, end] = authority(url);
  if (start == std::string::npos) return {};
  std::string host = url.substr(start, end - start);
  if (const size_t at = host.rfind('@'); at != std::string::npos) host.erase(0, at + 1);
  if (host.starts_with("[")) host = host.substr(1, host.find(']') - 1);
  else if (const size_t colon = host.rfind(':'); colon != std::string::npos) host.erase(colon);
  return ascii_lower(host);
}

// "host:port" as the URL gives it, pip's netloc without the userinfo.
std::string url_netloc(const std::string& url) {
  auto [start, end] = authority(url);
  if (start == std::string::npos) return {};
  std::string netloc = url.substr(start, end - start);
  if (const size_t at = netloc.rfind('@'); at != std::string::npos) netloc.erase(0, at + 1);
  return netloc;
}

}  // namespace

TlsSources tls_sources(const TlsFlags& flags, std::vector<NamedPath> ca_after, std::vector<NamedPath> client_cert_after) {
  if (flags.cert && flags.ca_bundle)
    throw Error(ErrorKind::usage, "--cert and --ca-bundle are one option (--ca-bundle is its older name); give it once");
  TlsSources s;
  if (flags.cert) s.ca.push_back({"--cert", *flags.cert});
  if (flags.ca_bundle) s.ca.push_back({"--ca-bundle", *flags.ca_bundle});
  if (flags.client_cert) s.client_cert.push_back({"--client-cert", *flags.client_cert});
  s.ca.insert(s.ca.end(), ca_after.begin(), ca_after.end());
  s.client_cert.insert(s.client_cert.end(), client_cert_after.begin(), client_cert_after.end());
  return s;
}

TlsSettings resolve_tls(const TlsSources& sources) {
  TlsSettings t;
  if (auto ca = first_given(sources.ca, {kCaVariables[0], kCaVariables[1], kCaVariables[2], kCaVariables[3]})) {
    check_readable(*ca, "CA certificates");
    t.ca_bundle = ca->path;
    t.ca_from = ca->from;
  }
  if (auto cc = first_given(sources.client_cert, {kClientCertVariables[0], kClientCertVariables[1]})) {
    check_readable(*cc, "the client certificate and its private key");
    t.client_cert = cc->path;
    t.client_cert_from = cc->from;
  }
  return t;
}

void apply_tls(const TlsSettings& tls, HttpOptions& o) {
  o.ca_bundle = tls.ca_bundle;
  o.ca_from = tls.ca_bundle.empty() ? "" : tls.ca_from;
  o.client_cert = tls.client_cert;
  o.tls_fix = "pass its CA certificate with --cert FILE";
}

std::vector<std::string> pip_tls_args(const TlsSettings& tls) {
  std::vector<std::string> args;
  if (!tls.ca_bundle.empty()) args.insert(args.end(), {"--cert", tls.ca_bundle});
  if (!tls.client_cert.empty()) args.insert(args.end(), {"--client-cert", tls.client_cert});
  return args;
}

void apply_tls(const TlsSettings& tls, ProcessOptions& child) {
  // Whatever the child would have inherited goes first: it must trust what
  // kwheel trusted, no more and no other.
  for (const char* name : {"PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE", "KWHEEL_CA_BUNDLE", "SSL_CERT_DIR",
                           "PIP_CLIENT_CERT", "SSL_CLIENT_CERT"}) {
    child.set_env.erase(name);
    child.unset_env.emplace_back(name);
  }
  if (!tls.ca_bundle.empty())
    for (const char* name : {"PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"}) child.set_env[name] = tls.ca_bundle;
  if (!tls.client_cert.empty())
    for (const char* name : {"PIP_CLIENT_CERT", "SSL_CLIENT_CERT"}) child.set_env[name] = tls.client_cert;
}

UrlUserinfo split_userinfo(const std::string& url) {
  UrlUserinfo out;
  out.url = url;
  auto [start, end] = authority(url);
  if (start == std::string::npos) return out;
  const size_t at = url.rfind('@', end == 0 ? 0 : end - 1);
  if (at == std::string::npos || at < start) return out;
  const std::string info = url.substr(start, at - start);
  out.url = url.substr(0, start) + url.substr(at + 1);
  const size_t colon = info.find(':');
  out.username = percent_decode(info.substr(0, colon));
  if (colon != std::string::npos) {
    out.password = Secret(percent_decode(info.substr(colon + 1)));
    // The forms a server could echo: as written and decoded.
    register_secret(Secret(info.substr(colon + 1)));
    register_secret(*out.password);
  }
  return out;
}

std::optional<Credentials> initial_credentials(const UrlUserinfo& url, const std::string& host, const std::function<void(const std::string&)>& warn) {
  if (url.username && url.password) return Credentials{*url.username, *url.password, Credentials::Source::url, "the URL"};
  if (auto file = netrc_file())
    if (auto entry = netrc_lookup_file(*file, host, warn)) return Credentials{entry->login, entry->password, Credentials::Source::netrc, file->string()};
  // A user alone in the URL: pip sends "user:" (an index token given as
  // the user name), and asks keyring for that user after a 401.
  if (url.username) return Credentials{*url.username, Secret(), Credentials::Source::url, "the URL"};
  return std::nullopt;
}

IndexConnection::IndexConnection(const std::string& url, const ConnectionSettings& settings, HttpOptions base,
                                 std::shared_ptr<Transport> transport)
    : tls_(settings.tls), keyring_(settings.keyring) {
  const UrlUserinfo parts = split_userinfo(url);
  url_ = parts.url;
  host_ = url_hostname(url_);
  url_username_ = parts.username;
  base.auth_origin = url_origin(url_);
  apply_tls(tls_, base);
  http_ = std::make_unique<HttpClient>(std::move(base), std::move(transport));
  // A file:// index (or a directory) has no host to send credentials to.
  const bool http = url_.starts_with("http://") || url_.starts_with("https://");
  if (auto c = http ? initial_credentials(parts, host_, settings.warn) : std::nullopt) use(std::move(*c));
}

void IndexConnection::use(Credentials c) {
  register_secret(c.password);
  http_->use_basic_credentials(c.username, c.password);
  credentials_ = std::move(c);
}

Secret IndexConnection::url_with_credentials() const {
  if (!credentials_) return Secret(url_);
  auto [start, end] = authority(url_);
  if (start == std::string::npos) return Secret(url_);
  const std::string userinfo = encode_component(credentials_->username) + ":" + encode_component(credentials_->password.reveal());
  Secret with(url_.substr(0, start) + userinfo + "@" + url_.substr(start));
  register_secret(with);
  return with;
}

bool IndexConnection::retry_with_keyring(const std::string& answered_url) {
  if (keyring_asked_ || (credentials_ && credentials_->source == Credentials::Source::url && !credentials_->password.empty())) return false;
  keyring_asked_ = true;
  const auto program = keyring_program(keyring_);
  if (!program) return false;
  // pip asks for the index URL first (more specific), then host:port.
  const std::string index = url_.ends_with("/") ? url_ : url_ + "/";
  const std::optional<std::string> user = url_username_;
  std::optional<KeyringCredentials> got;
  if (answered_url.starts_with(index) || answered_url == url_) got = keyring_get(*program, index, user);
  if (!got) got = keyring_get(*program, url_netloc(url_), user);
  if (!got) return false;
  use(Credentials{got->username, got->password, Credentials::Source::keyring, "keyring (" + program->string() + ")"});
  return true;
}

std::string IndexConnection::status_hint(long status) const {
  if (status != 400 || !url_.starts_with("https://") || !tls_.client_cert.empty()) return "";
  return "; if the index wants a client certificate (nginx answers 400 without one), pass --client-cert FILE (one PEM file with the certificate and its key)";
}

// The three places pip and kwheel look, each as the user would fill it in.
std::string IndexConnection::ways_to_give_credentials() const {
  const std::string scheme = url_.substr(0, url_.find("://") + 3);
  return "add 'machine " + host_ + " login USER password PASSWORD' to ~/.netrc (or the file NETRC names), store them with `keyring set " + url_ +
         " USER`, or give them in the URL (" + scheme + "USER:PASSWORD@" + url_netloc(url_) + "/...)";
}

Error IndexConnection::refused(const std::string& answered_url, long status) const {
  const std::string where = display_url(answered_url);
  const std::string http = "HTTP " + std::to_string(status);
  if (!credentials_ || (credentials_->password.empty() && credentials_->username.empty()))
    return Error(ErrorKind::auth, where + " wants credentials (" + http + ") and none were found for " + host_ + ": " + ways_to_give_credentials());
  return Error(ErrorKind::auth, "credentials from " + credentials_->from + " for " + host_ + " were refused by " + where + " (" + http +
                                    "); fix them there" + (status == 403 ? ", or ask the index's owner for read access" : ""));
}

ChildToolAccess child_tool_access(const TlsSettings& tls, const std::vector<std::string>& urls, const std::function<void(const std::string&)>& warn) {
  ChildToolAccess access;
  if (!tls.ca_bundle.empty()) access.ca_file = tls.ca_bundle;
  if (!tls.client_cert.empty()) access.client_cert = tls.client_cert;
  for (const auto& url : urls) {
    if (!url.starts_with("http://") && !url.starts_with("https://")) continue;
    const UrlUserinfo split = split_userinfo(url);
    if (auto c = initial_credentials(split, url_hostname(split.url), warn)) access.logins[split.url] = IndexLogin{c->username, c->password};
  }
  return access;
}

}  // namespace kwheel
