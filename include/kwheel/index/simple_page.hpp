#pragma once
// A project page of a simple index, fetched over HTTP(S) the way pip asks
// for it: PEP 691 JSON first, PEP 503 HTML otherwise. `kwheel pin` reads the
// candidates from it; `kwheel publish --skip-existing` reads the sha256 of
// the copy an index already holds. The page is the index's answer, so it is
// parsed by the bounded readers of simple_index, never trusted further.
#include <string>
#include <vector>

#include "kwheel/hub/http.hpp"
#include "kwheel/index/simple_api.hpp"

namespace kwheel {

struct SimplePage {
  long status = 0;    // the HTTP status; callers say what a non-200 means for them
  std::string body;   // at most kMaxIndexPageBody
  bool json = false;  // the server answered PEP 691 JSON
  std::string url;    // after redirects
};

// GET with pip's Accept header. Whatever the status, the answer comes back;
// network failure after the client's attempts throws Error(network).
SimplePage get_simple_page(HttpClient& http, const std::string& url);

// The files the page lists, parsed as the format the server said it sent;
// hrefs as written (relative ones not yet resolved). Throws Error(input)
// naming `where` when the page is neither.
std::vector<IndexFile> page_files(const SimplePage& page, const std::string& where);

}  // namespace kwheel
