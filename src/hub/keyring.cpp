#include "kwheel/hub/keyring.hpp"

#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "kwheel/base/error.hpp"
#include "kwheel/base/process.hpp"

namespace kwheel {
namespace fs = std::filesystem;

KeyringProvider parse_keyring_provider(const std::string& value, const std::string& named) {
  if (value == "auto") return KeyringProvider::automatic;
  if (value == "subprocess") return KeyringProvider::subprocess;
  if (value == "disabled") return KeyringProvider::disabled;
  throw Error(ErrorKind::usage, named + " '" + value + "': use auto, subprocess or disabled (kwheel runs the keyring program; it has no 'import' provider)");
}

std::optional<fs::path> keyring_program(KeyringProvider provider) {
  if (provider == KeyringProvider::disabled) return std::nullopt;
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / "keyring";
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::optional<KeyringCredentials> keyring_get(const fs::path& program, const std::string& service, const std::optional<std::string>& username) {
  std::vector<std::string> argv{program.string(), "--mode=creds", "--output=json", "get", service};
  if (username) argv.push_back(*username);
  ProcessOptions o;
  o.set_env = {{"PYTHONIOENCODING", "utf-8"}};
  // A backend that waits for a desktop prompt must not hold kwheel forever.
  o.timeout = std::chrono::seconds(60);
  o.max_output = 64 << 10;
  const ProcessResult r = run_process(argv, o);
  const std::string fix = "; check it with: keyring --mode=creds --output=json get " + service;
  if (r.timed_out) throw Error(ErrorKind::input, "keyring (" + program.string() + ") did not answer within 60 s for " + service + fix);
  // pip's own test for a keyring without --mode=creds.
  if (r.exit_code == 2 && r.err.find("unrecognized arguments") != std::string::npos && r.err.find("--mode=creds") != std::string::npos)
    throw Error(ErrorKind::input, "keyring (" + program.string() + ") is older than 25.2.1, which pip and kwheel need; upgrade it (pip install -U keyring)");
  if (r.exit_code != 0) return std::nullopt;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (!j.is_object() || !j.contains("username") || !j.contains("password") || !j["username"].is_string() || !j["password"].is_string())
    throw Error(ErrorKind::input, "keyring (" + program.string() + ") printed no {\"username\", \"password\"} object for " + service + fix);
  KeyringCredentials c{j["username"].get<std::string>(), Secret(j["password"].get<std::string>())};
  register_secret(c.password);
  return c;
}

}  // namespace kwheel
