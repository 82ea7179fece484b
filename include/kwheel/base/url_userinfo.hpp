#pragma once
// The user:password@ of a URL as a person typed it: on the command line, in
// a variable, in a file kwheel reads back. Read for hiding, not for
// requests (hub/connection parses URLs for those): whatever the reason a
// URL is refused (a scheme kwheel does not take, a capital HTTPS://, no
// "//" at all), its password must not reach the message that says so.
//
// So the reading is the one that hides the most:
//   - the scheme in any case, and after it one slash or more ('\' too, which
//     browsers read as '/'): "HTTPS://u:p@h/", "ftp:/u:p@h", "s3:\\u:p@h";
//   - no scheme: "u:p@host/simple/" (only when a ':' marks a password, so
//     that a path like "wheels@2/" or "git@host:repo" is left as it is);
//   - the userinfo ends at the last '@' before the first '/' or '\', so a
//     password holding an unencoded '#' or '?' is still one;
//   - percent-encoded delimiters ("https%3A%2F%2Fu%3Ap%40h", and once more
//     encoded, %2540) are read as the characters they stand for.
#include <string>
#include <string_view>

namespace kwheel {

// `text` with every user information part removed ("https://u:p@h/x" ->
// "https://h/x"); any other text comes back as it is.
std::string without_userinfo(std::string_view text);

// Whether without_userinfo would remove anything.
bool holds_userinfo(std::string_view text);

// Registers the password of every reading above, as written and decoded,
// with the secret registry (base/secret), so that a message built from the
// text in any shape is redacted too. A user name alone is not registered:
// it names an account, and messages say whose credentials were refused.
void register_userinfo_password(std::string_view text);

// `url` with its scheme in lower case (RFC 3986 3.1: schemes are
// case-insensitive, so HTTPS:// is https://); other text as it is.
std::string lower_scheme(std::string url);

}  // namespace kwheel
