#pragma once
// A whole file read into memory, for the small inputs kwheel parses whole
// (metadata.json, Sigstore bundles and roots): its size is checked before a
// byte is read, so a huge or endless file (a FIFO, /dev/zero) costs nothing.
#include <cstdint>
#include <filesystem>
#include <string>

namespace kwheel {

// The bytes of `path`. Errors name `what` and the path, and end with `fix`
// when one is given: not a regular file Error(not_found), over `limit`
// bytes Error(input), unreadable Error(io).
std::string read_small_file(const std::filesystem::path& path, std::uint64_t limit, const std::string& what, const std::string& fix = "");

}  // namespace kwheel
