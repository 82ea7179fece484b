#pragma once
// URLs as kwheel's HTTP layer handles them: origins (whom a credential
// belongs to), redirect targets, pagination links, and the forms of a URL
// fit for a message or a request path.
#include <optional>
#include <string>

namespace kwheel {

// `url` fit for a message: any user:password@ removed, however the URL is
// written (base/url_userinfo: any scheme in any case, none at all,
// percent-encoded), registered secrets (a token in a redirect's query, say)
// redacted. Every message that quotes a URL quotes it through this.
std::string display_url(const std::string& url);
// Registers the password of a URL's user:password@ (curl sends it as
// "Authorization: Basic"), decoded and as written, for redaction.
void register_url_credentials(const std::string& url);
// "scheme://host:port" of an absolute URL, lower-cased, default port added.
std::string url_origin(const std::string& url);
// Resolves a Location header against the URL it came from.
std::string resolve_url(const std::string& base, const std::string& location);
// The target of a paginated response's `Link: <URL>; rel="next"` header
// (RFC 8288), as huggingface_hub reads it; nullopt when there is none.
std::optional<std::string> link_next(const std::string& header);
// Percent-encodes a path, keeping '/' (for repo file paths in URLs).
std::string encode_path(const std::string& path);
std::string encode_component(const std::string& text);

}  // namespace kwheel
