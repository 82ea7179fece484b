#include "kwheel/index/simple_index.hpp"

#include <ctime>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "kwheel/base/bounded_json.hpp"
#include "kwheel/validate/compat.hpp"
#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/http.hpp"
#include "kwheel/index/matrix_page.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/base/unique_fd.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/validate/wheel_objects.hpp"
#include "kwheel/trust/wheel_signature.hpp"
#include "kwheel/wheel/core_metadata.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kApiVersion = "1.1";  // PEP 700: sizes and versions in JSON
constexpr const char* kManifest = "kwheel-index.json";
constexpr const char* kManifestFormat = "kwheel-index 1";

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
    if (it->second.starts_with("sha256=")) return it->second.substr(7);
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

json meta() { return json{{"api-version", kApiVersion}}; }

const char* kHead =
    "<!DOCTYPE html>\n<html>\n  <head>\n    <meta charset=\"utf-8\">\n    <meta name=\"pypi:repository-version\" content=\"1.1\">\n";

// --------------------------------------------------------------------------- site building


// A wheel's signature as the pages show it, and why it is not a trusted one.
struct ShownSignature {
  std::string summary;  // what the cell says: "signed by ...", "unsigned", "invalid: ..."
  SignatureStanding standing = SignatureStanding::none;
  std::string reason;   // for unsigned_ and invalid: the warning's reason
};

struct Entry {
  std::string filename;
  std::string project;  // normalized
  std::string version;
  std::string sha256;
  uint64_t size = 0;
  std::string requires_python;
  std::string metadata_sha256;
  std::vector<std::string> gpu_code;  // what its objects carry: "sm_90", "gfx90a" (matrix pages)
  ShownSignature signature;  // who signed its metadata.json, as the matrix pages say it
  std::string hub_repo, hub_commit, hub_url;  // the Hub revision its METADATA records, if any
  fs::path source;      // where the bytes come from for this run
  std::string metadata; // METADATA bytes (new wheels); old ones are linked
  bool is_new = false;
};

void write_text(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) throw Error(ErrorKind::io, "cannot write '" + p.string() + "': " + std::strerror(errno));
}

void link_or_copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (!ec) return;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) throw Error(ErrorKind::io, "cannot copy '" + from.string() + "' to '" + to.string() + "': " + ec.message());
}

bool variant_accepts(const LocalLabel& variant, const LocalLabel& wheel) {
  if (wheel.universal()) return true;
  const std::string name = wheel.index_name();
  if (name.empty()) return false;
  if (name == variant.index_name()) return true;
  if (!wheel.noarch || variant.noarch) return false;
  // A pure-Python torch-<backend> build joins every arch sub-index of its backend.
  const std::string& b = variant.backend;
  if (wheel.backend == "cuda") return b.starts_with("cu") && b != "cuda";
  if (wheel.backend == "cpu") return b == "cpu";
  return b.starts_with(wheel.backend);
}

Version sortable_version(const std::string& v) { return Version::try_parse(v).value_or(Version::parse("0")); }

// The GPU code a wheel's objects carry, as `kwheel inspect` reads it. A
// wheel whose objects cannot be read is still indexed (installers do not
// read them either); its cell says so.
std::vector<std::string> gpu_code_of(const WheelArchive& wheel) {
  std::vector<ObjectGpuCode> objects;
  try {
    objects = wheel_gpu_code(wheel);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) throw;
    return {"unreadable"};
  }
  std::vector<std::string> out;
  for (const auto& t : all_cuda_targets(objects)) out.push_back(t.str());
  for (const auto& g : all_gfx_targets(objects)) out.push_back(g);
  return out;
}

