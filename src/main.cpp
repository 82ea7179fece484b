// kwheel: wheels from Hugging Face Hub kernel repos.
#include <unistd.h>

#include <iostream>

#include "cli/cli.hpp"
#include "kwheel/atomic_file.hpp"
#include "kwheel/error.hpp"
#include "kwheel/text.hpp"

namespace {

constexpr const char* kExitCodes =
    "Exit codes: 0 ok; 1 internal error; 2 usage; 3 bad input (repo, variant, wheel); 4 network;\n"
    "5 not found (repo, revision, version); 6 authentication/authorisation; 7 local I/O (disk full,\n"
    "permissions); 8 validation failed; 9 platform policy violated.";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kwheel " KWHEEL_VERSION ": build, validate and publish wheels of Hugging Face Hub kernels"};
  app.require_subcommand(1);
  app.footer(kExitCodes);
  app.set_version_flag("--version", "kwheel " KWHEEL_VERSION);
  kwheel::install_temp_cleanup_on_signals();
  kwheel::cli::Output out;
  out.stderr_is_tty = ::isatty(STDERR_FILENO);
  int exit_code = 0;
  kwheel::cli::register_build(app, out, exit_code);
  kwheel::cli::register_variants(app, out, exit_code);
  kwheel::cli::register_validate(app, out, exit_code);
  kwheel::cli::register_inspect(app, out, exit_code);
  kwheel::cli::register_publish(app, out, exit_code);
  kwheel::cli::register_index(app, out, exit_code);
  kwheel::cli::register_pin(app, out, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "kwheel: error: " << kwheel::printable(e.what()) << " (see 'kwheel --help')\n";
    return static_cast<int>(kwheel::ErrorKind::usage);
  } catch (const kwheel::Error& e) {
    if (out.json) out.emit_json({{"ok", false}, {"error", e.what()}, {"exit_code", e.exit_code()}});
    std::cerr << "kwheel: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "kwheel: internal error: " << kwheel::printable(e.what()) << "\n";
    return 1;
  }
  return exit_code;
}
