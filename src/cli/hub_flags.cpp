#include "cli.hpp"

namespace kwheel::cli {

void add_hub_flags(CLI::App* sub, SourceRequest& a) {
  sub->add_option("--revision", a.revision, "Hub branch, tag or commit (default: the highest version branch vN)")->type_name("REF");
  url_option(sub->add_option("--endpoint", a.hub.endpoint, "Hub endpoint (default: $HF_ENDPOINT or https://huggingface.co)")->type_name("URL"));
  sub->add_option("--token", a.hub.token, "Hub token (default: $HF_TOKEN, then the token file under $HF_HOME)")->type_name("TOKEN");
  sub->add_flag("--offline", a.hub.offline, "Use the HF cache only (also HF_HUB_OFFLINE=1)");
  sub->add_option("--cache-dir", a.hub.cache_dir, "HF cache (default: $HF_HUB_CACHE or ~/.cache/huggingface/hub)")->type_name("DIR");
  sub->add_option("--repo-type", a.hub.repo_type,
                  "Hub repo type: kernel (default; a repo found only as a model repo is used as one) or model; forces the type")->type_name("kernel|model");
  // Kept as text: $KWHEEL_STALL_TIMEOUT is read by the same rule (parse_stall_timeout),
  // which refuses a bad value before any request, naming where it came from.
  sub->add_option("--stall-timeout", a.hub.stall_timeout,
                  "Seconds a transfer may move under 1 KiB/s (a stall, or a drip) before it is dropped and retried: 1 to 3600 (default 60; $KWHEEL_STALL_TIMEOUT)")
      ->type_name("SECONDS");
  sub->add_flag("--trust-remote-code", a.trust.trust_remote_code,
                "Build repos whose org the Hub does not mark trustedKernelPublisher (kernels' trust_remote_code=True); default: refuse them");
  sub->add_option("--trust-repo", a.trust.repos,
                  "Trust this repo (ORG/NAME) whatever its publisher, like kernels' trust_remote_code allowlist (repeatable)")->type_name("ORG/NAME");
  add_tls_flags(sub, a.hub.tls, true);
}

}  // namespace kwheel::cli
