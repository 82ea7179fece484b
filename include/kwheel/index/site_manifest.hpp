#pragma once
// The site builder's (index/simple_index.hpp) record of what a site holds:
// one Entry per wheel as the pages show it, read back from the manifest
// (SITE/kwheel-index.json) with every file checked against the bytes
// served, joined by the wheels given this run, and written back.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/index/simple_index.hpp"

namespace kwheel::site {

// What SITE/kwheel-index.json says it is, first thing.
inline constexpr const char* kManifestFormat = "kwheel-index 1";

// The stat of a file that changes when its bytes are rewritten: in place
// (mtime, size) or replaced by another file (inode, device).
struct FileIdentity {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t ino = 0, dev = 0;
  bool operator==(const FileIdentity&) const = default;
};

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
  // What --variants made of it (index/variant_index.hpp), for later runs.
  // Behind a pointer: most sites have none, and a VariantWheel inline would
  // grow every entry by ~450 bytes (9 MB of a site of 20,000).
  std::shared_ptr<const RecordedVariant> variant;
  // Where the bytes come from for this run. A string, not a path: a path
  // keeps each of its components as another path, ~400 bytes a wheel, 8 MB
  // of a site of 20,000 (heaptrack); it converts where a path is taken.
  std::string source;
  std::string metadata;          // METADATA bytes (new wheels) until staged; old ones are linked
  bool metadata_staged = false;  // already written as the new site's files/<wheel>.metadata
  bool is_new = false;
  // The site's file and its .metadata as last indexed (size, mtime, inode):
  // while they hold, the bytes are the ones hashed, and nothing is read.
  std::optional<FileIdentity> identity, metadata_identity;
  // The wheel as it was given (dist/x.whl), so that giving the same file
  // again is recognised without reading it, however it was placed.
  std::optional<FileIdentity> source_identity;
  bool refreshed = false;  // something the pages show had to be read again this run
  bool rehashed = false;   // its identity changed and its bytes were hashed again (same sha256)
};

// What a site keeps from the runs that wrote it, for runs that do not say
// it again: the pages' title and the index the install lines name.
struct KeptSettings {
  std::optional<std::string> title;
  std::optional<std::string> deps_index;
  std::optional<bool> variants;
  // What the pages were last written with, besides the wheels: a run with
  // no new wheel and the same of all of these rewrites nothing.
  std::optional<std::string> base_url, signature_policy, kwheel_version;
};

// What an existing site holds, by filename (sorted output); empty for a new
// or empty directory. Refuses a non-empty SITE kwheel did not write and a
// served file whose bytes changed since it was indexed.
std::map<std::string, Entry> read_site(const std::filesystem::path& site, KeptSettings& kept, const SiteOptions& o);

// A new wheel's name already in SITE/files/ though the manifest lists no
// such file: a run stopped part-way through its commit (kill -9, power
// loss) left it, and its pages may name it. The same bytes are fine (the
// commit puts the same file there again); others are refused
// (Error(input)), as a changed wheel under a published name is.
void check_unrecorded(const std::filesystem::path& served, const Entry& e);

// The given wheels join `entries`; the report says which were added, which
// were already there with the same bytes, and which were kept untouched.
// `stage` is called (on the reading thread) for each wheel read, to write
// its METADATA out at once: a site of 20,000 new wheels does not hold them
// all in memory.
void add_wheels(const std::vector<std::string>& wheels, const SiteOptions& o, const std::filesystem::path& site,
                std::map<std::string, Entry>& entries, SiteReport& report, const std::function<void(Entry&)>& stage = {});

// Every wheel of the site whose page shows it unsigned or failed, as the
// pages show them all (a kept wheel's signature is checked again each run).
void report_signatures(const std::map<std::string, Entry>& entries, SiteReport& report);

// Each build's outcome in the variant index (`report`), kept in its entry
// for the manifest.
void record_variants(const VariantIndexReport& report, std::map<std::string, Entry>& entries);

// ROOT/kwheel-index.json: what the next run reads back.
void write_manifest(const std::filesystem::path& root, const std::map<std::string, Entry>& entries, const KeptSettings& kept);

}  // namespace kwheel::site
