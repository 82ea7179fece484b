#include "kwheel/hub/hf_config.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/http.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

bool truthy(const std::optional<std::string>& v) {
  if (!v) return false;
  const std::string s = ascii_lower(*v);
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

fs::path hf_home() {
  if (auto h = env("HF_HOME")) return *h;
  if (auto x = env("XDG_CACHE_HOME")) return fs::path(*x) / "huggingface";
  return fs::path(env("HOME").value_or("/")) / ".cache" / "huggingface";
}

}  // namespace

bool looks_like_repo_id(const std::string& text) {
  static const std::regex re(R"(^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$)");
  return std::regex_match(text, re) && text.find("..") == std::string::npos;
}

void check_repo_id(const std::string& repo_id) {
  if (!looks_like_repo_id(repo_id))
    throw Error(ErrorKind::usage, "'" + repo_id + "' is not a Hub repo id; expected ORG/NAME, e.g. kernels-community/activation (or a directory path that exists)");
}

HubConfig resolve_hub_config(const HubFlags& flags, const std::function<void(const std::string&)>& warn) {
  HubConfig c;
  if (flags.endpoint) c.endpoint = *flags.endpoint;
  else if (auto e = env("HF_ENDPOINT")) c.endpoint = *e;
  while (c.endpoint.ends_with("/")) c.endpoint.pop_back();
  if (!c.endpoint.starts_with("http://") && !c.endpoint.starts_with("https://"))
    throw Error(ErrorKind::usage, "endpoint '" + c.endpoint + "' must start with http:// or https://");

  if (flags.repo_type) {
    c.repo_type = *flags.repo_type;
    c.repo_type_forced = true;
  }
  if (c.repo_type != "model" && c.repo_type != "kernel")
    throw Error(ErrorKind::usage, "--repo-type '" + c.repo_type + "': use model or kernel");

  if (flags.cache_dir) c.cache_dir = *flags.cache_dir;
  else if (auto h = env("HF_HUB_CACHE")) c.cache_dir = *h;
  else if (auto l = env("HUGGINGFACE_HUB_CACHE")) c.cache_dir = *l;
  else c.cache_dir = hf_home() / "hub";

  c.offline = flags.offline || truthy(env("HF_HUB_OFFLINE"));

  if (auto v = flags.stall_timeout ? flags.stall_timeout : env("KWHEEL_STALL_TIMEOUT"))
    c.stall_timeout = parse_stall_timeout(*v, flags.stall_timeout ? "--stall-timeout" : "KWHEEL_STALL_TIMEOUT");

  // REQUESTS_CA_BUNDLE is what huggingface_hub (requests) honours: a
  // machine set up for it works with kwheel too.
  const char* ca_from = "--ca-bundle";
  if (flags.ca_bundle) c.ca_bundle = *flags.ca_bundle;
  else if (auto k = env("KWHEEL_CA_BUNDLE")) c.ca_bundle = *k, ca_from = "KWHEEL_CA_BUNDLE";
  else if (auto r = env("REQUESTS_CA_BUNDLE")) c.ca_bundle = *r, ca_from = "REQUESTS_CA_BUNDLE";
  if (!c.ca_bundle.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(c.ca_bundle, ec) || ::access(c.ca_bundle.c_str(), R_OK) != 0)
      throw Error(ErrorKind::usage, std::string(ca_from) + " '" + c.ca_bundle + "' is not a readable file; give a PEM file of CA certificates");
  }

  if (flags.token) {
    c.token = Secret(*flags.token);
    c.token_source = "--token";
  } else if (auto t = env("HF_TOKEN")) {
    c.token = Secret(trim(*t));
    c.token_source = "HF_TOKEN";
  } else {
    fs::path file = env("HF_TOKEN_PATH").value_or((hf_home() / "token").string());
    std::ifstream in(file);
    if (in) {
      struct stat st {};
      if (::stat(file.c_str(), &st) == 0 && (st.st_mode & S_IROTH))
        warn("token file " + file.string() + " is readable by every user; run: chmod 600 " + file.string());
      std::string tok((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      tok = trim(tok);
      if (!tok.empty()) {
        c.token = Secret(tok);
        c.token_source = file.string();
      }
    }
  }
  return c;
}

}  // namespace kwheel
