#pragma once
// Where the Hub is and who we are to it, resolved the way huggingface_hub
// resolves it, so kwheel and the `kernels` package agree on endpoint, token
// and cache: flags first, then HF_* variables, then the files under HF_HOME.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "kwheel/base/secret.hpp"
#include "kwheel/hub/connection.hpp"

namespace kwheel {

struct HubConfig {
  std::string endpoint = "https://huggingface.co";  // no trailing slash
  Secret token;
  std::string token_source;            // "--token", "HF_TOKEN", or the token file's path; never the token
  std::filesystem::path cache_dir;     // HF_HUB_CACHE
  bool offline = false;
  // Kernels are kernel-type repos (kernels >= 0.14 loads no other); a repo
  // found only as a model repo is still built, unless --repo-type forces one.
  std::string repo_type = "kernel";    // "kernel" or "model"
  bool repo_type_forced = false;
  std::chrono::seconds stall_timeout{60};  // --stall-timeout / KWHEEL_STALL_TIMEOUT: abort a transfer idle this long
  TlsSettings tls;                     // --cert/--ca-bundle, then the CA variables (connection.hpp); --client-cert
};

struct HubFlags {
  std::optional<std::string> endpoint;
  std::optional<std::string> token;
  std::optional<std::string> cache_dir;
  bool offline = false;
  std::optional<std::string> repo_type;
  TlsFlags tls;
  std::optional<std::string> stall_timeout;
};

// `warn` receives one-line warnings (e.g. a world-readable token file).
HubConfig resolve_hub_config(const HubFlags& flags, const std::function<void(const std::string&)>& warn);

// "org/name" with the Hub's allowed characters; Error(usage) otherwise.
void check_repo_id(const std::string& repo_id);
// The cache huggingface_hub uses when no flag names one: HF_HUB_CACHE,
// else HUGGINGFACE_HUB_CACHE, else HF_HOME/hub (~ and $VAR expanded as
// huggingface_hub expands them).
std::filesystem::path hub_cache_dir();
bool looks_like_repo_id(const std::string& text);

}  // namespace kwheel
