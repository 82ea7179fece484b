// The simple repository API's pages (PEP 503 HTML, PEP 691 JSON, PEP 658/714
// metadata attributes, PEP 700 sizes and versions), written for a static
// site and read back from any index.
#include "kwheel/index/simple_api.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "kwheel/base/bounded_json.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/http.hpp"  // kMaxIndexPageBody
#include "kwheel/hub/url.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/wheel_filename.hpp"

namespace kwheel {
using nlohmann::json;

namespace {

constexpr const char* kApiVersion = "1.1";  // PEP 700: sizes and versions in JSON

}  // namespace

std::string html_unescape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] != '&') {
      out += s[i++];
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string::npos || semi - i > 10) {
      out += s[i++];
      continue;
    }
    std::string ent = s.substr(i + 1, semi - i - 1);
    std::string rep;
    if (ent == "amp") rep = "&";
    else if (ent == "lt") rep = "<";
    else if (ent == "gt") rep = ">";
    else if (ent == "quot") rep = "\"";
    else if (ent == "apos") rep = "'";
    else if (ent.size() > 1 && ent[0] == '#') {
      unsigned long cp = 0;
      try {
        cp = (ent[1] == 'x' || ent[1] == 'X') ? std::stoul(ent.substr(2), nullptr, 16) : std::stoul(ent.substr(1));
      } catch (...) {
        cp = 0;
      }
      if (cp > 0 && cp < 0x80) rep = std::string(1, static_cast<char>(cp));
      else if (cp >= 0x80 && cp < 0x800) rep = {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
      else if (cp >= 0x800 && cp < 0x10000)
        rep = {static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), static_cast<char>(0x80 | (cp & 0x3F))};
    }
    if (rep.empty()) {
      out += s[i++];
      continue;
    }
    out += rep;
    i = semi + 1;
  }
  return out;
}

