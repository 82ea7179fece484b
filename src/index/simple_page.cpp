#include "kwheel/index/simple_page.hpp"

namespace kwheel {

namespace {

// pip's preference: JSON where the index offers it, HTML otherwise.
constexpr const char* kAccept =
    "Accept: application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01";

}  // namespace

SimplePage get_simple_page(HttpClient& http, const std::string& url) {
  HttpResponse r = http.get(url, false, kMaxIndexPageBody, {kAccept});
  SimplePage page;
  page.status = r.status;
  page.json = r.header("content-type").find("json") != std::string::npos;
  page.url = r.url.empty() ? url : r.url;
  page.body = std::move(r.body);
  return page;
}

std::vector<IndexFile> page_files(const SimplePage& page, const std::string& where) {
  return page.json ? parse_project_json(page.body, where) : parse_project_html(page.body, where);
}

}  // namespace kwheel
