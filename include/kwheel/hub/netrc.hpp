#pragma once
// ~/.netrc as pip reads it: requests' get_netrc_auth over Python's netrc
// module (the parser of CPython 3.11 to 3.14, which are one and the same;
// 3.10's older shlex parser refused entries without a password). The file
// named by NETRC (~ expanded), else ~/.netrc, else ~/_netrc; the `machine`
// entry for the URL's host name (no port), else `default`; the login, or
// the account when there is no login. kwheel looks credentials up the same
// way, token by token, so the file that serves `pip install` serves
// `kwheel pin`, and a file pip cannot use gives kwheel nothing either.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "kwheel/base/secret.hpp"

namespace kwheel {

// One entry as Python's netrc.netrc(...).hosts holds it: ('' for a token
// the entry does not give).
struct NetrcHost {
  std::string login, account;
  Secret password;
};

// Python's netrc.netrc(file).hosts: each entry by its machine name, the
// `default` entry as "default"; a later entry of a name replaces an
// earlier one.
using NetrcHosts = std::map<std::string, NetrcHost>;

// Parses `text` (the file's bytes; CRLF and CR read as LF, as Python's
// text mode reads them) token by token as Python's netrc does, including
// its quirks: `password #x` is the password "#x", a lone "#" skips the
// rest of its line only when no newline came before it in the same read,
// a quoted "" ends the file. What Python refuses (NetrcParseError, or
// UTF-8 it cannot decode) is an Error(input) naming `where`, the line and
// what is wrong, never a token's text (it may be a password).
NetrcHosts parse_netrc(std::string_view text, const std::string& where);

struct NetrcEntry {
  std::string login;  // the entry's login, or its account when it has none
  Secret password;
};

// What requests takes from `hosts` for `host` (lower-case, as urllib's
// hostname): authenticators(host), the `machine host` entry else
// `default`; nothing when that entry gives neither login, account nor
// password.
std::optional<NetrcEntry> netrc_credentials(const NetrcHosts& hosts, const std::string& host);

// parse_netrc then netrc_credentials.
std::optional<NetrcEntry> netrc_lookup(const std::string& text, const std::string& host, const std::string& where);

// The file requests would read: $NETRC when set (~ expanded, whether or
// not it exists), else the first of ~/.netrc and ~/_netrc that exists;
// nullopt when there is none.
std::optional<std::filesystem::path> netrc_file();

// netrc_lookup on the file `path`. A file requests skips (missing,
// unreadable, a directory, one Python cannot parse) gives nothing, as pip
// goes on without it: `warn` gets one line naming the file and why, once
// per file in this process, never a token of it.
std::optional<NetrcEntry> netrc_lookup_file(const std::filesystem::path& path, const std::string& host,
                                            const std::function<void(const std::string&)>& warn = {});

}  // namespace kwheel
