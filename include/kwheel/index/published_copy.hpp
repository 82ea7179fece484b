#pragma once
// `kwheel publish --skip-existing`: an index that answers "already exists"
// holds a file of that name, not necessarily these bytes. Its simple page
// says which bytes it holds (the file's sha256); this reads it there, so
// that only the same bytes count as published.
#include <optional>
#include <string>

#include "kwheel/hub/http.hpp"

namespace kwheel {

// The simple index of an upload URL, for the servers kwheel knows:
// pypiserver (uploads to "/", pages under "/simple/"), devpi ("/USER/INDEX/",
// "/USER/INDEX/+simple/"), PyPI and TestPyPI. nullopt for any other: the
// user names it (`publish --index-url`).
std::optional<std::string> derived_simple_index(const std::string& upload_url);

struct PublishedCopy {
  std::string sha256;  // lower-case hex, as the page gives it
  std::string page;    // where it was read, for messages (no user info)
};

// The sha256 that `simple_index`'s project page gives `filename` (a wheel
// filename). Throws Error when the index does not say: no project page
// (not_found), the file not on it (not_found), no sha256 for it or
// different ones (input), credentials wanted (auth), another answer
// (network); each message names the page.
PublishedCopy published_copy(HttpClient& http, const std::string& simple_index, const std::string& filename);

}  // namespace kwheel
