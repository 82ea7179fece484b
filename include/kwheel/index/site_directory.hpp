#pragma once
// The site builder's (index/simple_index.hpp) directory: where --out
// points, the lock that keeps one writer per site, the swap that puts a new
// site in the old one's place, and the file writes a site is made of.
#include <filesystem>
#include <string>

#include "kwheel/base/temp_dir.hpp"
#include "kwheel/base/unique_fd.hpp"

namespace kwheel {
struct SiteOptions;
}

namespace kwheel::site {

// Where the site goes: `--out site/` names `site`, and a symlink names its
// target, so that the swap replaces the directory a web server serves, not
// the link pointing at it.
std::filesystem::path site_directory(const std::filesystem::path& out);

// Refuses (Error(usage)) an --out whose leaf names no directory; creates
// SITE's parent, where the lock and the scratch site go.
void check_site_name(const std::filesystem::path& site, const SiteOptions& o);

// Blocks until this process is SITE's only writer; held while the fd lives.
UniqueFd lock_site(const std::filesystem::path& site);

// The new site (scratch) takes SITE's place in one rename where the
// filesystem can exchange; `scratch` is left holding what is to be removed:
// the old site, or nothing.
void swap_in(TempDir& scratch, const std::filesystem::path& site, bool exists);

// Creates the parent directories; throws Error(io) naming the file.
void write_text(const std::filesystem::path& p, const std::string& content);
// A hard link where the filesystem allows (the site's old wheels are not
// copied on every run), else a copy.
void link_or_copy(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace kwheel::site
