#pragma once
// Shared by the libFuzzer targets here (built and run by scripts/fuzz).
// A target feeds its input to the function the product calls on untrusted
// bytes; any outcome but a result or kwheel::Error is a bug, and so is a
// result that breaks a FUZZ_CHECK (an invariant the product relies on).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

// Unlike assert(), active whatever NDEBUG says; abort() is a libFuzzer crash.
#define FUZZ_CHECK(cond)                                                                      \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond);     \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

inline std::string fuzz_string(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}
