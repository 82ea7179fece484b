#pragma once
// Paths from untrusted sources (Hub listings, wheel members, cache refs)
// are checked by one rule before they name a file: the Hub client, the HF
// cache, the repo layout and the wheel reader all refuse the same paths.
#include <string>
#include <string_view>

namespace kwheel {

// Why `path` may not name a file in a wheel or on disk, or "" if it may:
// no absolute paths, '..', '.', empty components, backslashes, NUL or control
// characters, over-long names.
std::string unsafe_path_reason(std::string_view path);

}  // namespace kwheel
