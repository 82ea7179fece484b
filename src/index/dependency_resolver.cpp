#include "kwheel/index/dependency_resolver.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/environment.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/process.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/index/index_values.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/requirement.hpp"

extern char** environ;

namespace kwheel {
namespace fs = std::filesystem;

namespace {

// "name==version ; marker" -> the parts; the name normalized.
ResolvedDependency parse_pin(const std::string& requirement) {
  ResolvedDependency d;
  const size_t semi = requirement.find(';');
  const std::string pin = trim(requirement.substr(0, semi));
  if (semi != std::string::npos) d.marker = trim(requirement.substr(semi + 1));
  const size_t eq = pin.find("==");
  if (eq == std::string::npos || eq == 0 || pin.find_first_of(" <>!~@") < eq)
    throw Error(ErrorKind::input, "uv wrote '" + requirement + "', which is not a name==version pin; kwheel reads uv 0.13's requirements output");
  d.name = pin.substr(0, eq);
  d.version = pin.substr(eq + 2);
  return d;
}

// What uv wrote is an index's word passed on (names, versions, markers and
// hashes of the packages it found there), and each goes into
// requirements.txt: held to what it must be, as pin holds a page's values
// (index_values.hpp).
void check_dependency(ResolvedDependency& d, const std::string& requirement) {
  const std::string line = "uv wrote '" + printable(requirement) + "'";
  const std::string fix = "; kwheel writes only name==version pins with sha256 hashes, so nothing is pinned (check the index uv read)";
  if (!is_valid_name(d.name)) throw Error(ErrorKind::input, line + ", whose name '" + d.name + "' is not a PEP 508 name" + fix);
  if (!is_pin_version(d.version)) throw Error(ErrorKind::input, line + ", whose version '" + d.version + "' is not a PEP 440 version" + fix);
  if (!d.marker.empty() && !is_plain_marker(d.marker))
    throw Error(ErrorKind::input, line + ", whose marker '" + d.marker + "' holds more than marker names, operators and plain quoted values" + fix);
  if (d.sha256.empty()) throw Error(ErrorKind::input, line + " without a sha256 (--generate-hashes)" + fix);
  for (const auto& h : d.sha256)
    if (!is_sha256_hex(h)) throw Error(ErrorKind::input, line + " with the sha256 '" + h + "', which is not 64 hex digits" + fix);
  d.name = normalize_name(d.name);
}

}  // namespace

std::vector<ResolvedDependency> parse_uv_requirements(const std::string& text) {
  std::vector<ResolvedDependency> out;
  std::string logical;  // one requirement, its "\"-continued lines joined
  auto finish = [&] {
    if (trim(logical).empty()) return;
    std::vector<std::string> words;
    for (const auto& w : split(logical, ' '))
      if (!w.empty()) words.push_back(w);
    std::string requirement;
    ResolvedDependency d;
    std::vector<std::string> hashes;
    for (const auto& w : words) {
      if (w.starts_with("--hash=sha256:")) hashes.push_back(ascii_lower(w.substr(14)));
      else if (w.starts_with("--")) throw Error(ErrorKind::input, "uv wrote the option '" + w + "' on a requirement line; kwheel reads uv 0.13's requirements output");
      else requirement += (requirement.empty() ? "" : " ") + w;
    }
    d = parse_pin(requirement);
    d.sha256 = std::move(hashes);
    check_dependency(d, requirement);
    out.push_back(std::move(d));
    logical.clear();
  };
  for (const auto& raw : split(text, '\n')) {
    const std::string line = trim(raw);
    if (line.starts_with("# from ")) {
      finish();
      if (!out.empty()) out.back().index = trim(line.substr(7));
      if (!out.empty() && unprintable_at(out.back().index) != std::string::npos)
        throw Error(ErrorKind::input, "uv named the index of " + out.back().name + " as '" + printable(out.back().index) + "', which holds a control byte or is not UTF-8");
      continue;
    }
    if (line.empty() || line.starts_with("#")) {
      finish();
      continue;
    }
    const bool continued = line.ends_with("\\");
    logical += " " + (continued ? line.substr(0, line.size() - 1) : line);
    if (!continued) finish();
  }
  finish();
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

namespace {

bool is_executable_file(const fs::path& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); }

}  // namespace

std::string find_uv(const std::optional<std::string>& explicit_path, const std::string& why) {
  const std::string how = "install uv (`pip install uv`, or https://docs.astral.sh/uv/) or pass --uv PATH (or KWHEEL_UV)";
  if (explicit_path) {
    if (is_executable_file(*explicit_path)) return *explicit_path;
    throw Error(ErrorKind::not_found, "--uv '" + *explicit_path + "' is not an executable file; " + how);
  }
  if (const auto env = env_value("KWHEEL_UV")) {
    if (is_executable_file(*env)) return *env;
    throw Error(ErrorKind::not_found, "KWHEEL_UV '" + *env + "' is not an executable file; " + how);
  }
  if (const char* path = std::getenv("PATH"))
    for (const auto& dir : split(path, ':'))
      if (!dir.empty() && is_executable_file(fs::path(dir) / "uv")) return (fs::path(dir) / "uv").string();
  throw Error(ErrorKind::not_found, why + " needs uv (uv pip compile) to resolve them, and there is no uv on PATH; " + how + ", or pass --no-deps to pin the kernels alone");
}

namespace {

// uv's message (its "×"/"╰─▶" tree) as one line.
std::string uv_message_line(const std::string& err) {
  std::string out;
  for (const auto& raw : split(err, '\n')) {
    std::string line = trim(raw);
    for (const char* glyph : {"×", "╰─▶", "├─▶", "│"})
      while (line.starts_with(glyph)) line = trim(line.substr(std::string_view(glyph).size()));
    if (!line.empty()) out += (out.empty() ? "" : " ") + line;
  }
  return out.empty() ? "(uv printed nothing)" : out;
}

std::string tool_version(const std::string& uv) {
  ProcessOptions o;
  o.timeout = std::chrono::seconds(60);
  const ProcessResult r = run_process({uv, "--version"}, o);
  if (r.exit_code != 0 || !r.out.starts_with("uv ")) throw Error(ErrorKind::not_found, "'" + uv + " --version' did not answer as uv does; pass --uv PATH to a uv");
  const std::vector<std::string> words = split(trim(r.out), ' ');
  return words.size() >= 2 ? "uv " + words[1] : "uv";
}

// What uv reads from the environment is decided here: kwheel's indexes
// (with their logins), CA and client certificate, nothing the caller's
// UV_* variables or uv.toml would add (another index, a constraint).
ProcessOptions uv_environment(const DependencyRequest& req, bool directory) {
  ProcessOptions o;
  o.timeout = req.timeout;
  for (char** e = environ; *e; ++e) {
    const std::string kv(*e);
    const std::string key = kv.substr(0, kv.find('='));
    if (key.starts_with("UV_") && key != "UV_CACHE_DIR") o.unset_env.push_back(key);
  }
  auto with_login = [&](const std::string& url) {
    const IndexLogin* login = login_for(req.access, url);
    return login ? url_with_login(url, *login) : url;
  };
  const std::optional<std::string> deps = req.deps_index ? req.deps_index : directory ? std::nullopt : std::optional(req.kernels_source);
  if (deps) o.set_env["UV_DEFAULT_INDEX"] = with_login(*deps);
  // The kernels' index first (uv's first-index strategy): a kernel's name is
  // looked up there, never on the dependencies' index.
  if (!directory && deps && *deps != req.kernels_source) o.set_env["UV_INDEX"] = "kwheel-kernels=" + with_login(req.kernels_source);
  if (req.access.ca_file) o.set_env["SSL_CERT_FILE"] = *req.access.ca_file;
  if (req.access.client_cert) o.set_env["SSL_CLIENT_CERT"] = *req.access.client_cert;
  o.set_env["UV_NO_PROGRESS"] = "1";
  return o;
}

std::vector<std::string> uv_argv(const DependencyRequest& req, const TempDir& dir, bool directory) {
  std::vector<std::string> argv{req.uv, "pip", "compile", (dir.path() / "kernels.in").string(), "--excludes", (dir.path() / "torch.txt").string(),
                                "--generate-hashes", "--no-header", "--no-annotate", "--emit-index-annotation", "--no-config", "--quiet"};
  for (const auto& n : req.kernel_names) argv.insert(argv.end(), {"--no-emit-package", n});
  if (req.python) argv.insert(argv.end(), {"--python", *req.python});
  else argv.push_back("--universal");
  if (directory) {
    argv.insert(argv.end(), {"--find-links", fs::absolute(req.kernels_source).string()});
    if (!req.deps_index) argv.push_back("--no-index");
  }
  return argv;
}

void write_scratch(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw Error(ErrorKind::io, "cannot write " + p.string());
}

std::string run_uv(std::vector<std::string> argv, const ProcessOptions& env) {
  const ProcessResult r = run_process(argv, env);
  if (r.timed_out) throw Error(ErrorKind::network, "uv pip compile timed out after " + std::to_string(env.timeout.count()) + " s resolving the kernels' dependencies");
  if (r.exit_code != 0)
    throw Error(ErrorKind::not_found, "uv could not resolve the kernels' dependencies: " + uv_message_line(r.err) +
                                          "; serve what it names from the kernels' index or pass --deps-index-url URL (or --no-deps to pin the kernels alone)");
  return r.out;
}

// A lock or requirements file is shared: it must not carry a login, even
// one uv took from a URL it was given.
void refuse_userinfo(const std::string& url, const std::string& what) {
  if (has_userinfo(url))
    throw Error(ErrorKind::input, "uv's " + what + " has a URL with credentials (" + display_url(url) + "), which kwheel does not write into a file; give the index's login through netrc or keyring, not the URL");
}

std::vector<LockedPackage> locked_packages(const std::vector<std::string>& argv, const ProcessOptions& env,
                                           const TempDir& dir, const DependencyResolution& res, std::string& requires_python) {
  // The same resolution, asked for again as a lock: every package held to
  // the version the first answer gave.
  std::string constraints;
  for (const auto& d : res.dependencies) constraints += d.name + "==" + d.version + "\n";
  write_scratch(dir.path() / "resolved.txt", constraints);
  std::vector<std::string> lock_argv = argv;
  lock_argv.insert(lock_argv.end(), {"--constraints", (dir.path() / "resolved.txt").string(), "--format", "pylock.toml"});
  const std::string text = run_uv(lock_argv, env);
  std::vector<LockedPackage> packages = read_pylock_packages(text, "uv's pylock.toml");
  std::map<std::string, std::string> index_of;
  for (const auto& d : res.dependencies) index_of[d.name] = d.index;
  std::erase_if(packages, [&](const LockedPackage& p) { return !index_of.count(normalize_name(p.name)); });
  for (auto& p : packages) {
    if (p.index.empty()) p.index = index_of[normalize_name(p.name)];
    if (p.sdist) refuse_userinfo(p.sdist->url, "pylock.toml");
    for (const auto& w : p.wheels) refuse_userinfo(w.url, "pylock.toml");
  }
  // requires-python is a top-level key, read here rather than per package.
  const size_t at = text.find("\nrequires-python = \"");
  if (at != std::string::npos) {
    const size_t start = at + 20, end = text.find('"', start);
    if (end != std::string::npos) requires_python = text.substr(start, end - start);
  }
  return packages;
}

// kernels.in is a requirements file uv obeys line by line (an option line,
// a URL, ${VAR}): each line must be the one pin kwheel means, whatever the
// index called the kernel.
std::string checked_pin(const std::string& pin) {
  try {
    const Requirement r = parse_requirement(pin);
    if (r.extras.empty() && r.marker.empty() && r.specifiers.size() == 1 && r.specifiers[0].starts_with("==") && pin == r.name + r.specifiers[0]) return pin;
  } catch (const Error&) {
  }
  throw Error(ErrorKind::input, "'" + pin + "' is not a name==version pin for uv; a kernel's name and version come from the index and must be a PEP 508 name and a PEP 440 version");
}

}  // namespace

DependencyResolution resolve_dependencies(const DependencyRequest& req) {
  const bool directory = req.kernels_source.find("://") == std::string::npos;
  DependencyResolution res;
  res.tool = tool_version(req.uv);
  res.command = "uv pip compile --generate-hashes";
  const TempDir dir("pin-deps");
  std::string pins;
  for (const auto& p : req.kernel_pins) pins += checked_pin(p) + "\n";
  write_scratch(dir.path() / "kernels.in", pins);
  write_scratch(dir.path() / "torch.txt", "torch\n");
  const std::vector<std::string> argv = uv_argv(req, dir, directory);
  ProcessOptions env = uv_environment(req, directory);
  env.cwd = dir.path().string();
  res.dependencies = parse_uv_requirements(run_uv(argv, env));
  for (auto& d : res.dependencies) {
    refuse_userinfo(d.index, "answer");
    if (!d.index.empty() && !d.index.ends_with("/")) d.index += "/";
  }
  if (req.pylock) res.locked = locked_packages(argv, env, dir, res, res.requires_python);
  return res;
}

}  // namespace kwheel
