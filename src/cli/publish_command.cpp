#include <cstdlib>
#include <iomanip>
#include <iostream>

#include "cli.hpp"
#include "kwheel/base/environment.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/secret_environment.hpp"
#include "kwheel/index/publish.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

namespace {

struct PublishArgs {
  std::vector<std::string> inputs;
  std::string repository_url, repository, config_file, username, password, stall_timeout, index_url;
  TlsFlags tls;
  bool skip_existing = false;
  unsigned jobs = 4;
  unsigned attempts = 5;
};

// The option if given, else the environment variable twine reads (one
// that holds a credential through the secret list, which registers it).
std::optional<std::string> option_or_env(const CLI::Option* opt, const std::string& value, const char* env) {
  if (opt->count()) return value;
  return is_secret_variable(env) ? secret_env_value(env) : env_value(env);
}

// A variable's value; unset reads as empty, which tls_sources skips.
std::string env_text(const char* name) { return env_value(name).value_or(""); }

}  // namespace

namespace {

// One line per file as its upload ends; under -q only what failed, on stderr.
void print_upload(const UploadResult& r, const Output& out) {
  if (out.json) return;
  if (out.quiet) {
    if (r.status == UploadResult::Status::failed) out.error(r.file.filename().string() + ": " + r.message);
    return;
  }
  std::cout << std::left << std::setw(9) << (r.status == UploadResult::Status::failed ? "FAILED" : status_name(r.status)) << " "
            << r.file.filename().string();
  if (r.status == UploadResult::Status::failed) std::cout << "\n          " << r.message;
  else if (!r.message.empty()) std::cout << " (" << r.message << ")";
  std::cout << std::endl;
}

}  // namespace

void register_publish(CLI::App& app, Output& out, int& exit_code) {
  auto a = std::make_shared<PublishArgs>();
  auto* sub = app.add_subcommand("publish", "Upload wheels to a package index with the upload API twine uses (pypiserver, devpi, PyPI, ...)");
  sub->add_option("wheels", a->inputs, "Wheel files or directories of wheels")->type_name("WHEEL|DIR")->required();
  auto* url = url_option(sub->add_option("--repository-url", a->repository_url, "Upload URL (TWINE_REPOSITORY_URL); ~/.pypirc is then not read")->type_name("URL"));
  auto* repo = sub->add_option("-r,--repository", a->repository, "A repository section of ~/.pypirc (TWINE_REPOSITORY)")->type_name("NAME");
  sub->add_option("--config-file", a->config_file, "The .pypirc to read (default ~/.pypirc)")->type_name("FILE");
  auto* user = sub->add_option("-u,--username", a->username, "Username (TWINE_USERNAME); __token__ for an API token")->type_name("NAME");
  auto* pass = sub->add_option("-p,--password", a->password, "Password or token; prefer TWINE_PASSWORD: arguments are visible to other users")->type_name("PASSWORD");
  add_tls_flags(sub, a->tls);  // after each flag: TWINE_CERT / TWINE_CLIENT_CERT, the .pypirc section, the shared variables
  sub->add_flag("--skip-existing", a->skip_existing,
                "A file the index already has (409, or 400 \"already exists\") counts as success when the index's simple page gives it the same sha256; other bytes fail");
  auto* index_url = url_option(sub->add_option("--index-url", a->index_url,
                                    "The simple index --skip-existing compares with (default: pypiserver http://HOST/simple/, devpi http://HOST/USER/INDEX/+simple/, "
                                    "from the upload URL); gets the credentials only on the upload URL's origin")->type_name("URL"));
  sub->add_option("-j,--jobs", a->jobs, "Uploads at once")->capture_default_str()->check(CLI::Range(1u, 64u));
  sub->add_option("--attempts", a->attempts, "Tries per file on 5xx answers and network errors (4xx are never retried)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 20u));
  auto* stall = sub->add_option("--stall-timeout", a->stall_timeout,
                                "Seconds an upload or its answer may move under 1 KiB/s (a stall, or a drip) before it is dropped and retried: 1 to 3600 (default 60; $KWHEEL_STALL_TIMEOUT)")
                    ->type_name("SECONDS");
  add_output_flags(sub, out);
  add_examples(sub, {"TWINE_USERNAME=alice TWINE_PASSWORD=... kwheel publish dist --repository-url https://pypi.example.org/",
                     "kwheel publish dist -r internal                 # a section of ~/.pypirc",
                     "kwheel publish dist -r internal --skip-existing  # re-runs upload only what is missing"});
  sub->callback([a, url, repo, user, pass, stall, index_url, &out, &exit_code] {
    RepositorySources src;
    src.repository_url = option_or_env(url, a->repository_url, "TWINE_REPOSITORY_URL");
    src.repository = option_or_env(repo, a->repository, "TWINE_REPOSITORY");
    src.config_file = a->config_file;
    src.username = option_or_env(user, a->username, "TWINE_USERNAME");
    if (auto p = option_or_env(pass, a->password, "TWINE_PASSWORD")) src.password = Secret(*p);
    src.tls = tls_sources(a->tls, {{"TWINE_CERT", env_text("TWINE_CERT")}}, {{"TWINE_CLIENT_CERT", env_text("TWINE_CLIENT_CERT")}});
    if (pass->count()) out.warn("--password on the command line is visible to other users of this machine; prefer TWINE_PASSWORD");
    a->password.assign(a->password.size(), '\0');

    Repository repository = resolve_repository(src);
    auto wheels = wheel_files(a->inputs);
    PublishOptions o;
    o.skip_existing = a->skip_existing;
    if (index_url->count()) o.index_url = a->index_url;
    o.jobs = a->jobs;
    o.max_attempts = a->attempts;
    if (auto v = option_or_env(stall, a->stall_timeout, "KWHEEL_STALL_TIMEOUT"))
      o.stall_timeout = parse_stall_timeout(*v, stall->count() ? "--stall-timeout" : "KWHEEL_STALL_TIMEOUT");
    o.user_agent = "kwheel/" KWHEEL_VERSION;
    out.info("publishing " + std::to_string(wheels.size()) + " file(s) to " + repository.url +
             (repository.username.empty() ? " (no credentials)" : " as " + repository.username));
    auto results = publish(wheels, repository, o, [&out](const UploadResult& r) { print_upload(r, out); });
    size_t uploaded = 0, existing = 0, failed = 0;
    nlohmann::json files = nlohmann::json::array();
    exit_code = 0;
    for (const auto& r : results) {
      files.push_back(to_json(r));
      uploaded += r.status == UploadResult::Status::uploaded;
      existing += r.status == UploadResult::Status::exists;
      if (r.status == UploadResult::Status::failed) {
        ++failed;
        if (!exit_code) exit_code = r.exit_code ? r.exit_code : static_cast<int>(ErrorKind::network);
      }
    }
    if (out.json)
      out.emit_json({{"ok", failed == 0}, {"repository", repository.url}, {"username", repository.username}, {"ca_from", repository.tls.ca_from}, {"uploaded", uploaded},
                     {"existing", existing}, {"failed", failed}, {"files", files}});
    else
      out.info("summary: " + std::to_string(uploaded) + " uploaded, " + std::to_string(existing) + " already there, " + std::to_string(failed) + " failed");
  });
}

}  // namespace kwheel::cli
