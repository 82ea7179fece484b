#include "kwheel/base/small_file.hpp"

#include <algorithm>
#include <fstream>

#include "kwheel/base/error.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

std::string limit_text(std::uint64_t limit) {
  return limit % (1 << 20) == 0 ? std::to_string(limit >> 20) + " MiB" : std::to_string(limit) + " bytes";
}

}  // namespace

std::string read_small_file(const fs::path& path, std::uint64_t limit, const std::string& what, const std::string& fix) {
  std::error_code ec;
  const std::string named = what + " '" + path.string() + "'";
  const std::string then = fix.empty() ? "" : "; " + fix;
  if (!fs::is_regular_file(path, ec)) throw Error(ErrorKind::not_found, named + " is not a file" + then);
  const auto size = fs::file_size(path, ec);
  if (ec) throw Error(ErrorKind::io, "cannot read " + named + ": " + ec.message());
  if (size > limit) throw Error(ErrorKind::input, named + " is " + std::to_string(size) + " bytes, over the " + limit_text(limit) + " limit" + then);
  // One byte past the limit at most: a file that grew meanwhile is refused, not read to its end.
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<size_t>(std::min<std::uint64_t>(size, limit) + 1), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw Error(ErrorKind::io, "cannot read " + named);
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > limit) throw Error(ErrorKind::input, named + " grew past the " + limit_text(limit) + " limit while it was read" + then);
  return text;
}

}  // namespace kwheel
