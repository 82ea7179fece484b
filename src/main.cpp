// kwheel: wheels from Hugging Face Hub kernel repos.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <string_view>

#include "cli/cli.hpp"
#include "kwheel/base/interrupt.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/secret.hpp"
#include "kwheel/base/suggest.hpp"
#include "kwheel/base/text.hpp"

namespace {

constexpr const char* kFooter =
    "Exit codes: 0 ok; 1 internal error; 2 usage; 3 bad input (repo, variant, wheel; a Sigstore bundle that does\n"
    "not verify); 4 network;\n"
    "5 not found (repo, revision, version); 6 authentication/authorisation; 7 local I/O (disk full,\n"
    "permissions); 8 validation failed (validate; verify: a file against RECORD or metadata.json's digest,\n"
    "or a signature that does not verify); 9 policy refused it (platform evidence, untrusted publisher;\n"
    "verify: no trusted signer vouches for it, without --allow-unsigned); 10 validate tested nothing (every\n"
    "wheel SKIP: no torch or GPU here fits them), without --allow-skip.\n\n"
    "Examples:\n"
    "  kwheel build kernels-community/img2gray -o dist && kwheel publish dist -r internal\n"
    "  kwheel build --lock kernels.lock -o dist && kwheel index dist -o site\n"
    "  kwheel pin dist --python /opt/venv/bin/python -o requirements.txt\n"
    "Each command's --help has its own.";

// With --json, every outcome is one JSON document on stdout, even a
// command line that did not parse (so the flag is looked for by hand).
bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--json") return true;
  return false;
}

// The one way a run ends in an error: one line on stderr, and with --json
// the same line in the report. No kind means a bug in kwheel (exit 1).
int fail(const kwheel::cli::Output& out, bool json, std::optional<kwheel::ErrorKind> kind, const std::string& message) {
  const std::string line = kwheel::printable(message);
  const int code = kind ? static_cast<int>(*kind) : 1;
  if (json) out.emit_json({{"ok", false}, {"error", line}, {"exit_code", code}});
  std::cerr << (kind ? "kwheel: error: " : "kwheel: ") << line << "\n";
  return code;
}

// The names an option answers to on this command line ("--out", "-o").
std::vector<std::string> option_names(const CLI::App& sub) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : sub.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden aliases are not suggested
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// A command line that did not parse, said as git and cargo say it: a
// mistyped command or option is named, with the nearest real one.
std::string usage_message(const CLI::App& app, const CLI::ParseError& e) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  if (parsed.empty()) {
    std::vector<std::string> commands;
    for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
    for (const auto& word : app.remaining()) {
      if (word.starts_with("-")) {
        if (const auto near = kwheel::closest_match(word.substr(0, word.find('=')), option_names(app)))
          return "kwheel has no option '" + word + "'; did you mean '" + *near + "'? (see 'kwheel --help')";
        continue;
      }
      const auto near = kwheel::closest_match(word, commands);
      return "'" + word + "' is not a kwheel command" + (near ? "; did you mean '" + *near + "'?" : "") + " (commands: " + kwheel::join(commands, ", ") +
             "; see 'kwheel --help')";
    }
    return std::string(e.what()) + " (see 'kwheel --help')";
  }
  const CLI::App& sub = *parsed.front();
  const std::string help = " (see 'kwheel " + sub.get_name() + " --help')";
  std::vector<std::string> names = option_names(sub);
  for (const auto& n : option_names(app)) names.push_back(n);
  for (const auto& word : app.remaining(true)) {  // before the command's name, an unknown option stays the app's
    if (!word.starts_with("-")) continue;
    const auto near = kwheel::closest_match(word.substr(0, word.find('=')), names);
    if (near) return "'kwheel " + sub.get_name() + "' has no option '" + word + "'; did you mean '" + *near + "'?" + help;
  }
  return e.what() + help;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kwheel " KWHEEL_VERSION ": build, validate and publish wheels of Hugging Face Hub kernels"};
  app.require_subcommand(1);
  app.footer(kFooter);
  app.set_version_flag("--version", "kwheel " KWHEEL_VERSION);
  kwheel::install_interrupt_cleanup("kwheel");
  kwheel::cli::Output out;
  out.stderr_is_tty = ::isatty(STDERR_FILENO);
  // Everything printed passes through the redactor: a token may reach a
  // line in a shape no caller foresaw (a server's echo, a redirect target).
  kwheel::RedactingStreambuf out_buf(std::cout.rdbuf()), err_buf(std::cerr.rdbuf());
  struct Restore {
    std::streambuf *out, *err;
    ~Restore() {
      std::cout.rdbuf(out);
      std::cerr.rdbuf(err);
    }
  } restore{std::cout.rdbuf(&out_buf), std::cerr.rdbuf(&err_buf)};
  // And through the control-byte filter (text.hpp), before the redactor.
  kwheel::ControlEscapingStreambuf out_safe(&out_buf), err_safe(&err_buf);
  std::cout.rdbuf(&out_safe);
  std::cerr.rdbuf(&err_safe);
  int exit_code = 0;
  kwheel::cli::register_build(app, out, exit_code);
  kwheel::cli::register_variants(app, out, exit_code);
  kwheel::cli::register_validate(app, out, exit_code);
  kwheel::cli::register_inspect(app, out, exit_code);
  kwheel::cli::register_publish(app, out, exit_code);
  kwheel::cli::register_index(app, out, exit_code);
  kwheel::cli::register_pin(app, out, exit_code);
  kwheel::cli::register_verify(app, out, exit_code);
  kwheel::cli::register_link(app, out, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(out, wants_json(argc, argv), kwheel::ErrorKind::usage, usage_message(app, e));
  } catch (const kwheel::Error& e) {
    return fail(out, out.json, e.kind(), e.what());
  } catch (const std::filesystem::filesystem_error& e) {
    // A directory that cannot be listed, a path too long: the filesystem's
    // answer about a path the user gave, not a bug in kwheel.
    return fail(out, out.json, kwheel::ErrorKind::io,
                "cannot read '" + e.path1().string() + "': " + e.code().message() + "; check that it exists and is readable");
  } catch (const std::exception& e) {
    return fail(out, out.json, std::nullopt, std::string("internal error: ") + e.what());
  }
  return exit_code;
}
