// What a site holds: its wheels as the pages show them, read back from the
// manifest kwheel wrote (each checked against the bytes served) and joined
// by the wheels given this run.
#include "kwheel/index/site_manifest.hpp"

#include <ctime>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kwheel/base/bounded_json.hpp"
#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/index/site_directory.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/trust/wheel_signature.hpp"
#include "kwheel/validate/wheel_objects.hpp"
#include "kwheel/wheel/core_metadata.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel::site {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kManifest = "kwheel-index.json";
constexpr const char* kManifestFormat = "kwheel-index 1";

// kwheel's own manifest, 8 values a file: room for 100,000 files.
constexpr JsonLimits kManifestLimits{64 << 20, 8, 1000000};

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

// Who signed the wheel's metadata.json, checked as a build checks it; a
// wheel kwheel did not build says so. Every wheel of a site had its RECORD
// checked when it joined, and its sha256 checked on every run since.
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

}  // namespace

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

}  // namespace kwheel::site
