#pragma once
// The site builder's (index/simple_index.hpp) directory: where --out
// points, the lock that keeps one writer per site, the swap that puts a new
// site in the old one's place, and the file writes a site is made of.
#include <filesystem>
#include <functional>
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

// The new site (scratch) takes SITE's place in one rename where the
// filesystem can exchange; `scratch` is left holding what is to be removed:
// the old site, or nothing.
void swap_in(TempDir& scratch, const std::filesystem::path& site, bool exists);

// Creates the parent directories; throws Error(io) naming the file.
void write_text(const std::filesystem::path& p, const std::string& content);
// A hard link where the filesystem allows (the site's old wheels are not
// copied on every run), else a copy.
void link_or_copy(const std::filesystem::path& from, const std::filesystem::path& to);

// How a wheel's bytes got into the site.
enum class Placed { reflink, hard_link, copy };
const char* placed_name(Placed p);

// A new file of the site with `from`'s bytes at `to` (which must not
// exist): a reflink (its own inode, sharing the blocks: a later write to
// `from` does not reach it), else, with Placement::link, a hard link (the
// same inode), else a copy (another filesystem, or Placement::copy).
// Throws Error(io) naming both.
Placed place_file(const std::filesystem::path& from, const std::filesystem::path& to, Placement how);

// Where the pages of the site being built go. write(REL, content) puts
// ROOT/REL; when the previous site holds the same bytes at PREVIOUS/REL,
// that file is linked instead, so a page whose content did not change keeps
// its inode and mtime (web caches and rsync see nothing new). `previous` ""
// (a new site) always writes; `dry` writes nothing (a run that only renders
// what it reports).
struct PageSink {
  std::filesystem::path root, previous;
  bool dry = false;
  // Projects whose pages are as the previous site has them (no wheel joined
  // and every setting the same): keep() links those pages without rendering.
  std::set<std::string> stable;
  void write(const std::filesystem::path& rel, const std::string& content) const;
  // write() for a page rendered in pieces (page_stream.cpp): `render` passes
  // each piece to the function it is given; they go to the file as they
  // come, compared with the previous site's page on the way, and a page
  // whose bytes all match is linked as write() links it.
  void write_streamed(const std::filesystem::path& rel, const std::function<void(const std::function<void(std::string_view)>&)>& render) const;
  // Links PREVIOUS/REL as ROOT/REL; false (nothing done) when there is no
  // such page, or no previous site.
  bool keep(const std::filesystem::path& rel) const;
};

}  // namespace kwheel::site
