#include "cli.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/url_userinfo.hpp"
#include "kwheel/hub/url.hpp"

namespace kwheel::cli {

CLI::Option* url_option(CLI::Option* option) {
  // CLI11 calls this for each value as it reads the command line, before
  // any command's code (and any message) sees it. A path that exists (a
  // source directory named "a:b@c") is no URL: its parts are not secrets.
  return option->each([](const std::string& value) {
    if (std::error_code ec; !std::filesystem::exists(value, ec)) register_url_credentials(value);
  });
}

std::string checked_index_url(const std::string& option, const std::string& value, const std::string& what) {
  std::string url = lower_scheme(value);
  if (!url.starts_with("http://") && !url.starts_with("https://") && !url.starts_with("file://"))
    throw Error(ErrorKind::usage, option + " '" + display_url(value) + "' must be an http://, https:// or file:// " + what);
  return url;
}

}  // namespace kwheel::cli
