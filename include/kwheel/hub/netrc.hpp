#pragma once
// ~/.netrc as pip reads it (requests' get_netrc_auth over Python's netrc
// module): the file named by NETRC, else ~/.netrc, else ~/_netrc; the
// `machine` entry for the URL's host name (no port), else `default`; the
// login, or the account when there is no login. kwheel looks credentials up
// the same way, so the file that serves `pip install` serves `kwheel pin`.
#include <filesystem>
#include <optional>
#include <string>

#include "kwheel/base/secret.hpp"

namespace kwheel {

struct NetrcEntry {
  std::string login;  // the entry's login, or its account when it has none
  Secret password;
};

// The file requests would read: $NETRC when set (whether or not it
// exists), else the first of ~/.netrc and ~/_netrc that exists; nullopt
// when there is none.
std::optional<std::filesystem::path> netrc_file();

// The entry `text` gives `host` (lower-case, as a URL's host name): the last
// `machine host` entry, else the `default` entry, as Python's netrc keeps
// them. Tokens are split and quoted ("..." with backslash escapes) as
// Python 3.11's lexer does; a token starting with '#' begins a comment to
// the end of its line. A malformed file is an Error(input) naming `where`
// and the line, never a token's text (it may be a password).
std::optional<NetrcEntry> netrc_lookup(const std::string& text, const std::string& host, const std::string& where);

// netrc_lookup on the file `path`; a file that cannot be read is an
// Error(input) naming it.
std::optional<NetrcEntry> netrc_lookup_file(const std::filesystem::path& path, const std::string& host);

}  // namespace kwheel
