#include "kwheel/hub/system_ca.hpp"

#include <curl/curl.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "kwheel/hub/curl_handles.hpp"

namespace kwheel {

std::string first_ca_bundle(std::span<const char* const> candidates) {
  for (const char* path : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec) && ::access(path, R_OK) == 0) return path;
  }
  return {};
}

namespace {

// libcurl's compiled-in CA file or directory (CURLINFO_CAINFO/CAPATH, curl
// 7.84+), asked of a fresh handle; false when it has neither.
bool curl_has_default_ca() {
  curl::Easy easy(curl::library().easy_init());
  if (!easy) return false;
  char* cainfo = nullptr;
  char* capath = nullptr;
  curl::library().easy_getinfo(easy.get(), CURLINFO_CAINFO, &cainfo);
  curl::library().easy_getinfo(easy.get(), CURLINFO_CAPATH, &capath);
  return (cainfo && *cainfo) || (capath && *capath);
}

}  // namespace

const std::string& system_ca_bundle() {
  static const std::string bundle = curl_has_default_ca() ? std::string() : first_ca_bundle(kSystemCaBundles);
  return bundle;
}

}  // namespace kwheel