namespace {

struct Anchor {
  std::map<std::string, std::string> attrs;  // lower-case names, unescaped values
  std::string text;
};

// Every <a ...>text</a> of an HTML page; tolerant of attribute quoting
// styles, case and whitespace, as pip's parser is.
std::vector<Anchor> anchors(const std::string& html) {
  std::vector<Anchor> out;
  const std::string lc = ascii_lower(html);
  size_t pos = 0;
  while ((pos = lc.find("<a", pos)) != std::string::npos) {
    size_t p = pos + 2;
    if (p >= lc.size() || !(std::isspace(static_cast<unsigned char>(lc[p])) || lc[p] == '>')) {
      pos = p;
      continue;
    }
    Anchor a;
    while (p < html.size() && html[p] != '>') {
      while (p < html.size() && (std::isspace(static_cast<unsigned char>(html[p])) || html[p] == '/')) ++p;
      if (p >= html.size() || html[p] == '>') break;
      size_t name_start = p;
      while (p < html.size() && !std::isspace(static_cast<unsigned char>(html[p])) && html[p] != '=' && html[p] != '>') ++p;
      std::string name = ascii_lower(html.substr(name_start, p - name_start));
      while (p < html.size() && std::isspace(static_cast<unsigned char>(html[p]))) ++p;
      std::string value;
      if (p < html.size() && html[p] == '=') {
        ++p;
        while (p < html.size() && std::isspace(static_cast<unsigned char>(html[p]))) ++p;
        if (p < html.size() && (html[p] == '"' || html[p] == '\'')) {
          char q = html[p++];
          size_t end = html.find(q, p);
          if (end == std::string::npos) end = html.size();
          value = html.substr(p, end - p);
          p = end + 1;
        } else {
          size_t start = p;
          while (p < html.size() && !std::isspace(static_cast<unsigned char>(html[p])) && html[p] != '>') ++p;
          value = html.substr(start, p - start);
        }
      }
      if (!name.empty()) a.attrs.emplace(name, html_unescape(value));
    }
    size_t text_start = std::min(p + 1, html.size());
    size_t close = lc.find("</a", text_start);
    if (close == std::string::npos) close = html.size();
    a.text = html_unescape(html.substr(text_start, close - text_start));
    auto first = a.text.find_first_not_of(" \t\r\n");
    a.text = first == std::string::npos ? "" : a.text.substr(first, a.text.find_last_not_of(" \t\r\n") - first + 1);
    out.push_back(std::move(a));
    pos = close;
  }
  return out;
}

// "sha256=<hex>" -> hex; "true" -> "" (metadata exists, hash unknown).
std::optional<std::string> metadata_attr(const std::map<std::string, std::string>& attrs) {
  for (const char* key : {"data-core-metadata", "data-dist-info-metadata"}) {
    auto it = attrs.find(key);
    if (it == attrs.end()) continue;
    if (it->second.starts_with("sha256=")) return ascii_lower(it->second.substr(7));
    if (it->second == "true") return std::string();
  }
  return std::nullopt;
}

std::string version_of(const std::string& filename) {
  try {
    return parse_wheel_filename(filename, VariantLabels::accept).version;
  } catch (const Error&) {
    return "";
  }
}

Version sortable_version(const std::string& v) { return Version::try_parse(v).value_or(Version::parse("0")); }

json meta() { return json{{"api-version", kApiVersion}}; }

const char* kHead =
    "<!DOCTYPE html>\n<html>\n  <head>\n    <meta charset=\"utf-8\">\n    <meta name=\"pypi:repository-version\" content=\"1.1\">\n";

// PyPI's largest project pages hold tens of thousands of values; a million
// would already cost ~100 MB. Pages reach here capped at kMaxIndexPageBody.
constexpr JsonLimits kIndexPageLimits{kMaxIndexPageBody, 32, 500000};

// One file name, one file: a page that lists a name twice with two
// sha256s offers two contents for it, and a pin of both hashes would take
// whichever the server sends later, so the page fails closed (as publish
// --skip-existing does). Listed twice with one hash (or once without),
// it is one file, kept once: the first with a hash.
std::vector<IndexFile> one_hash_per_file(std::vector<IndexFile> files, const std::string& where) {
  std::vector<IndexFile> out;
  std::map<std::string, size_t> at;  // filename -> index into out
  for (auto& f : files) {
    auto [it, first] = at.try_emplace(f.filename, out.size());
    if (first) {
      out.push_back(std::move(f));
      continue;
    }
    IndexFile& kept = out[it->second];
    if (!kept.sha256.empty() && !f.sha256.empty() && kept.sha256 != f.sha256)
      throw Error(ErrorKind::input, where + " lists " + f.filename + " more than once, with different sha256s (" + kept.sha256 + " and " + f.sha256 +
                                        "); one file name is one file, so neither is trusted: ask the index's owner which bytes it serves");
    if (kept.sha256.empty()) kept = std::move(f);
  }
  return out;
}

json parse_index_json(const std::string& text, const std::string& where) {
  auto j = parse_bounded_json(text, kIndexPageLimits, ErrorKind::input, where, "is it a package index? check the index URL");
  return j ? std::move(*j) : json(json::value_t::discarded);
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#x27;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render_root_html(const std::vector<std::string>& names) {
  std::string s = kHead;
  s += "    <title>Simple index</title>\n  </head>\n  <body>\n";
  for (const auto& n : names) s += "    <a href=\"" + html_escape(encode_component(n)) + "/\">" + html_escape(n) + "</a><br/>\n";
  s += "  </body>\n</html>\n";
  return s;
}

std::string render_root_json(const std::vector<std::string>& names) {
  json projects = json::array();
  for (const auto& n : names) projects.push_back({{"name", n}});
  return json{{"meta", meta()}, {"projects", projects}}.dump(1) + "\n";
}

std::string render_project_html(const std::string& name, const std::vector<IndexFile>& files) {
  std::string s = kHead;
  s += "    <title>Links for " + html_escape(name) + "</title>\n  </head>\n  <body>\n    <h1>Links for " + html_escape(name) + "</h1>\n";
  for (const auto& f : files) {
    std::string href = f.url + (f.sha256.empty() ? "" : "#sha256=" + f.sha256);
    s += "    <a href=\"" + html_escape(href) + "\"";
    if (!f.requires_python.empty()) s += " data-requires-python=\"" + html_escape(f.requires_python) + "\"";
    if (f.metadata_sha256) {
      const std::string v = f.metadata_sha256->empty() ? "true" : "sha256=" + *f.metadata_sha256;
      // PEP 714's name, and PEP 658's original one for older pip.
      s += " data-core-metadata=\"" + v + "\" data-dist-info-metadata=\"" + v + "\"";
    }
    if (f.yanked) s += " data-yanked=\"\"";
    s += ">" + html_escape(f.filename) + "</a><br/>\n";
  }
  s += "  </body>\n</html>\n";
  return s;
}

std::string render_project_json(const std::string& name, const std::vector<IndexFile>& files) {
  json out_files = json::array();
  std::set<std::string> seen;
  std::vector<std::string> versions;
  for (const auto& f : files) {
    json j{{"filename", f.filename}, {"url", f.url}, {"hashes", json::object()}};
    if (!f.sha256.empty()) j["hashes"]["sha256"] = f.sha256;
    if (!f.requires_python.empty()) j["requires-python"] = f.requires_python;
    if (f.metadata_sha256) {
      json m = f.metadata_sha256->empty() ? json(true) : json{{"sha256", *f.metadata_sha256}};
      j["core-metadata"] = m;
      j["dist-info-metadata"] = m;
    }
    if (f.size) j["size"] = *f.size;
    if (f.yanked) j["yanked"] = true;
    out_files.push_back(std::move(j));
    if (!f.version.empty() && seen.insert(f.version).second) versions.push_back(f.version);
  }
  // Each version parsed once, not once per comparison.
  std::vector<std::pair<Version, std::string>> keyed;
  keyed.reserve(versions.size());
  for (auto& v : versions) keyed.emplace_back(sortable_version(v), std::move(v));
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  versions.clear();
  for (auto& [_, v] : keyed) versions.push_back(std::move(v));
  return json{{"meta", meta()}, {"name", name}, {"files", out_files}, {"versions", versions}}.dump(1) + "\n";
}

std::vector<IndexFile> parse_project_html(const std::string& html, const std::string& where) {
  if (ascii_lower(html).find("<html") == std::string::npos && ascii_lower(html).find("<a") == std::string::npos)
    throw Error(ErrorKind::input, where + " is not a PEP 503 project page (no HTML)");
  std::vector<IndexFile> out;
  for (const auto& a : anchors(html)) {
    auto href = a.attrs.find("href");
    if (href == a.attrs.end()) continue;
    IndexFile f;
    std::string url = href->second;
    if (auto hash = url.find('#'); hash != std::string::npos) {
      std::string frag = url.substr(hash + 1);
      url.resize(hash);
      if (frag.starts_with("sha256=")) f.sha256 = ascii_lower(frag.substr(7));
    }
    f.url = url;
    std::string path = url.substr(0, url.find('?'));
    f.filename = percent_decode(path.substr(path.rfind('/') + 1));
    if (auto rp = a.attrs.find("data-requires-python"); rp != a.attrs.end()) f.requires_python = rp->second;
    f.metadata_sha256 = metadata_attr(a.attrs);
    f.yanked = a.attrs.count("data-yanked") > 0;
    f.version = version_of(f.filename);
    out.push_back(std::move(f));
  }
  return one_hash_per_file(std::move(out), where);
}

std::vector<IndexFile> parse_project_json(const std::string& text, const std::string& where) {
  json j = parse_index_json(text, where);
  if (j.is_discarded() || !j.is_object() || !j.contains("files") || !j["files"].is_array())
    throw Error(ErrorKind::input, where + " is not a PEP 691 project page (no \"files\" list)");
  std::vector<IndexFile> out;
  for (const auto& e : j["files"]) {
    if (!e.is_object() || !e.contains("filename") || !e.contains("url") || !e["filename"].is_string() || !e["url"].is_string()) continue;
    IndexFile f;
    f.filename = e["filename"];
    f.url = e["url"];
    if (e.contains("hashes") && e["hashes"].is_object() && e["hashes"].contains("sha256") && e["hashes"]["sha256"].is_string())
      f.sha256 = ascii_lower(e["hashes"]["sha256"].get<std::string>());
    if (e.contains("requires-python") && e["requires-python"].is_string()) f.requires_python = e["requires-python"];
    for (const char* key : {"core-metadata", "dist-info-metadata"}) {
      if (f.metadata_sha256 || !e.contains(key)) continue;
      const auto& m = e[key];
      if (m.is_boolean() && m.get<bool>()) f.metadata_sha256 = "";
      else if (m.is_object()) f.metadata_sha256 = m.contains("sha256") && m["sha256"].is_string() ? ascii_lower(m["sha256"].get<std::string>()) : "";
    }
    if (e.contains("size") && e["size"].is_number_unsigned()) f.size = e["size"].get<uint64_t>();
    if (e.contains("yanked")) f.yanked = e["yanked"].is_string() || (e["yanked"].is_boolean() && e["yanked"].get<bool>());
    f.version = version_of(f.filename);
    out.push_back(std::move(f));
  }
  return one_hash_per_file(std::move(out), where);
}

std::vector<std::string> parse_root_page(const std::string& body, bool is_json, const std::string& where) {
  std::vector<std::string> names;
  if (is_json) {
    json j = parse_index_json(body, where);
    if (j.is_discarded() || !j.is_object() || !j.contains("projects") || !j["projects"].is_array())
      throw Error(ErrorKind::input, where + " is not a PEP 691 index page (no \"projects\" list)");
    for (const auto& p : j["projects"])
      if (p.is_object() && p.contains("name") && p["name"].is_string()) names.push_back(p["name"]);
  } else {
    for (const auto& a : anchors(body)) names.push_back(a.text);
  }
  // A link that is no PEP 508 name (a directory listing's "Parent
  // Directory", or a name built to reach a file) is no project.
  std::erase_if(names, [](const std::string& n) { return !is_valid_name(n); });
  return names;
}

}  // namespace kwheel