// Who signed the wheel's metadata.json, checked as a build checks it; a
// wheel kwheel did not build says so. Every wheel of a site had its RECORD
// checked when it joined, and its sha256 checked on every run since.
// The Hub repo and commit a wheel's METADATA records (kwheel's "Hub
// revision" Project-URL); nothing for a wheel not built from the Hub.
void read_hub_revision(const std::string& metadata, Entry& e) {
  const MetadataFields fields = parse_metadata_fields(metadata);
  const auto rev = recorded_revision(fields);
  if (!rev) return;
  e.hub_repo = rev->first;
  e.hub_commit = rev->second;
  auto [lo, hi] = fields.equal_range("Project-URL");
  for (auto it = lo; it != hi; ++it)
    if (it->second.starts_with(std::string(kHubRevisionLabel) + ",")) e.hub_url = trim(it->second.substr(it->second.find(',') + 1));
}

// Why a chain that held is not a trusted signature: no bundle, or a signer
// kwheel's policy does not name (counted as unsigned, as build counts it).
std::string unsigned_reason(const SignatureVerdict& v) {
  if (!v.result) return std::string("it has no ") + kSignatureFile;
  return v.describe() + ", counted as unsigned (trust the signer with --trusted-signer)";
}

ShownSignature signature_of(const WheelArchive& wheel, const SignatureOptions& options) {
  try {
    const auto s = wheel_signature(wheel, options, std::time(nullptr), /*record_verified=*/true);
    if (!s) return {"no kernel metadata", SignatureStanding::none, ""};
    if (!s->error.empty()) return {s->summary(), SignatureStanding::invalid, s->error};
    if (s->verdict && s->verdict->signed_by_trusted()) return {s->summary(), SignatureStanding::trusted, ""};
    return {s->summary(), SignatureStanding::unsigned_, s->verdict ? unsigned_reason(*s->verdict) : s->summary()};
  } catch (const Error& e) {
    // The wheel is still indexed, as with its GPU code; its page shows the failure.
    return {"unreadable: " + std::string(e.what()), SignatureStanding::invalid, e.what()};
  }
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
  std::stable_sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) { return sortable_version(a) < sortable_version(b); });
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
  return out;
}

namespace {

// PyPI's largest project pages hold tens of thousands of values; a million
// would already cost ~100 MB. Pages reach here capped at kMaxIndexPageBody.
constexpr JsonLimits kIndexPageLimits{kMaxIndexPageBody, 32, 500000};
// kwheel's own manifest, 8 values a file: room for 100,000 files.
constexpr JsonLimits kManifestLimits{64 << 20, 8, 1000000};

json parse_index_json(const std::string& text, const std::string& where) {
  auto j = parse_bounded_json(text, kIndexPageLimits, ErrorKind::input, where, "is it a package index? check the index URL");
  return j ? std::move(*j) : json(json::value_t::discarded);
}

}  // namespace

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
      else if (m.is_object()) f.metadata_sha256 = m.contains("sha256") && m["sha256"].is_string() ? m["sha256"].get<std::string>() : "";
    }
    if (e.contains("size") && e["size"].is_number_unsigned()) f.size = e["size"].get<uint64_t>();
    if (e.contains("yanked")) f.yanked = e["yanked"].is_string() || (e["yanked"].is_boolean() && e["yanked"].get<bool>());
    f.version = version_of(f.filename);
    out.push_back(std::move(f));
  }
  return out;
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
    for (const auto& a : anchors(body))
      if (!a.text.empty()) names.push_back(a.text);
  }
  return names;
}

namespace {

// Where the site goes: `--out site/` names `site`, and a symlink names its
// target. The new site is swapped in beside the directory it replaces, so
// swapping at the link would replace the link (which a web server's
// configuration may point at) with a directory and leave its target stale.
fs::path site_directory(const fs::path& out) {
  fs::path site = fs::absolute(out).lexically_normal();
  if (site.filename().empty() && site.has_parent_path()) site = site.parent_path();  // "site/"
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(site, ec); ++hops) {
    if (hops == 40) throw Error(ErrorKind::usage, "--out '" + out.string() + "': too many levels of symbolic links");
    const fs::path target = fs::read_symlink(site, ec);
    if (ec) throw Error(ErrorKind::io, "cannot read the symlink '" + site.string() + "': " + ec.message());
    // The target is relative to the link's real directory; a dangling one
    // is the site to create.
    site = fs::weakly_canonical(fs::canonical(site.parent_path()) / target, ec);
    if (ec) throw Error(ErrorKind::io, "cannot resolve --out '" + out.string() + "': " + ec.message());
    if (site.filename().empty() && site.has_parent_path()) site = site.parent_path();
  }
  return site;
}

}  // namespace

