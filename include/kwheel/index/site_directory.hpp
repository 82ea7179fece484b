#pragma once
// The site builder's (index/simple_index.hpp) directory: where --out
// points, the lock that keeps one writer per site, the swap that puts a new
// site in the old one's place, and the file writes a site is made of.
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "kwheel/base/temp_dir.hpp"
#include "kwheel/base/unique_fd.hpp"

#include "kwheel/index/simple_index.hpp"  // SiteOptions, Placement

namespace kwheel::site {

// Where the site goes: `--out site/` names `site`, and a symlink names its
// target, so that the swap replaces the directory a web server serves, not
// the link pointing at it.
std::filesystem::path site_directory(const std::filesystem::path& out);

// Refuses (Error(usage)) an --out whose leaf names no directory; creates
// SITE's parent, where the lock and the scratch site go.
void check_site_name(const std::filesystem::path& site, const SiteOptions& o);

// Makes this process SITE's only writer; held while the fd lives. When
// another run holds the site, `waiting` is told once (one progress line)
// and the call blocks, or, with `wait` false, throws Error(io) naming the
// lock and the fix.
UniqueFd lock_site(const std::filesystem::path& site, bool wait = true, const std::function<void(const std::string&)>& waiting = {});

// A new site (SITE did not exist): `scratch`, which holds all of it,
// becomes SITE in one rename.
void move_in_new_site(TempDir& scratch, const std::filesystem::path& site);

// An existing site updated in place: `scratch` holds only what this run
// wrote (new files, changed pages, the manifest) at their paths below SITE.
// New files go in first (no page names them yet), then each changed page
// (a rename over the old one: a reader sees one or the other, whole), the
// manifest last; then, with `prune`, pages of SITE that this run did not
// produce (written or kept: `produced`) are removed, as are directories that
// leaves empty. Without it SITE is not walked: a run with the settings of
// the last one only adds wheels, so it produces every page the last one did.
// SITE/files/ is never walked: its files are never removed or replaced.
// Runs with interrupts deferred: Ctrl-C waits for the renames to end.
void commit_in_place(const TempDir& scratch, const std::filesystem::path& site, const std::set<std::string>& produced, bool prune = true);

// Creates the parent directories; throws Error(io) naming the file.
void write_text(const std::filesystem::path& p, const std::string& content);

// How a wheel's bytes got into the site.
enum class Placed { reflink, hard_link, copy };
const char* placed_name(Placed p);

// A new file of the site with `from`'s bytes at `to` (which must not
// exist): with Placement::link, a reflink (its own inode, sharing the
// blocks: a later write to `from` does not reach it), else a hard link (the
// same inode), else a copy (another filesystem); with Placement::copy, a
// copy. Throws Error(io) naming both.
Placed place_file(const std::filesystem::path& from, const std::filesystem::path& to, Placement how);

// Where the pages of the site being built go. write(REL, content) puts
// ROOT/REL, unless PREVIOUS (the site being updated in place) holds the
// same bytes at REL: then nothing is written, and the page keeps its inode
// and mtime (web caches and rsync see nothing new). `previous` "" (a new
// site) always writes. Every REL the new site has, written or kept, is
// recorded in `produced`, for commit_in_place.
struct PageSink {
  std::filesystem::path root, previous;
  // Projects whose pages are as the previous site has them (no wheel joined
  // and every setting the same): keep() keeps those pages without rendering.
  std::set<std::string> stable;
  std::shared_ptr<std::set<std::string>> produced = std::make_shared<std::set<std::string>>();
  void write(const std::filesystem::path& rel, const std::string& content) const;
  // write() for a page rendered in pieces (page_stream.cpp): `render` passes
  // each piece to the function it is given; they go to the file as they
  // come, compared with the previous site's page on the way, and a page
  // whose bytes all match is left as it is, as write() leaves it.
  void write_streamed(const std::filesystem::path& rel, const std::function<void(const std::function<void(std::string_view)>&)>& render) const;
  // Keeps PREVIOUS/REL as it is; false (nothing done) when there is no such
  // page, or no previous site.
  bool keep(const std::filesystem::path& rel) const;
  // REL is the new site's without a write through the sink (a variant wheel
  // kept from the previous site).
  void note(const std::filesystem::path& rel) const { produced->insert(rel.generic_string()); }
};

}  // namespace kwheel::site
