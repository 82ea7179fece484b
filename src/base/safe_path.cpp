#include "kwheel/base/safe_path.hpp"

namespace kwheel {

std::string unsafe_path_reason(std::string_view path) {
  if (path.empty()) return "empty path";
  if (path.size() > 1024) return "path longer than 1024 bytes";
  if (path.front() == '/') return "absolute path";
  for (unsigned char c : path) {
    if (c == 0) return "NUL byte in path";
    if (c < 0x20 || c == 0x7f) return "control character in path";
    if (c == '\\') return "backslash in path";
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string_view part = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty()) return "empty path component";
    if (part == "." || part == "..") return "'" + std::string(part) + "' path component";
    if (part.size() > 255) return "path component longer than 255 bytes";
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return {};
}

}  // namespace kwheel
