// kwheel::Error: the exit code of each kind is the one error.hpp documents
// (and `kwheel --help` and docs/publishing.md list); what() is one
// printable line whatever the message quotes, with registered secrets
// redacted; the reason travels beside the message.
#include "kwheel/base/error.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "kwheel/base/secret.hpp"

using namespace kwheel;

TEST(Error, KindsMapToTheDocumentedExitCodes) {
  const std::pair<ErrorKind, int> documented[] = {
      {ErrorKind::usage, 2}, {ErrorKind::input, 3}, {ErrorKind::network, 4},    {ErrorKind::not_found, 5},
      {ErrorKind::auth, 6},  {ErrorKind::io, 7},    {ErrorKind::validation, 8}, {ErrorKind::policy, 9},
  };
  for (const auto& [kind, code] : documented) {
    const Error e(kind, "x");
    EXPECT_EQ(e.kind(), kind);
    EXPECT_EQ(e.exit_code(), code);
  }
}

TEST(Error, MessageIsKeptAsGiven) {
  const Error e(ErrorKind::input, "build/v/k.so: not an ELF object; rebuild the kernel");
  EXPECT_EQ(std::string(e.what()), "build/v/k.so: not an ELF object; rebuild the kernel");
  EXPECT_EQ(e.reason(), Reason::unspecified);
  const std::runtime_error& base = e;  // catchable as any standard error
  EXPECT_EQ(std::string(base.what()), std::string(e.what()));
}

TEST(Error, ReasonTravelsBesideTheMessage) {
  EXPECT_EQ(Error(ErrorKind::not_found, "no such repo", Reason::repo_not_found).reason(), Reason::repo_not_found);
  EXPECT_EQ(Error(ErrorKind::not_found, "no such file", Reason::entry_not_found).reason(), Reason::entry_not_found);
}

TEST(Error, WhatIsOnePrintableLine) {
  // A name from a hostile wheel: a newline, NUL, an escape sequence, a stray byte.
  static const char kName[] = "bad name 'a\nb\0c\x1b[2J\xff'";
  const Error e(ErrorKind::input, std::string(kName, sizeof kName - 1));
  EXPECT_EQ(std::string(e.what()), "bad name 'a\\x0ab\\x00c\\x1b[2J\\xff'");
  EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
}

TEST(Error, RegisteredSecretsAreRedacted) {
  const std::string token = "hf_errorTestSecret_90e1f";
  register_secret(Secret(token));
  const Error after(ErrorKind::auth, "HTTP 401 for token " + token + " at https://h/?t=" + token);
  EXPECT_EQ(std::string(after.what()), "HTTP 401 for token *** at https://h/?t=***");
  EXPECT_EQ(std::string(Error(ErrorKind::auth, "no secret here").what()), "no secret here");
}
