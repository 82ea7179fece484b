// What a site holds: its wheels as the pages show them, read back from the
// manifest kwheel wrote (each checked against the bytes served, by its
// identity or, where that changed, its sha256) and joined by the wheels
// given this run. The manifest is read and written one file at a time: a
// site of 20,000 wheels is never one JSON document in memory.
#include "kwheel/index/site_manifest.hpp"

#include <fcntl.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/json_text.hpp"
#include "kwheel/base/test_seam.hpp"
#include "kwheel/index/site_directory.hpp"
#include "kwheel/index/site_identities.hpp"
#include "kwheel/index/site_manifest_reader.hpp"
#include "kwheel/index/site_wheels.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel::site {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kManifest = "kwheel-index.json";

const char* standing_name(SignatureStanding s) {
  switch (s) {
    case SignatureStanding::trusted: return "trusted";
    case SignatureStanding::unsigned_: return "unsigned";
    case SignatureStanding::invalid: return "invalid";
    case SignatureStanding::none: break;
  }
  return "none";
}


// Keys in nlohmann's order (sorted): the manifest is the same bytes as when
// it was built as json objects and dumped (tests/unit/index/site_manifest_test.cpp).
void write_variant(JsonWriter& w, const RecordedVariant& v) {
  w.begin_object();
  if (!v.wheel) {
    w.field("left_out", v.left_out);
    w.end_object();
    return;
  }
  const VariantWheel& x = *v.wheel;
  w.key("evidence").strings(x.evidence).field("filename", x.filename).field("index", x.index).field("label", x.label);
  w.field("metadata_sha256", x.metadata_sha256).key("properties").begin_object();
  for (const auto& [ns, features] : x.properties) {
    w.key(ns).begin_object();
    for (const auto& [feature, values] : features) w.key(feature).strings(values);
    w.end_object();
  }
  w.end_object().field("requires_python", x.requires_python).field("sha256", x.sha256).field("size", x.size);
  w.key("unclaimed").strings(x.unclaimed).field("version", x.version).end_object();
}

void write_file_entry(std::string& out, const std::string& name, const Entry& e) {
  JsonWriter w(out);
  w.begin_object().field("filename", name).key("gpu_code").strings(e.gpu_code);
  w.key("hub").begin_object().field("commit", e.hub_commit).field("repo", e.hub_repo).field("url", e.hub_url).end_object();
  w.field("metadata_sha256", e.metadata_sha256).field("project", e.project).field("requires_python", e.requires_python).field("sha256", e.sha256);
  w.key("signature").begin_object().field("reason", e.signature.reason).field("standing", standing_name(e.signature.standing));
  w.field("summary", e.signature.summary).end_object().field("size", e.size);
  if (e.variant) write_variant(w.key("variant"), *e.variant);
  w.field("version", e.version).end_object();
}



// A recorded file once it is the site's entry (a map node: a site of
// 20,000 is held once, not in a vector and again in the map), and what it
// lacks.
struct Pending {
  Entry* e = nullptr;
  bool gpu = false, hub = false, signature = false;
};


// A served file must still be what was indexed: its hash is on every page.
// Its identity unchanged since it was hashed, it is not read. `name` is in
// SITE/files/, `files` a handle of it.
bool still_served(int files, const std::string& name, const std::string& file, std::optional<FileIdentity>& recorded, const std::string& sha256,
                  bool wheel) {
  const auto id = identity_at(files, name.c_str());
  if (!id) return false;
  if (recorded && *recorded == *id) return true;
  if (wheel) note_wheel_read(file);
  if (sha256_file_hex(file) != sha256) return false;
  recorded = id;
  return true;
}

