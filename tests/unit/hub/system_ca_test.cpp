// Which CA bundle a libcurl without a compiled-in one is given: the first of
// the distributions' paths that is a readable file.
#include "kwheel/hub/system_ca.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "file_support.hpp"
#include "kwheel/base/temp_dir.hpp"

using namespace kwheel;
namespace fs = std::filesystem;

TEST(SystemCa, FirstReadableFileWins) {
  TempDir t("system-ca");
  const fs::path rhel = t.path() / "pki/tls/certs/ca-bundle.crt";
  const fs::path debian = t.path() / "ssl/certs/ca-certificates.crt";
  kwheel::testing::write_file(rhel, "-----BEGIN CERTIFICATE-----\n");
  const std::string missing = debian.string(), found = rhel.string();
  const char* candidates[] = {missing.c_str(), found.c_str()};
  EXPECT_EQ(first_ca_bundle(candidates), found);  // Debian's path absent: RHEL's
  kwheel::testing::write_file(debian, "-----BEGIN CERTIFICATE-----\n");
  EXPECT_EQ(first_ca_bundle(candidates), missing);  // both there: the first
}

TEST(SystemCa, DirectoriesAndNothingAreNotBundles) {
  TempDir t("system-ca");
  const std::string dir = t.path().string(), absent = (t.path() / "none.pem").string();
  const char* candidates[] = {dir.c_str(), absent.c_str()};
  EXPECT_EQ(first_ca_bundle(candidates), "");
}

TEST(SystemCa, DistributionPathsInOrder) {
  // Debian's first (this machine's libcurl default), then RHEL's two.
  EXPECT_STREQ(kSystemCaBundles[0], "/etc/ssl/certs/ca-certificates.crt");
  EXPECT_STREQ(kSystemCaBundles[1], "/etc/pki/tls/certs/ca-bundle.crt");
  EXPECT_STREQ(kSystemCaBundles[2], "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem");
}
