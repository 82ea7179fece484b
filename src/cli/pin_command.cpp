#include <cstdlib>
#include <iostream>

#include "cli.hpp"
#include "kwheel/base/atomic_file.hpp"
#include "kwheel/base/environment.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/url_userinfo.hpp"
#include "kwheel/index/pin.hpp"
#include "kwheel/index/pin_dependencies.hpp"
#include "kwheel/packaging/pylock.hpp"

namespace kwheel::cli {

namespace {

struct PinArgs {
  std::string source;
  TargetArgs target;  // --python defaults to python3 on PATH
  std::string name, version, out;
  bool extra_index = false;
  std::string lock;
  TlsFlags tls;
  std::string keyring_provider;
  std::string deps_index, uv;
  bool no_deps = false;
  std::string cuda_driver, sm_arch;
};

// Only an http(s) index is reached over TLS: a directory or a file://
// index is pinned whatever the CA variables say.
ConnectionSettings connection_settings(const PinArgs& a) {
  ConnectionSettings c;
  if (!a.source.starts_with("http://") && !a.source.starts_with("https://")) return c;
  c.tls = resolve_tls(tls_sources(a.tls));
  const auto env = env_value("PIP_KEYRING_PROVIDER");
  if (!a.keyring_provider.empty()) c.keyring = parse_keyring_provider(a.keyring_provider, "--keyring-provider");
  else if (env) c.keyring = parse_keyring_provider(*env, "PIP_KEYRING_PROVIDER");
  return c;
}

// What the kernels' pin gave, whichever way they were named.
struct PinnedKernels {
  std::vector<PinResult> kernels;
  std::string text;
  nlohmann::json json;
  std::string summary;  // for "wrote FILE: ..."
};

PinnedKernels pin_kernels(const PinRequest& req, const PinArgs& a) {
  if (!a.lock.empty()) {
    LockPinResult r = pin_lock(req, a.lock);
    return {r.kernels, r.text, to_json(r), std::to_string(r.kernels.size()) + " locked kernel(s)"};
  }
  PinSetResult set = req.name ? PinSetResult{{pin(req)}, {}} : pin_all(req);
  std::string text = req.name ? set.kernels.front().text : set.text;
  std::string what;
  for (const auto& r : set.kernels) what += (what.empty() ? "" : ", ") + r.requirement.substr(0, r.requirement.find(' ')) + " (" + r.label.describe() + ")";
  return {set.kernels, text, to_json(set), what};
}

// The kernels' index as their requirement lines name it; "" for a directory.
std::string kernels_index(const PinnedKernels& p) {
  const std::string& line = p.kernels.front().index_line;
  return line.empty() ? "" : line.substr(line.find(' ') + 1);
}

std::string target_words(const PinRequest& req) {
  const InterpreterInfo& t = req.target;
  const std::string backend = t.cuda ? "CUDA " + *t.cuda : t.hip ? "ROCm" : "CPU";
  if (!t.executable.empty()) return t.executable + " (Python " + t.python + ", torch " + t.torch.value_or("none") + ", " + backend + ")";
  return "torch " + t.torch.value_or("?") + " + " + backend;
}

// Refused before the interpreter is probed or an index asked.
void check_pin_args(const PinArgs& a, bool both_out_names) {
  if (both_out_names) throw Error(ErrorKind::usage, "--out and --output are one option (--output is its old name); give it once");
  std::error_code ec;
  if (!a.out.empty() && std::filesystem::is_directory(a.out, ec))
    throw Error(ErrorKind::usage, "-o '" + a.out + "' is a directory; give the requirements file to write (e.g. " +
                                      (std::filesystem::path(a.out) / "requirements.txt").string() + ")");
  if (auto why = pylock_name_problem(std::filesystem::path(a.out).filename().string())) throw Error(ErrorKind::usage, "-o: " + *why);
  if (!a.lock.empty() && std::filesystem::is_directory(a.lock, ec))
    throw Error(ErrorKind::usage, "--lock '" + a.lock + "' is a directory; --lock takes a kernels.lock file (e.g. --lock " +
                                      (std::filesystem::path(a.lock) / "kernels.lock").string() + ")");
  if (a.no_deps && (!a.deps_index.empty() || !a.uv.empty())) throw Error(ErrorKind::usage, "--no-deps pins the kernels alone; drop --deps-index-url and --uv");
}

// What the command line asks for, as the library takes it.
PinRequest pin_request(const PinArgs& a) {
  PinRequest req;
  req.source = a.source;
  req.connection = connection_settings(a);
  if (!a.name.empty()) req.name = a.name;
  if (!a.version.empty()) req.version = a.version;
  req.extra_index = a.extra_index;
  req.read_requirements = !a.no_deps;
  if (!a.cuda_driver.empty()) req.cuda_driver = a.cuda_driver;
  if (!a.sm_arch.empty()) req.sm_arch = a.sm_arch;
  req.target = *described_or_probed(a.target, "builds");
  if (a.target.torch_opt->count()) {
    req.device = a.target.cpu ? "cpu" : "auto";
  } else if (!req.target.torch) {
    throw Error(ErrorKind::usage, "'" + req.target.executable + "' has no torch to pin for; pass --python PATH to one that has, or --torch X.Y with --cuda X.Y or --cpu");
  }
  if (!a.lock.empty() && (req.name || req.version)) throw Error(ErrorKind::usage, "--lock pins each locked kernel at its commit; drop --name and --version");
  return req;
}

// The finished file on stdout, in --json, or named on stderr when written to -o.
void report_pin(const PinArgs& a, const PinnedKernels& pinned, const PinnedDependencies& deps, const std::string& text, bool pylock, Output& out) {
  if (out.json) {
    auto j = pinned.json;
    // One product per run: the lock replaces the requirements text.
    if (pylock) {
      j.erase("requirements");
      j["pylock"] = text;
    } else {
      j["requirements"] = text;
    }
    j.update(to_json(deps));
    if (!a.out.empty()) j["output"] = a.out;
    out.emit_json(j);
  } else if (a.out.empty()) {
    std::cout << text << std::flush;
  } else {
    std::string extra;
    if (!deps.kernel_depends.empty()) extra += ", " + std::to_string(deps.kernel_depends.size()) + " kernel-depends";
    if (deps.resolution) extra += ", " + std::to_string(deps.resolution->dependencies.size()) + " dependencies (" + deps.resolution->tool + ")";
    out.info("wrote " + a.out + ": " + pinned.summary + extra);
  }
}

void run_pin(const PinArgs& a, Output& out) {
  PinRequest req = pin_request(a);
  req.connection.warn = feedback(out).on_warn;
  PinnedKernels pinned = pin_kernels(req, a);
  const bool pylock = is_pylock_name(std::filesystem::path(a.out).filename().string());
  for (const auto& k : pinned.kernels)
    if (pylock && !k.variant_label.empty())
      throw Error(ErrorKind::usage, "-o " + a.out + ": kwheel writes no pylock.toml for a variant index yet (PEP 825 puts variants.json into the lock); write requirements.txt and install it with uv --preview-features wheel-variants");
  DependencyOptions deps_options;
  if (!a.deps_index.empty()) deps_options.deps_index = a.deps_index;
  if (!a.uv.empty()) deps_options.uv = a.uv;
  deps_options.pylock = pylock;
  // uv gets the CA, client certificate and logins kwheel's own requests use.
  std::vector<std::string> urls{a.source};
  if (!a.deps_index.empty()) urls.push_back(a.deps_index);
  deps_options.access = child_tool_access(req.connection.tls, urls, req.connection.warn);
  const PinnedDependencies deps = a.no_deps ? PinnedDependencies{} : pin_dependencies(req, pinned.kernels, deps_options);
  const std::string index = kernels_index(pinned);
  const std::string text = pylock ? pylock_with_dependencies(pinned.kernels, deps, index, target_words(req))
                                  : requirements_with_dependencies(pinned.text, deps, deps_options, index);
  if (!a.out.empty()) write_file_atomic(a.out, text);
  report_pin(a, pinned, deps, text, pylock, out);
}

}  // namespace

void register_pin(CLI::App& app, Output& out, int& exit_code) {
  auto a = std::make_shared<PinArgs>();
  auto* sub = app.add_subcommand("pin", "Print requirements.txt lines (version with local label + sha256) for the build that fits an environment");
  url_option(sub->add_option("source", a->source, "A directory of wheels, or a simple index URL (http(s):// or file://, e.g. .../simple/)")
                 ->type_name("DIR|URL")
                 ->required());
  sub->add_option("--lock", a->lock, "Pin every kernel of this kernels.lock at its locked commit (wheels built by `kwheel build --lock`)")->type_name("FILE");
  a->target.python = "python3";
  add_target_flags(sub, a->target, "Interpreter whose torch decides (default: python3 on PATH)",
                   "Describe the target instead: torch X.Y (with --cuda X.Y or --cpu)");
  sub->add_option("--name", a->name, "Only this project (default: every project the source holds, one requirements file)")->type_name("NAME");
  sub->add_option("--version", a->version, "Only versions matching this specifier set, e.g. \">=0.1,<0.2\"")->type_name("SPEC");
  sub->add_flag("--extra-index", a->extra_index, "Write --extra-index-url (keep PyPI for torch & co.) instead of --index-url");
  url_option(sub->add_option("--deps-index-url", a->deps_index,
                             "Resolve the kernels' Python dependencies from this index (default: the kernels' index); kernels still come only from SOURCE")
                 ->type_name("URL"));
  sub->add_option("--uv", a->uv, "The uv that resolves the dependencies (default: $KWHEEL_UV, else uv on PATH)")->type_name("PATH");
  sub->add_option("--cuda-driver", a->cuda_driver,
                  "From a variant index: the CUDA driver version uv would see, or 'none' (default: NV_VARIANT_PROVIDER_FORCE_*, else nvidia-smi, as uv)")
      ->type_name("X.Y|none");
  sub->add_option("--sm-arch", a->sm_arch, "From a variant index: the GPU's compute capability, with --cuda-driver")->type_name("X.Y");
  sub->add_flag("--no-deps", a->no_deps, "Pin the kernels alone, not their dependencies (pip install then needs --no-deps)");
  auto* out_file = sub->add_option("-o,--out", a->out, "Write to this file (atomically) instead of stdout; pylock.toml or pylock.NAME.toml writes a PEP 751 lock")->type_name("FILE");
  // --output was pin's name for -o before every command took -o/--out;
  // scripts that use it keep working, and --help shows only --out.
  auto* old_name = sub->add_option("--output", a->out, "Same as --out (its old name)")->type_name("FILE")->group("");
  add_tls_flags(sub, a->tls);
  sub->add_option("--keyring-provider", a->keyring_provider,
                  "Ask the keyring program for an index's credentials after a 401, as pip's subprocess provider: auto (when `keyring` is on PATH), "
                  "subprocess or disabled (default: $PIP_KEYRING_PROVIDER, else auto). Before keyring: the URL's user:password@, then ~/.netrc ($NETRC)")
      ->type_name("auto|subprocess|disabled");
  add_output_flags(sub, out);
  add_examples(sub, {"kwheel pin dist --python /opt/venv/bin/python -o requirements.txt   # that interpreter's torch and CUDA decide",
                     "kwheel pin https://pypi.internal/simple/ --cert team-ca.pem --torch 2.9 --cuda 12.8 > requirements.txt   # password: ~/.netrc, keyring or user:pw@",
                     "kwheel pin dist --lock kernels.lock --python /opt/venv/bin/python -o pylock.toml   # PEP 751, dependencies by uv"});
  sub->callback([a, out_file, old_name, &out, &exit_code] {
    check_pin_args(*a, out_file->count() && old_name->count());
    a->source = lower_scheme(a->source);
    if (!a->deps_index.empty()) a->deps_index = checked_index_url("--deps-index-url", a->deps_index, "simple index URL");
    run_pin(*a, out);
    exit_code = 0;
  });
}

}  // namespace kwheel::cli
