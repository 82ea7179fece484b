#pragma once
// Writing a test's input files: one helper for test_support.hpp and
// elf_fixtures.hpp alike.
#include <filesystem>
#include <fstream>
#include <string>

namespace kwheel::testing {

// Writes `content` to `p`, creating its directories.
inline void write_file(const std::filesystem::path& p, const std::string& content) {
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

}  // namespace kwheel::testing