namespace {

// SITE's parent exists and the leaf names a directory; both are where the
// lock and the scratch site go.
void check_site_name(const fs::path& site, const SiteOptions& o) {
  const fs::path parent = site.parent_path();
  const std::string leaf = site.filename().string();
  if (leaf.empty() || leaf == "." || leaf == "..") throw Error(ErrorKind::usage, "--out '" + o.out.string() + "' must name a directory, e.g. --out site");
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw Error(ErrorKind::io, "cannot create '" + parent.string() + "': " + ec.message());
}

// One writer at a time per site.
UniqueFd lock_site(const fs::path& site) {
  const fs::path lock_path = site.parent_path() / ("." + site.filename().string() + ".kwheel-lock");
  UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (lock.get() < 0 || ::flock(lock.get(), LOCK_EX) != 0)
    throw Error(ErrorKind::io, "cannot lock '" + lock_path.string() + "': " + std::strerror(errno));
  return lock;
}

// A manifest file's GPU code; read from the served wheel for a file indexed
// before kwheel recorded it.
std::vector<std::string> recorded_gpu_code(const json& f, const fs::path& wheel) {
  if (!f.contains("gpu_code") || !f["gpu_code"].is_array()) return gpu_code_of(WheelArchive(wheel));
  std::vector<std::string> out;
  for (const auto& g : f["gpu_code"])
    if (g.is_string()) out.push_back(g.get<std::string>());
  return out;
}

// One file of the manifest, checked against the bytes the site serves.
Entry manifest_entry(const json& f, const fs::path& site, const fs::path& manifest, const SiteOptions& o) {
  // The manifest is on disk, where anyone may have edited it: every
  // field type-checked (nlohmann's value() throws on a wrong type).
  auto text = [&](const char* key) {
    return f.is_object() && f.contains(key) && f[key].is_string() ? f[key].get<std::string>() : std::string();
  };
  Entry e;
  e.filename = text("filename");
  e.project = text("project");
  e.version = text("version");
  e.sha256 = text("sha256");
  e.size = f.is_object() && f.contains("size") && f["size"].is_number_unsigned() ? f["size"].get<uint64_t>() : 0;
  e.requires_python = text("requires_python");
  e.metadata_sha256 = text("metadata_sha256");
  e.source = site / "files" / e.filename;
  if (e.filename.empty() || e.filename.find('/') != std::string::npos || e.project.empty())
    throw Error(ErrorKind::input, "'" + manifest.string() + "' lists a malformed file entry; rebuild the site into a new directory");
  // A served file must still be what was indexed: its hash is on every page.
  std::error_code ec;
  if (!fs::exists(e.source, ec) || sha256_file_hex(e.source) != e.sha256 || !fs::exists(fs::path(e.source) += ".metadata", ec) ||
      sha256_file_hex(fs::path(e.source) += ".metadata") != e.metadata_sha256)
    throw Error(ErrorKind::input, "'" + e.source.string() + "' (or its .metadata) is missing or no longer matches the sha256 recorded when it was indexed; "
                                  "restore the original file, or rebuild the site into a new directory");
  e.gpu_code = recorded_gpu_code(f, e.source);
  {
    std::ifstream in(fs::path(e.source) += ".metadata", std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    read_hub_revision(text.str(), e);
  }
  // Checked again on every run: the root and the signers may have changed.
  e.signature = signature_of(WheelArchive(e.source), o.signatures);
  return e;
}

// What a site keeps from the runs that wrote it, for runs that do not say
// it again: the pages' title and the index the install lines name.
struct KeptSettings {
  std::optional<std::string> title;
  std::optional<std::string> deps_index;
  std::optional<bool> variants;
};

// What an existing site holds, by filename (sorted output); empty for a new
// or empty directory.
std::map<std::string, Entry> read_site(const fs::path& site, KeptSettings& kept, const SiteOptions& o) {
  std::map<std::string, Entry> entries;
  std::error_code ec;
  if (!fs::is_directory(site, ec)) throw Error(ErrorKind::usage, "--out '" + site.string() + "' exists and is not a directory");
  const fs::path manifest = site / kManifest;
  if (!fs::exists(manifest, ec)) {
    if (!fs::is_empty(site, ec))
      throw Error(ErrorKind::usage, "'" + site.string() + "' is not empty and has no " + kManifest +
                                        ", so kwheel did not write it; pass --out with a new or empty directory");
    return entries;
  }
  std::ifstream in(manifest, std::ios::binary);
  // Read no more than the limit allows (parse_bounded_json then refuses it).
  std::string text(static_cast<size_t>(std::min<uintmax_t>(fs::file_size(manifest, ec), kManifestLimits.max_bytes + 1)), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  json m = parse_bounded_json(text, kManifestLimits, ErrorKind::input, "'" + manifest.string() + "'", "rebuild the site into a new directory")
               .value_or(json(json::value_t::discarded));
  if (m.is_discarded() || !m.is_object() || !m.contains("format") || m["format"] != kManifestFormat || !m.contains("files") || !m["files"].is_array())
    throw Error(ErrorKind::input, "'" + manifest.string() + "' is not a " + kManifestFormat + " manifest; rebuild the site into a new directory");
  if (m.contains("title") && m["title"].is_string()) kept.title = m["title"].get<std::string>();
  if (m.contains("deps_index") && m["deps_index"].is_string()) kept.deps_index = m["deps_index"].get<std::string>();
  if (m.contains("variants") && m["variants"].is_boolean()) kept.variants = m["variants"].get<bool>();
  for (const auto& f : m["files"]) {
    Entry e = manifest_entry(f, site, manifest, o);
    entries.emplace(e.filename, std::move(e));
  }
  return entries;
}

// A wheel given on the command line, read for its pages.
Entry given_entry(const fs::path& w, const SiteOptions& o) {
  WheelArchive archive(w);
  if (archive.filename().variant)
    throw Error(ErrorKind::input, "refusing to index '" + w.string() + "': it is a PEP 825 variant wheel, which pip cannot install from the site's "
                                  "indexes; give the plain build (kwheel index --variants makes its variant wheels)");
  if (auto problems = archive.verify_record(); !problems.empty())
    throw Error(ErrorKind::input, "refusing to index '" + w.string() + "': RECORD check failed: " + problems.front() + "; rebuild the wheel");
  Entry e;
  e.filename = w.filename().string();
  e.project = normalize_name(archive.field("Name"));
  e.version = archive.field("Version");
  e.sha256 = sha256_file_hex(w);
  e.size = fs::file_size(w);
  e.requires_python = archive.field("Requires-Python");
  e.metadata = archive.read(archive.dist_info() + "/METADATA");
  e.metadata_sha256 = sha256_hex(e.metadata);
  read_hub_revision(e.metadata, e);
  e.gpu_code = gpu_code_of(archive);
  e.signature = signature_of(archive, o.signatures);
  e.source = w;
  e.is_new = true;
  return e;
}

// The given wheels join `entries`; the report says which were added, which
// were already there with the same bytes, and which were kept untouched.
void add_wheels(const std::vector<fs::path>& wheels, const SiteOptions& o, const fs::path& site, std::map<std::string, Entry>& entries,
                SiteReport& report) {
  std::map<std::string, std::pair<fs::path, std::string>> given;  // filename -> first path given, sha256
  for (const auto& w : wheels) {
    Entry e = given_entry(w, o);
    if (auto [first, added] = given.try_emplace(e.filename, w, e.sha256); !added) {
      if (first->second.second == e.sha256) continue;  // the same file twice (a file and its directory), or a copy
      throw Error(ErrorKind::input, "two different wheels are named '" + e.filename + "': '" + first->second.first.string() + "' and '" + w.string() +
                                        "'; an index serves one file per name: pass only one of them");
    }
    auto it = entries.find(e.filename);
    if (it != entries.end()) {
      if (it->second.sha256 != e.sha256)
        throw Error(ErrorKind::input, "'" + e.filename + "' is already in " + site.string() + " with other bytes (sha256 " + it->second.sha256.substr(0, 12) +
                                          "..., this one " + e.sha256.substr(0, 12) + "...); published files never change: publish a new version");
      report.unchanged.push_back(e.filename);
      continue;
    }
    report.added.push_back(e.filename);
    entries.emplace(e.filename, std::move(e));
  }
  for (const auto& [name, e] : entries)
    if (!e.is_new && !given.count(name)) report.kept.push_back(name);
}

// Every wheel of the site whose page shows it unsigned or failed, as the
// pages show them all (a kept wheel's signature is checked again each run).
void report_signatures(const std::map<std::string, Entry>& entries, SiteReport& report) {
  for (const auto& [name, e] : entries)
    if (e.signature.standing == SignatureStanding::unsigned_ || e.signature.standing == SignatureStanding::invalid)
      report.signature_warnings.push_back({name, e.signature.standing, e.signature.reason});
}

// ROOT/files: new wheels copied with their METADATA, old ones linked.
void write_files(const fs::path& root, const std::map<std::string, Entry>& entries) {
  // mkdtemp makes it 0700; a site is for serving: the usual umask'd mode.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(root.c_str(), 0777 & ~mask);
  fs::create_directories(root / "files");
  std::error_code ec;
  for (const auto& [name, e] : entries) {
    const fs::path dest = root / "files" / name;
    if (e.is_new) {
      fs::copy_file(e.source, dest, ec);
      if (ec) throw Error(ErrorKind::io, "cannot copy '" + e.source.string() + "' into the site: " + ec.message());
      write_text(fs::path(dest) += ".metadata", e.metadata);
    } else {
      link_or_copy(e.source, dest);
      link_or_copy(fs::path(e.source) += ".metadata", fs::path(dest) += ".metadata");
    }
  }
}

// One simple/ tree of the entries `accept` takes, linking to the site's
// files/ `depth_to_site` levels up (or under `base`); returns its projects.
std::vector<std::string> write_index(const std::map<std::string, Entry>& entries, const std::string& base, const fs::path& simple_dir,
                                     int depth_to_site, const std::function<bool(const Entry&)>& accept) {
  std::map<std::string, std::vector<IndexFile>> projects;
  for (const auto& [name, e] : entries) {
    if (!accept(e)) continue;
    IndexFile f;
    f.filename = name;
    std::string prefix = base.empty() ? "" : base + "/";
    if (base.empty())
      for (int i = 0; i < depth_to_site; ++i) prefix += "../";
    f.url = prefix + "files/" + encode_component(name);
    f.sha256 = e.sha256;
    f.requires_python = e.requires_python;
    f.metadata_sha256 = e.metadata_sha256;
    f.size = e.size;
    f.version = e.version;
    projects[e.project].push_back(std::move(f));
  }
  std::vector<std::string> names;
  for (const auto& [project, files] : projects) {
    names.push_back(project);
    write_text(simple_dir / project / "index.html", render_project_html(project, files));
    write_text(simple_dir / project / "index.json", render_project_json(project, files));
  }
  write_text(simple_dir / "index.html", render_root_html(names));
  write_text(simple_dir / "index.json", render_root_json(names));
  return names;
}

// ROOT/simple and one sub-index per torch/compute label present; returns
// the sub-indexes by name.
std::map<std::string, LocalLabel> write_indexes(const fs::path& root, const std::map<std::string, Entry>& entries, const SiteOptions& o,
                                                SiteReport& report) {
  std::map<std::string, LocalLabel> variants;
  for (const auto& [_, e] : entries) {
    LocalLabel l = read_label(e.version);
    if (!l.index_name().empty()) variants.emplace(l.index_name(), l);
  }
  std::string base = o.base_url;
  while (base.ends_with("/")) base.pop_back();
  report.projects = write_index(entries, base, root / "simple", 2, [](const Entry&) { return true; });
  for (const auto& [vname, vlabel] : variants) {
    const LocalLabel& v = vlabel;
    write_index(entries, base, root / vname / "simple", 3, [&](const Entry& e) { return variant_accepts(v, read_label(e.version)); });
    report.variants.push_back(vname);
  }
  if (report.variant_index_on) {
    std::vector<VariantSource> sources;
    for (const auto& [name, e] : entries) sources.push_back({name, root / "files" / name, e.project});
    report.variant_index = write_variant_indexes(root, sources, base);
  }
  return variants;
}

// The rows of a kernel's matrix whose builds are in a variant index, with
// that index's URL.
std::map<std::string, std::string> variant_rows(const VariantIndexReport& v, const std::string& project, const std::string& index_root) {
  std::map<std::string, std::string> rows;
  for (const auto& w : v.wheels)
    if (normalize_name(parse_wheel_filename(w.filename, VariantLabels::accept).name) == project)
      rows[matrix_place(parse_wheel_filename(w.source).version).row] = index_root + w.index + "/simple/";
  return rows;
}

// SITE/index.html (every kernel) and SITE/kernels/<project>.html: the
// build matrices, linking the same files/ the simple pages do.
void write_matrix_pages(const fs::path& root, const std::map<std::string, Entry>& entries, const std::map<std::string, LocalLabel>& variants,
                        const SiteOptions& o, SiteReport& report) {
  std::map<std::string, std::vector<MatrixWheel>> kernels;
  for (const auto& [name, e] : entries) kernels[e.project].push_back(MatrixWheel{e.project, name, e.version, e.gpu_code, e.size, e.signature.summary, e.signature.standing, e.hub_repo,
                                                                   e.hub_commit, e.hub_url});
  std::string base = o.base_url;
  while (base.ends_with("/")) base.pop_back();
  MatrixPageSpec spec;
  spec.title = report.title;
  spec.files_base = base.empty() ? "files/" : base + "/files/";
  spec.link_kernel_pages = true;
  spec.deps_index = report.deps_index;
  spec.kernels.assign(kernels.begin(), kernels.end());
  for (const auto& [vname, vlabel] : variants) spec.sub_indexes.push_back({vname, vlabel.describe()});
  for (const auto& v : report.variant_index.indexes)
    spec.sub_indexes.push_back({v, "every build for " + v.substr(v.rfind('/') + 1) + " as PEP 825 variants: uv --preview-features wheel-variants picks the one for the GPU; pip cannot read it"});
  write_text(root / "index.html", render_matrix_page(spec));
  report.pages.push_back("index.html");
  spec.files_base = base.empty() ? "../files/" : base + "/files/";
  spec.to_root = "../";
  spec.link_kernel_pages = false;
  spec.install_lines = true;
  spec.index_root = base.empty() ? spec.to_root : base + "/";
  spec.sub_indexes.clear();
  for (const auto& [project, wheels] : kernels) {
    spec.kernels = {{project, wheels}};
    spec.variant_indexes = variant_rows(report.variant_index, project, spec.index_root);
    write_text(root / "kernels" / (project + ".html"), render_matrix_page(spec));
    report.pages.push_back("kernels/" + project + ".html");
  }
}

void write_manifest(const fs::path& root, const std::map<std::string, Entry>& entries, const KeptSettings& kept) {
  json files = json::array();
  for (const auto& [name, e] : entries)
    files.push_back({{"filename", name},
                     {"project", e.project},
                     {"version", e.version},
                     {"sha256", e.sha256},
                     {"size", e.size},
                     {"requires_python", e.requires_python},
                     {"metadata_sha256", e.metadata_sha256},
                     {"gpu_code", e.gpu_code}});
  json manifest{{"format", kManifestFormat}, {"files", files}};
  if (kept.title) manifest["title"] = *kept.title;
  if (kept.deps_index) manifest["deps_index"] = *kept.deps_index;
  if (kept.variants) manifest["variants"] = *kept.variants;
  write_text(root / kManifest, manifest.dump(1) + "\n");
}

// The new site (scratch) takes SITE's place; `scratch` is left holding what
// is to be removed: the old site, or nothing.
void swap_in(TempDir& scratch, const fs::path& site, bool exists) {
  const std::string tmpl = scratch.path().string();
  const fs::path root = scratch.path();
  if (!exists) {
    if (::rename(root.c_str(), site.c_str()) != 0)
      throw Error(ErrorKind::io, "cannot move the new site to '" + site.string() + "': " + std::strerror(errno));
    scratch.release();
  } else if (::renameat2(AT_FDCWD, root.c_str(), AT_FDCWD, site.c_str(), RENAME_EXCHANGE) == 0) {
    // `root` now names the old site; `scratch` removes it.
  } else if (errno == EINVAL || errno == ENOSYS) {
    // No atomic exchange on this filesystem: two renames, a moment without SITE.
    const fs::path old = fs::path(tmpl + ".old");
    if (::rename(site.c_str(), old.c_str()) != 0 || ::rename(root.c_str(), site.c_str()) != 0)
      throw Error(ErrorKind::io, "cannot swap the new site into '" + site.string() + "': " + std::strerror(errno));
    scratch.reset_to(old);
  } else {
    throw Error(ErrorKind::io, "cannot swap the new site into '" + site.string() + "': " + std::strerror(errno));
  }
}

}  // namespace

void check_page_url(const std::string& option, const std::string& url) {
  if (const size_t at = unprintable_at(url); at != std::string::npos)
    throw Error(ErrorKind::usage, option + " holds a control character or a byte that is not UTF-8 (byte " +
                                      std::to_string(static_cast<unsigned char>(url[at])) + " at offset " + std::to_string(at) +
                                      "), which no install line can be pasted with; percent-encode it (e.g. %0A)");
  if (const size_t at = url.find_first_of(" \t"); at != std::string::npos)
    throw Error(ErrorKind::usage, option + " holds a space at offset " + std::to_string(at) + ", which no URL holds; percent-encode it as %20");
}

SiteReport build_site(const std::vector<fs::path>& wheels, const SiteOptions& o) {
  if (o.out.empty()) throw Error(ErrorKind::usage, "--out SITE is required");
  // Before anything is read or written: the URLs go into pasted shell lines.
  check_page_url("--base-url", o.base_url);
  check_page_url("--deps-index-url", o.deps_index);
  const fs::path site = site_directory(o.out);
  check_site_name(site, o);
  const UniqueFd lock = lock_site(site);

  std::error_code ec;
  const bool exists = fs::exists(site, ec);
  if (o.title) check_page_title(*o.title);
  KeptSettings kept;
  std::map<std::string, Entry> entries = exists ? read_site(site, kept, o) : std::map<std::string, Entry>{};
  if (o.title) kept.title = o.title;
  if (!o.deps_index.empty()) kept.deps_index = o.deps_index;
  if (o.variants) kept.variants = o.variants;
  SiteReport report;
  report.site = site;
  report.title = kept.title.value_or(kDefaultPageTitle);
  report.deps_index = kept.deps_index.value_or(kDefaultDepsIndex);
  report.variant_index_on = kept.variants.value_or(false);
  add_wheels(wheels, o, site, entries, report);
  report_signatures(entries, report);

  // The new site, beside the old one.
  // Named for its owner, removed if interrupted, and swept by the next run if
  // this one is killed outright (temp_dir.hpp): a scratch site can be large.
  TempDir scratch = TempDir::beside(site, "new");
  const fs::path root = scratch.path();
  write_files(root, entries);
  const auto variants = write_indexes(root, entries, o, report);
  write_matrix_pages(root, entries, variants, o, report);
  write_manifest(root, entries, kept);
  swap_in(scratch, site, exists);
  return report;
}

}  // namespace kwheel
