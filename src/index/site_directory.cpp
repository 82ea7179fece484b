// The site's directory: where --out points, its lock, the commit that puts
// a new site in place or updates an old one in place, and the file writes
// the site is made of.
#include "kwheel/index/site_directory.hpp"

#include <fcntl.h>
#include <linux/fs.h>  // FICLONE
#include <stdio.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/base/interrupt.hpp"
#include "kwheel/base/test_seam.hpp"
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

// One writer at a time per site. The lock is beside SITE, not in it: the
// swap replaces SITE's directory, and a lock inside would go with it.
UniqueFd lock_site(const fs::path& site, bool wait, const std::function<void(const std::string&)>& waiting) {
  const fs::path lock_path = site.parent_path() / ("." + site.filename().string() + ".kwheel-lock");
  UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (lock.get() < 0) throw Error(ErrorKind::io, "cannot lock '" + lock_path.string() + "': " + std::strerror(errno));
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) == 0) return lock;
  if (errno != EWOULDBLOCK) throw Error(ErrorKind::io, "cannot lock '" + lock_path.string() + "': " + std::strerror(errno));
  if (!wait)
    throw Error(ErrorKind::io, "another kwheel index is updating '" + site.string() + "' (it holds '" + lock_path.string() +
                                   "'); run again when it is done, or without --no-wait to wait for it");
  if (waiting) waiting("waiting for another kwheel index to finish updating " + site.string() + " (lock " + lock_path.string() + ")");
  while (::flock(lock.get(), LOCK_EX) != 0)
    if (errno != EINTR) throw Error(ErrorKind::io, "cannot lock '" + lock_path.string() + "': " + std::strerror(errno));
  return lock;
}

void write_text(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) throw Error(ErrorKind::io, "cannot write '" + p.string() + "': " + std::strerror(errno));
}

const char* placed_name(Placed p) {
  switch (p) {
    case Placed::reflink: return "reflink";
    case Placed::hard_link: return "hard link";
    case Placed::copy: return "copy";
  }
  return "copy";
}

namespace {

// FICLONE: a new inode sharing `from`'s blocks (btrfs, XFS, bcachefs);
// false where the filesystem has none (ext4, tmpfs) or `to` is on another.
// Set once FICLONE failed for want of support: a filesystem without
// reflinks is not asked again for each of a run's thousands of wheels (each
// try creates and removes a file).
std::atomic<bool> no_reflinks{false};

bool reflink(const fs::path& from, const fs::path& to) {
  if (no_reflinks.load(std::memory_order_relaxed)) return false;
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.get() < 0) return false;
  UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (out.get() < 0) return false;
  if (::ioctl(out.get(), FICLONE, in.get()) == 0) {
    // The served file is readable as a copy would be, whatever `from`'s mode.
    struct stat st {};
    if (::fstat(in.get(), &st) == 0) ::fchmod(out.get(), st.st_mode & 0777);
    return true;
  }
  if (errno == EOPNOTSUPP || errno == ENOTTY || errno == EINVAL || errno == EXDEV || errno == ENOSYS) no_reflinks = true;
  ::unlink(to.c_str());
  return false;
}

}  // namespace

Placed place_file(const fs::path& from, const fs::path& to, Placement how) {
  if (how == Placement::link && reflink(from, to)) return Placed::reflink;
  if (how == Placement::link && ::link(from.c_str(), to.c_str()) == 0) return Placed::hard_link;
  std::error_code ec;
  fs::copy_file(from, to, ec);
  if (ec) throw Error(ErrorKind::io, "cannot copy '" + from.string() + "' into the site as '" + to.string() + "': " + ec.message());
  return Placed::copy;
}

bool PageSink::keep(const fs::path& rel) const {
  if (previous.empty()) return false;
  struct stat st {};
  if (::stat((previous / rel).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  note(rel);
  return true;
}

void PageSink::write(const fs::path& rel, const std::string& content) const {
  note(rel);
  if (!previous.empty()) {
    const fs::path old = previous / rel;
    struct stat st {};
    // Same size first: most changed pages differ in length, and reading
    // them back would cost what writing does.
    if (::stat(old.c_str(), &st) == 0 && S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) == content.size()) {
      std::ifstream in(old, std::ios::binary);
      std::string bytes(content.size(), '\0');
      in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (in && bytes == content) return;
    }
  }
  write_text(root / rel, content);
}

void move_in_new_site(TempDir& scratch, const fs::path& site) {
  if (::rename(scratch.path().c_str(), site.c_str()) != 0)
    throw Error(ErrorKind::io, "cannot move the new site to '" + site.string() + "': " + std::strerror(errno));
  scratch.release();
}

namespace {

// The files below `top`/`rel`, as paths relative to `top`; `skip` (relative
// to `top`) is not entered.
void walk(const fs::path& top, const fs::path& rel, const std::string& skip, std::vector<std::string>& files) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(top / rel, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path r = rel / it->path().filename();
    const std::string name = r.generic_string();
    if (name == skip) continue;
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      walk(top, r, skip, files);
    } else {
      files.push_back(name);
    }
  }
}

// The order in which a reader never sees a page naming a file that is not
// there yet: files first (wheels, their .metadata, variant wheels), pages
// next, the home page (which links the others) after them, the manifest
// (what the next run trusts) last.
int commit_rank(const std::string& rel) {
  if (rel == "kwheel-index.json") return 3;
  if (rel == "index.html") return 2;
  if (rel.starts_with("files/") || rel.starts_with(std::string(kVariantsDir) + "/files/")) return 0;
  return 1;
}

void rename_into(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (::rename(from.c_str(), to.c_str()) != 0)
    throw Error(ErrorKind::io, "cannot move '" + from.string() + "' into the site as '" + to.string() + "': " + std::strerror(errno) +
                                   "; the site serves what it did before this file, and the next run completes it");
}

}  // namespace

void commit_in_place(const TempDir& scratch, const fs::path& site, const std::set<std::string>& produced, bool prune) {
  std::vector<std::string> written;
  walk(scratch.path(), "", "", written);
  std::stable_sort(written.begin(), written.end(), [](const std::string& a, const std::string& b) { return commit_rank(a) < commit_rank(b); });
  // Everything of the previous site but its files/, to remove what this
  // run no longer produces (a sub-index of --no-variants).
  std::vector<std::string> old_files;
  if (prune) walk(site, "", "files", old_files);
  const DeferInterrupts hold;
  for (const auto& rel : written) {
    // A Ctrl-C here waits for the last rename (tests/integration/test_index_update.py).
    if (commit_rank(rel) > 0) interrupt_point("index-commit", false);
    rename_into(scratch.path() / rel, site / rel);
  }
  std::error_code ec;
  const std::set<std::string> moved(written.begin(), written.end());
  // The directories a removal may have emptied: those above a removed file.
  // Only they are looked into (a site has hundreds of page directories, and
  // most nights remove nothing).
  std::set<std::string, std::greater<>> emptied;  // deepest first
  for (const auto& rel : old_files) {
    if (produced.count(rel) || moved.count(rel)) continue;
    fs::remove(site / rel, ec);
    for (fs::path dir = fs::path(rel).parent_path(); !dir.empty(); dir = dir.parent_path()) emptied.insert(dir.generic_string());
  }
  for (const auto& rel : emptied)
    if (fs::is_empty(site / rel, ec)) fs::remove(site / rel, ec);
}

}  // namespace kwheel::site
