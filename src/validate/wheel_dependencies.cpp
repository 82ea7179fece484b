#include "kwheel/validate/wheel_dependencies.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "kwheel/base/embedded_python.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/process.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/requirement.hpp"

extern char** environ;

namespace kwheel {
namespace fs = std::filesystem;

std::string DependencySources::describe() const {
  std::string out = index_url ? "--index-url " + display_url(*index_url) : "";
  for (const auto& d : find_links) out += (out.empty() ? "" : " ") + ("--find-links " + d);
  return out;
}

namespace {

std::string comma_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// pip's reason: its last "ERROR:" line (the requirement it could not get),
// else its last line.
std::string pip_reason(const std::string& err) {
  std::string reason;
  for (const auto& line : split(err, '\n'))
    if (line.starts_with("ERROR: ")) reason = trim(line.substr(7));
  return reason.empty() ? last_lines(err, 1) : reason;
}

// pip reads its index and TLS settings from kwheel's word alone: no
// config file, no PIP_* of the caller; the login travels in the index URL
// of its environment, never argv.
ProcessOptions pip_environment(const DependencySources& s, std::chrono::seconds timeout, const fs::path& scratch) {
  ProcessOptions o = isolated_python(timeout, scratch.string());
  for (char** e = environ; *e; ++e) {
    const std::string kv(*e);
    if (kv.starts_with("PIP_")) o.unset_env.push_back(kv.substr(0, kv.find('=')));
  }
  o.set_env["PIP_CONFIG_FILE"] = "/dev/null";
  o.set_env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1";
  if (s.index_url) {
    const IndexLogin* login = login_for(s.access, *s.index_url);
    o.set_env["PIP_INDEX_URL"] = login ? url_with_login(*s.index_url, *login) : *s.index_url;
  }
  if (s.access.ca_file) o.set_env["PIP_CERT"] = *s.access.ca_file;
  if (s.access.client_cert) o.set_env["PIP_CLIENT_CERT"] = *s.access.client_cert;
  return o;
}

}  // namespace

std::vector<std::string> runtime_requirements(const WheelArchive& wheel) {
  std::vector<std::string> out;
  for (auto [it, end] = wheel.metadata().equal_range("Requires-Dist"); it != end; ++it) {
    Requirement r;
    try {
      r = parse_requirement(it->second);
    } catch (const Error& e) {
      throw Error(ErrorKind::input, wheel.path().filename().string() + ": Requires-Dist '" + printable(it->second) + "' is " + e.what() +
                                        "; kwheel hands pip requirements only: fix the wheel's METADATA");
    }
    if (normalize_name(r.name) != "torch") out.push_back(r.for_pip());
  }
  return out;
}

std::optional<std::string> install_requirements(const std::vector<std::string>& pip_prefix, const std::vector<std::string>& requirements,
                                                const DependencySources& sources, const InterpreterInfo& in, const fs::path& scratch,
                                                std::chrono::seconds timeout) {
  // torch exactly as the interpreter has it: pip sees it through the .pth
  // and keeps it; a dependency that needs another one fails here.
  const fs::path constraints = scratch / "torch-constraint.txt";
  {
    std::ofstream c(constraints);
    if (in.torch) c << "torch==" << *in.torch << "\n";
    if (!c) return "cannot write " + constraints.string();
  }
  std::vector<std::string> argv = pip_prefix;
  for (const char* a : {"install", "--no-cache-dir", "--no-compile", "--no-warn-conflicts", "--disable-pip-version-check", "-q", "-c"}) argv.emplace_back(a);
  argv.push_back(constraints.string());
  if (!sources.index_url) argv.emplace_back("--no-index");
  for (const auto& d : sources.find_links) argv.insert(argv.end(), {"--find-links", fs::absolute(d).string()});
  // After "--" pip reads requirements only, whatever they look like; each
  // is also a PEP 508 requirement in for_pip()'s form (runtime_requirements).
  argv.emplace_back("--");
  argv.insert(argv.end(), requirements.begin(), requirements.end());
  const ProcessResult pip = run_process(argv, pip_environment(sources, timeout, scratch));
  if (pip.timed_out) return "pip timed out installing the dependencies " + comma_list(requirements) + " from " + sources.describe();
  if (pip.exit_code != 0) return "cannot install the dependencies " + comma_list(requirements) + " from " + sources.describe() + ": " + pip_reason(pip.err);
  return std::nullopt;
}

std::optional<std::string> missing_requirements(const std::string& env_python, const std::vector<std::string>& requirements,
                                                const std::string& project, const fs::path& scratch, std::chrono::seconds timeout) {
  std::vector<std::string> argv{env_python, "-I", "-c", std::string(embedded_python("missing_requirements"))};
  argv.insert(argv.end(), requirements.begin(), requirements.end());
  const ProcessResult r = run_process(argv, isolated_python(timeout, scratch.string()));
  const nlohmann::json missing = nlohmann::json::parse(last_line(r.out), nullptr, false);
  if (r.exit_code != 0 || !missing.is_array()) return std::nullopt;  // cannot tell: the check itself will say what is wrong
  std::vector<std::string> names;
  for (const auto& m : missing)
    if (m.is_string()) names.push_back(m.get<std::string>());
  if (names.empty()) return std::nullopt;
  return project + " needs " + comma_list(names) + " (its Requires-Dist), which this environment does not have; pass --index-url URL or --find-links DIR "
         "so validate installs it, or install it next to torch";
}

}  // namespace kwheel
