#pragma once
// The command line is a thin layer: each command parses options, calls the
// library, and renders the result as a table (terminal) or JSON (--json).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/factory/source.hpp"
#include "kwheel/hub/connection.hpp"
#include "kwheel/kernel/kernel_signature.hpp"
#include "kwheel/validate/interpreter.hpp"

namespace kwheel::cli {

// What a command prints. --json: one document on stdout, whatever -q says.
// -q (as pip's and twine's): nothing on stdout or stderr when all went
// well, but for warnings; what went wrong still goes to stderr (error()).
// pin without -o is the one command whose stdout is its product: -q keeps it.
struct Output {
  bool json = false;
  bool quiet = false;
  bool verbose = false;  // the commands that take -v: the neutral lines listed one by one (-q still wins)
  bool stderr_is_tty = false;
  bool progress() const { return stderr_is_tty && !quiet && !json; }
  bool table() const { return !quiet && !json; }        // the human report on stdout
  void emit_json(const nlohmann::json& j) const;       // one document on stdout
  void info(const std::string& line) const;            // stderr, unless quiet/json
  void warn(const std::string& line) const;            // stderr, always
  void error(const std::string& line) const;           // stderr, always: one failed item of a run
};

// Adds --json and --quiet to a subcommand.
void add_output_flags(CLI::App* sub, Output& out);

// Adds -v/--verbose (Output::verbose) to a subcommand whose report counts
// what it could list; `help` says what it lists.
void add_verbose_flag(CLI::App* sub, Output& out, const std::string& help);

// A directory option (-o) that names an existing non-directory is refused
// before any work (and any request to a server) is done.
void check_output_dir(const std::string& flag, const std::string& path, const std::string& what);

// "Examples:" and the lines given, at the end of the subcommand's --help.
void add_examples(CLI::App* sub, const std::vector<std::string>& lines);

// The library's notes, warnings and progress, shown as `out` shows them.
// Holds a reference to `out`.
Feedback feedback(const Output& out);

// Adds --revision, --endpoint, --token, --offline, --cache-dir, --repo-type,
// --stall-timeout, --trust-remote-code, --trust-repo and the TLS flags.
void add_hub_flags(CLI::App* sub, SourceRequest& request);

// Adds --cert and --client-cert (and, where the Hub commands took it,
// --ca-bundle as --cert's hidden older name): the one place every command
// that reaches a server gets them (kwheel/hub/connection.hpp).
void add_tls_flags(CLI::App* sub, TlsFlags& flags, bool ca_bundle_alias = false);

// The environment wheels must fit: --python PY (probed), or described by
// --torch X.Y with --cuda X.Y or --cpu (pin, variants).
struct TargetArgs {
  std::string python, torch, cuda;  // python: a default probed when no flag is given, or empty for none
  bool cpu = false;
  CLI::Option* python_opt = nullptr;
  CLI::Option* torch_opt = nullptr;
};
void add_target_flags(CLI::App* sub, TargetArgs& target, const std::string& python_help, const std::string& torch_help);
// nullopt when no flag was given and TargetArgs::python has no default.
std::optional<InterpreterInfo> described_or_probed(const TargetArgs& target, const std::string& what_fits);

// Whose signatures count: --trusted-signer, --trusted-root, and (where the
// command refuses what is unsigned) --require-signature.
struct SignatureArgs {
  bool require = false;
  std::vector<std::string> signers;
  std::string trusted_root;
};
void add_signature_flags(CLI::App* sub, SignatureArgs& args, bool with_require);
SignatureOptions signature_options(const SignatureArgs& args);

void register_build(CLI::App& app, Output& out, int& exit_code);
void register_variants(CLI::App& app, Output& out, int& exit_code);
void register_validate(CLI::App& app, Output& out, int& exit_code);
void register_inspect(CLI::App& app, Output& out, int& exit_code);
void register_publish(CLI::App& app, Output& out, int& exit_code);
void register_index(CLI::App& app, Output& out, int& exit_code);
void register_pin(CLI::App& app, Output& out, int& exit_code);
void register_verify(CLI::App& app, Output& out, int& exit_code);
void register_link(CLI::App& app, Output& out, int& exit_code);

// A URL option, or a source that may be a URL: the password of its
// user:password@, if any, is registered for redaction as the command line
// is read (base/url_userinfo), so no message made from it shows it, in
// whatever shape and whatever the reason. Returns `option`.
CLI::Option* url_option(CLI::Option* option);

// `value` of `option` with its scheme lower-cased (HTTPS:// is https://);
// Error(usage) unless it is http://, https:// or file://, naming `what` it
// must be and quoting it without its userinfo.
std::string checked_index_url(const std::string& option, const std::string& value, const std::string& what);

// Wheel files named on the command line: files as given (each must be a
// *.whl), directories expanded to their *.whl files (sorted, hidden ones
// skipped). Throws Error(not_found/input) naming the argument.
std::vector<std::filesystem::path> wheel_files(const std::vector<std::string>& inputs);
// The same as strings: a site of 20,000 wheels given as a directory holds
// them for the whole run, and a path keeps each component as another path
// (~400 bytes a wheel, 8.7 MB at 20,000: heaptrack).
std::vector<std::string> wheel_file_names(const std::vector<std::string>& inputs);

}  // namespace kwheel::cli
