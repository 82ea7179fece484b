// PageSink::write_streamed: a page too large to hold as one string (the
// home page of a site of 20,000 wheels) written as it is rendered. Apart
// from site_directory.cpp so that the sink's other writes stay as they are.
#include <sys/stat.h>
#include <unistd.h>  // unlink

#include <cerrno>
#include <cstring>
#include <fstream>

#include "kwheel/base/error.hpp"
#include "kwheel/index/site_directory.hpp"

namespace kwheel::site {
namespace fs = std::filesystem;

namespace {

// The previous site's page, read alongside the new one's pieces: `same`
// holds while every byte so far matched.
class PreviousPage {
 public:
  explicit PreviousPage(const fs::path& old) {
    struct stat st {};
    if (old.empty() || ::stat(old.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    in_.open(old, std::ios::binary);
    same_ = in_.is_open();
  }
  void compare(std::string_view piece) {
    if (!same_ || piece.empty()) return;
    buffer_.resize(piece.size());
    in_.read(buffer_.data(), static_cast<std::streamsize>(piece.size()));
    same_ = in_.gcount() == static_cast<std::streamsize>(piece.size()) && std::memcmp(buffer_.data(), piece.data(), piece.size()) == 0;
  }
  // Every byte matched and the old page has no more.
  bool same() { return same_ && in_.peek() == std::char_traits<char>::eof(); }

 private:
  std::ifstream in_;
  std::string buffer_;
  bool same_ = false;
};

}  // namespace

void PageSink::write_streamed(const fs::path& rel, const std::function<void(const std::function<void(std::string_view)>&)>& render) const {
  note(rel);
  const fs::path dest = root / rel;
  const fs::path old = previous.empty() ? fs::path() : previous / rel;
  fs::create_directories(dest.parent_path());
  PreviousPage before(old);
  std::ofstream out(dest, std::ios::binary | std::ios::trunc);
  render([&](std::string_view piece) {
    out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    before.compare(piece);
  });
  out.close();
  if (!out) throw Error(ErrorKind::io, "cannot write '" + dest.string() + "': " + std::strerror(errno));
  // The same bytes: the site's page stays as it is (its inode and mtime),
  // as write() leaves it; the copy just written is not moved in.
  if (before.same()) ::unlink(dest.c_str());
}

}  // namespace kwheel::site
