#pragma once
// Unit-test helper: what a call that must fail says.
#include <gtest/gtest.h>

#include <string>

#include "kwheel/base/error.hpp"

namespace kwheel::testing {

// Runs `f`, which must throw a kwheel::Error of `kind`; returns its message
// (and records a test failure, returning "", when it throws none).
template <class F>
std::string error_of(F&& f, ErrorKind kind = ErrorKind::input) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no kwheel::Error thrown";
  return "";
}

}  // namespace kwheel::testing
