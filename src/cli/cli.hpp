#pragma once
// The command line is a thin layer: each command parses options, calls the
// library, and renders the result as a table (terminal) or JSON (--json).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "kwheel/build/source.hpp"
#include "kwheel/kernel/kernel_signature.hpp"

namespace kwheel::cli {

struct Output {
  bool json = false;
  bool quiet = false;
  bool stderr_is_tty = false;
  bool progress() const { return stderr_is_tty && !quiet && !json; }
  void emit_json(const nlohmann::json& j) const;       // one document on stdout
  void info(const std::string& line) const;            // stderr, unless quiet/json
  void warn(const std::string& line) const;            // stderr, always
};

// Adds --json and --quiet to a subcommand.
void add_output_flags(CLI::App* sub, Output& out);

// The library's notes, warnings and progress, shown as `out` shows them.
// Holds a reference to `out`.
Feedback feedback(const Output& out);

// Adds --revision, --endpoint, --token, --offline, --cache-dir, --repo-type,
// --stall-timeout, --trust-remote-code, --trust-repo and --ca-bundle.
void add_hub_flags(CLI::App* sub, SourceRequest& request);

// Whose signatures count: --trusted-signer (repeatable) and --trusted-root,
// as build and verify take them.
struct SignerFlags {
  std::vector<std::string> trusted_signers;
  std::string trusted_root;
};
void add_signer_flags(CLI::App* sub, SignerFlags& flags);
// kernels' default signers plus the flags' (Error(usage) for a bad spec),
// and the root read and parsed (Error naming --trusted-root).
SignatureOptions signature_options(const SignerFlags& flags);

void register_build(CLI::App& app, Output& out, int& exit_code);
void register_variants(CLI::App& app, Output& out, int& exit_code);
void register_validate(CLI::App& app, Output& out, int& exit_code);
void register_inspect(CLI::App& app, Output& out, int& exit_code);
void register_publish(CLI::App& app, Output& out, int& exit_code);
void register_index(CLI::App& app, Output& out, int& exit_code);
void register_pin(CLI::App& app, Output& out, int& exit_code);
void register_verify(CLI::App& app, Output& out, int& exit_code);

// Wheel files named on the command line: files as given (each must be a
// *.whl), directories expanded to their *.whl files (sorted, hidden ones
// skipped). Throws Error(not_found/input) naming the argument.
std::vector<std::filesystem::path> wheel_files(const std::vector<std::string>& inputs);

}  // namespace kwheel::cli