// One recorded file, checked against the bytes served, and what it lacks
// read from the wheel (opened once, only then).
void check_recorded(int files, const Pending& r, bool same_policy, const SiteOptions& o) {
  Entry& e = *r.e;
  const auto before = std::make_pair(e.identity, e.metadata_identity);
  const std::string metadata = e.source + ".metadata";
  if (!still_served(files, e.filename, e.source, e.identity, e.sha256, true) ||
      !still_served(files, e.filename + ".metadata", metadata, e.metadata_identity, e.metadata_sha256, false))
    throw Error(ErrorKind::input, "'" + e.source + "' (or its .metadata) is missing or no longer matches the sha256 recorded when it was indexed; "
                                  "restore the original file, or rebuild the site into a new directory");
  e.rehashed = before != std::make_pair(e.identity, e.metadata_identity);
  std::unique_ptr<WheelArchive> wheel;
  auto open = [&]() -> const WheelArchive& {
    if (!wheel) wheel = std::make_unique<WheelArchive>(e.source);
    return *wheel;
  };
  if (!r.gpu) e.gpu_code = gpu_code_of(open());
  // The verdict depends on the root and the signers: checked again when they changed.
  if (!r.signature || !same_policy) e.signature = signature_of(open(), o.signatures);
  if (!r.hub) {
    std::ifstream in(metadata, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    read_hub_revision(bytes.str(), e);
  }
  e.refreshed = !r.gpu || !r.signature || !same_policy || !r.hub;
}

// The manifest's files, each an entry of `entries` as soon as the parser
// has it: memory is the entries, never the document. The first of two
// entries with one filename counts.
std::vector<Pending> parse_manifest(const fs::path& site, const fs::path& manifest, KeptSettings& kept, std::map<std::string, Entry>& entries) {
  std::vector<Pending> files;
  read_manifest(manifest, site, kept, [&](RecordedFile&& r) {
    // kwheel writes the files sorted: each goes in at the end, no search.
    std::string name = r.e.filename;
    const size_t before = entries.size();
    const auto it = entries.emplace_hint(entries.end(), std::move(name), std::move(r.e));
    if (entries.size() > before) files.push_back({&it->second, r.gpu, r.hub, r.signature});
  });
  return files;
}

}  // namespace

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
  const std::vector<Pending> files = parse_manifest(site, manifest, kept, entries);
  read_identities(site, entries);
  const bool same_policy = kept.signature_policy == signature_policy(o.signatures);
  // Every recorded file is in SITE/files/: stat'ed through one handle of it
  // (none: each file is missing, and refused as such).
  const UniqueFd served(::open((site / "files").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  for_each_parallel(files.size(), o.jobs, [&](size_t i) { check_recorded(served.get(), files[i], same_policy, o); });
  return entries;
}

void check_unrecorded(const fs::path& served, const Entry& e) {
  if (!identity_of(served)) return;
  note_wheel_read(served);
  if (sha256_file_hex(served) == e.sha256) return;
  throw Error(ErrorKind::input, "'" + served.string() + "' is in the site though its manifest lists no such file (a run stopped part-way left it) and " +
                                    "holds other bytes than '" + e.source + "'; its pages may have served it: publish a new version, or remove " +
                                    "the file if no one installed it");
}

void add_wheels(const std::vector<std::string>& wheels, const SiteOptions& o, const fs::path& site, std::map<std::string, Entry>& entries,
                SiteReport& report, const std::function<void(Entry&)>& stage) {
  using SiteWheel = std::map<std::string, Entry>::value_type;
  // A wheel whose file is the one the site indexed (the site's own file,
  // linked, or the one it was placed from) is not read again.
  std::vector<const SiteWheel*> known(wheels.size(), nullptr);
  // On --jobs threads, in runs of consecutive wheels (each run stats through
  // one handle of their directory): a nightly DIST is thousands of files.
  const size_t runs = std::min<size_t>(wheels.size(), 16);
  for_each_parallel(runs, o.jobs, [&](size_t r) {
    DirectoryStat given_dir;
    for (size_t i = r * wheels.size() / runs; i < (r + 1) * wheels.size() / runs; ++i) {
      const std::string_view given = wheels[i];
      const auto it = entries.find(std::string(given.substr(given.rfind('/') + 1)));  // the filename, without building a path
      if (it == entries.end()) continue;
      const auto id = given_dir.identity(wheels[i]);
      if (id && (it->second.identity == id || it->second.source_identity == id)) known[i] = &*it;
    }
  });
  std::vector<size_t> to_read;
  for (size_t i = 0; i < wheels.size(); ++i)
    if (!known[i]) to_read.push_back(i);
  // Each wheel is read into a node of `entries`, and joining moves the node
  // in: the new wheels are never held twice (a vector of 20,000 Entry and
  // the map made from it), and what `given` points at stays where it is.
  using Node = std::map<std::string, Entry>::node_type;
  std::vector<Node> read(to_read.size());
  for_each_parallel(to_read.size(), o.jobs, [&](size_t k) {
    Entry e = given_entry(wheels[to_read[k]], o);
    if (stage) stage(e);
    // Staged, its METADATA is a file; an empty string assigned over it
    // keeps the buffer (libstdc++), 20,000 of them 10 MB: swapped out, freed.
    if (e.metadata_staged) std::string().swap(e.metadata);
    std::map<std::string, Entry> one;
    one.emplace(e.filename, std::move(e));
    read[k] = one.extract(one.begin());
  });
  std::vector<Node*> fresh(wheels.size(), nullptr);
  for (size_t k = 0; k < to_read.size(); ++k) fresh[to_read[k]] = &read[k];

  // filename -> first path given, its sha256: views of the wheels' own
  // strings, which stay put (in `entries`, or in `read` until the end).
  std::map<std::string_view, std::pair<const std::string*, const std::string*>> given;
  for (size_t i = 0; i < wheels.size(); ++i) {
    const std::string& w = wheels[i];
    const std::string& filename = known[i] ? known[i]->first : fresh[i]->key();
    const std::string& sha256 = known[i] ? known[i]->second.sha256 : fresh[i]->mapped().sha256;
    if (auto [first, added] = given.try_emplace(filename, &w, &sha256); !added) {
      if (*first->second.second == sha256) continue;  // the same file twice (a file and its directory), or a copy
      throw Error(ErrorKind::input, "two different wheels are named '" + filename + "': '" + *first->second.first + "' and '" + w +
                                        "'; an index serves one file per name: pass only one of them");
    }
    auto it = entries.find(filename);
    if (it != entries.end()) {
      if (it->second.sha256 != sha256)
        throw Error(ErrorKind::input, "'" + filename + "' is already in " + site.string() + " with other bytes (sha256 " + it->second.sha256.substr(0, 12) +
                                          "..., this one " + sha256.substr(0, 12) + "...); published files never change: publish a new version");
      report.unchanged.push_back(filename);
      continue;
    }
    report.added.push_back(filename);
    entries.insert(std::move(*fresh[i]));
  }
  for (const auto& [name, e] : entries)
    if (!e.is_new && !given.count(name)) report.kept.push_back(name);
}

void report_signatures(const std::map<std::string, Entry>& entries, SiteReport& report) {
  for (const auto& [name, e] : entries)
    if (e.signature.standing == SignatureStanding::unsigned_ || e.signature.standing == SignatureStanding::invalid)
      report.signature_warnings.push_back({name, e.signature.standing, e.signature.reason});
}

void record_variants(const VariantIndexReport& report, std::map<std::string, Entry>& entries) {
  for (const auto& w : report.wheels)
    if (auto it = entries.find(w.source); it != entries.end()) it->second.variant = std::make_shared<const RecordedVariant>(RecordedVariant{w, ""});
  for (const auto& l : report.left_out)
    if (auto it = entries.find(l.filename); it != entries.end()) it->second.variant = std::make_shared<const RecordedVariant>(RecordedVariant{std::nullopt, l.reason});
}

void write_manifest(const fs::path& root, const std::map<std::string, Entry>& entries, const KeptSettings& kept) {
  json head{{"format", kManifestFormat}};
  if (kept.title) head["title"] = *kept.title;
  if (kept.deps_index) head["deps_index"] = *kept.deps_index;
  if (kept.variants) head["variants"] = *kept.variants;
  if (kept.base_url) head["base_url"] = *kept.base_url;
  if (kept.signature_policy) head["signature_policy"] = *kept.signature_policy;
  if (kept.kwheel_version) head["kwheel_version"] = *kept.kwheel_version;
  std::string text = head.dump();
  text.pop_back();  // the closing brace: "files" follows, one file a line
  const fs::path path = root / kManifest;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text << ",\n\"files\": [";
  std::string line;
  bool first = true;
  for (const auto& [name, e] : entries) {
    line.assign(first ? "\n" : ",\n");
    write_file_entry(line, name, e);
    out << line;
    first = false;
  }
  out << "\n]}\n";
  out.close();
  if (!out) throw Error(ErrorKind::io, "cannot write '" + path.string() + "': the disk may be full");
}

}  // namespace kwheel::site
