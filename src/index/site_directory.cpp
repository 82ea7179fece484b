// The site's directory: where --out points, its lock, the swap that puts a
// new site in the old one's place, and the file writes the site is made of.
#include "kwheel/index/site_directory.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "kwheel/base/error.hpp"
#include "kwheel/index/simple_index.hpp"

namespace kwheel::site {
namespace fs = std::filesystem;

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

}  // namespace kwheel::site
