#include "kwheel/hub/hf_config.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "kwheel/base/environment.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/secret_environment.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/base/url_userinfo.hpp"
#include "kwheel/hub/http.hpp"
#include "kwheel/hub/url.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

bool truthy(const std::optional<std::string>& v) {
  if (!v) return false;
  const std::string s = ascii_lower(*v);
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

// os.path.expanduser then os.path.expandvars, as huggingface_hub applies
// them to HF_HOME, HF_HUB_CACHE and HF_TOKEN_PATH: `HF_HOME=~/hf` must name
// the cache `kernels` uses, not a directory called "~". Unknown variables
// stay as written, as Python leaves them.
std::string expand_path(const std::string& value) {
  std::string s = value;
  if (s == "~" || s.starts_with("~/")) s = env_value("HOME").value_or("/") + s.substr(1);
  static const std::regex var(R"(\$(\w+|\{[^}]*\}))");
  std::string out;
  auto last = s.cbegin();
  for (auto it = std::sregex_iterator(s.begin(), s.end(), var); it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1].str();
    if (name.starts_with("{")) name = name.substr(1, name.size() - 2);
    const char* v = std::getenv(name.c_str());
    out.append(last, s.cbegin() + it->position());
    out += v ? std::string(v) : it->str();
    last = s.cbegin() + it->position() + it->length();
  }
  return out.append(last, s.cend());
}

fs::path hf_home() {
  if (auto h = env_value("HF_HOME")) return expand_path(*h);
  if (auto x = env_value("XDG_CACHE_HOME")) return fs::path(*x) / "huggingface";
  return fs::path(env_value("HOME").value_or("/")) / ".cache" / "huggingface";
}

}  // namespace

fs::path hub_cache_dir() {
  if (auto h = env_value("HF_HUB_CACHE")) return expand_path(*h);
  if (auto l = env_value("HUGGINGFACE_HUB_CACHE")) return expand_path(*l);
  return hf_home() / "hub";
}

bool looks_like_repo_id(const std::string& text) {
  static const std::regex re(R"(^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$)");
  // huggingface_hub's validate_repo_id also refuses "--" (the separator of
  // cache folder names, so such an id would be ambiguous there) and ".git".
  return std::regex_match(text, re) && text.find("..") == std::string::npos && text.find("--") == std::string::npos &&
         !text.ends_with(".git");
}

void check_repo_id(const std::string& repo_id) {
  if (!looks_like_repo_id(repo_id))
    throw Error(ErrorKind::usage, "'" + display_url(repo_id) + "' is not a Hub repo id; expected ORG/NAME, e.g. kernels-community/activation (or a directory path that exists)");
}

HubConfig resolve_hub_config(const HubFlags& flags, const std::function<void(const std::string&)>& warn) {
  HubConfig c;
  if (flags.endpoint) {
    register_url_credentials(*flags.endpoint);
    c.endpoint = *flags.endpoint;
  } else if (auto e = secret_env_value("HF_ENDPOINT")) {
    c.endpoint = *e;
  }
  c.endpoint = lower_scheme(c.endpoint);
  while (c.endpoint.ends_with("/")) c.endpoint.pop_back();
  if (!c.endpoint.starts_with("http://") && !c.endpoint.starts_with("https://"))
    throw Error(ErrorKind::usage, std::string(flags.endpoint ? "--endpoint" : "HF_ENDPOINT") + " '" + display_url(c.endpoint) +
                                      "' must start with http:// or https://");

  if (flags.repo_type) {
    c.repo_type = *flags.repo_type;
    c.repo_type_forced = true;
  }
  if (c.repo_type != "model" && c.repo_type != "kernel")
    throw Error(ErrorKind::usage, "--repo-type '" + c.repo_type + "': use model or kernel");

  c.cache_dir = flags.cache_dir ? fs::path(*flags.cache_dir) : hub_cache_dir();

  // HF_HUB_OFFLINE or, when it is unset, the older TRANSFORMERS_OFFLINE.
  auto offline = env_value("HF_HUB_OFFLINE");
  c.offline = flags.offline || truthy(offline ? offline : env_value("TRANSFORMERS_OFFLINE"));

  if (auto v = flags.stall_timeout ? flags.stall_timeout : env_value("KWHEEL_STALL_TIMEOUT"))
    c.stall_timeout = parse_stall_timeout(*v, flags.stall_timeout ? "--stall-timeout" : "KWHEEL_STALL_TIMEOUT");

  // The order every command shares (connection.hpp): a machine set up for
  // huggingface_hub (SSL_CERT_FILE) or for pip works with kwheel too.
  c.tls = resolve_tls(tls_sources(flags.tls));

  // HF_TOKEN, or the older HUGGING_FACE_HUB_TOKEN; one that is blank once
  // trimmed counts as none, so the token file is read, as huggingface_hub's
  // _clean_token makes it.
  const char* token_var = secret_env_value("HF_TOKEN") ? "HF_TOKEN" : "HUGGING_FACE_HUB_TOKEN";
  const std::string env_token = trim(secret_env_value(token_var).value_or(""));
  if (flags.token) {
    c.token = Secret(*flags.token);
    c.token_source = "--token";
  } else if (!env_token.empty()) {
    c.token = Secret(env_token);
    c.token_source = token_var;
  } else {
    fs::path file = expand_path(env_value("HF_TOKEN_PATH").value_or((hf_home() / "token").string()));
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
