// The one rule for untrusted paths (Hub listings, wheel members, cache
// refs): what it accepts, and the reason it gives for what it refuses.
#include "kwheel/base/safe_path.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace kwheel;

TEST(UnsafePath, AcceptsOrdinaryPaths) {
  for (auto ok : {"a", "build/torch-universal/img2gray/__init__.py", "a/b c/d", "img2gray/\xc3\xa9t\xc3\xa9.py",
                  "a,b\"c", "..a/b..", ".hidden/x"})
    EXPECT_EQ(unsafe_path_reason(ok), "") << ok;
}

TEST(UnsafePath, RejectsWithReason) {
  struct Case {
    std::string path;
    const char* why;
  } cases[] = {
      {"", "empty path"},
      {"/etc/passwd", "absolute path"},
      {"../x", "'..' path component"},
      {"build/../../x", "'..' path component"},
      {"build/v/..", "'..' path component"},
      {"./x", "'.' path component"},
      {"a//b", "empty path component"},
      {"a/", "empty path component"},
      {"a\\..\\b", "backslash"},
      {"C:\\x", "backslash"},
      {std::string("a\0b", 3), "NUL"},
      {"a\nb", "control character"},
      {"a\rb", "control character"},
      {"a\tb", "control character"},
      {"a\x7f", "control character"},
      {std::string(256, 'n'), "component longer than 255"},
      {std::string(1025, 'n'), "longer than 1024"},
  };
  for (const auto& c : cases) {
    std::string why = unsafe_path_reason(c.path);
    EXPECT_NE(why.find(c.why), std::string::npos) << "'" << c.path << "' -> '" << why << "'";
  }
  // Limits are inclusive.
  EXPECT_EQ(unsafe_path_reason(std::string(255, 'n')), "");
  std::string long_ok;
  while (long_ok.size() + 101 <= 1024) long_ok += std::string(100, 'n') + "/";
  long_ok += "x";
  EXPECT_LE(long_ok.size(), 1024u);
  EXPECT_EQ(unsafe_path_reason(long_ok), "");
}
