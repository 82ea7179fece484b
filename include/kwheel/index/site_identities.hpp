#pragma once
// The identities of SITE's files (Entry::identity and the others) from one
// run for the next: beside SITE (.SITE.kwheel-identities), not in it, since
// they are this machine's (inode numbers, mtimes) and kwheel-index.json
// stays the same bytes for the same wheels. A cache only: missing or
// stale, the files are hashed instead.
#include <filesystem>
#include <map>
#include <string>

#include "kwheel/index/site_manifest.hpp"

namespace kwheel::site {

// Into the entries read from the manifest; names it does not list are skipped.
void read_identities(const std::filesystem::path& site, std::map<std::string, Entry>& entries);

// Written after the commit; a failed write leaves the old file (or none).
void write_identities(const std::filesystem::path& site, const std::map<std::string, Entry>& entries);

}  // namespace kwheel::site
