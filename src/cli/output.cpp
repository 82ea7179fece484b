#include <iostream>

#include "cli.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

// Names from wheels, ELF files and servers need not be UTF-8; the report
// must still be valid JSON, so bytes that are not become U+FFFD rather
// than an exception after the work is done. ASCII only (\uXXXX beyond):
// no byte of it is one the terminal filter (text.hpp) would touch.
void Output::emit_json(const nlohmann::json& j) const {
  std::cout << j.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) << std::endl;
}

// Each line reaches stderr in one write: warnings come from several
// threads at once, and a line written in pieces could be interleaved.
void Output::info(const std::string& line) const {
  if (!quiet && !json) std::cerr << line + "\n";
}

void Output::warn(const std::string& line) const { std::cerr << "kwheel: warning: " + line + "\n"; }

void Output::error(const std::string& line) const { std::cerr << "kwheel: error: " + line + "\n"; }

Feedback feedback(const Output& out) {
  return {[&out](const std::string& line) { out.info(line); }, [&out](const std::string& line) { out.warn(line); }, out.progress()};
}

void add_output_flags(CLI::App* sub, Output& out) {
  sub->add_flag("--json", out.json, "Print a machine-readable JSON report on stdout");
  sub->add_flag("-q,--quiet", out.quiet, "Print nothing when all goes well (errors and warnings still go to stderr); --json is unaffected");
}

void add_verbose_flag(CLI::App* sub, Output& out, const std::string& help) { sub->add_flag("-v,--verbose", out.verbose, help); }

void check_output_dir(const std::string& flag, const std::string& path, const std::string& what) {
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec))
    throw Error(ErrorKind::usage, flag + " '" + path + "' is a file, not a directory; give a directory for " + what + " (created if missing)");
}

void add_examples(CLI::App* sub, const std::vector<std::string>& lines) {
  std::string text = "Examples:";
  for (const auto& l : lines) text.append("\n  ").append(l);
  text.append("\n\nExit codes: see 'kwheel --help'.");
  sub->footer(text);
}

}  // namespace kwheel::cli
