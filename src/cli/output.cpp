#include <iostream>

#include "cli.hpp"

namespace kwheel::cli {

// Names from wheels, ELF files and servers need not be UTF-8; the report
// must still be valid JSON, so bytes that are not become U+FFFD rather
// than an exception after the work is done. ASCII only (\uXXXX beyond):
// no byte of it is one the terminal filter (text.hpp) would touch.
void Output::emit_json(const nlohmann::json& j) const {
  std::cout << j.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) << std::endl;
}

void Output::info(const std::string& line) const {
  if (!quiet && !json) std::cerr << line << "\n";
}

void Output::warn(const std::string& line) const { std::cerr << "kwheel: warning: " << line << "\n"; }

Feedback feedback(const Output& out) {
  return {[&out](const std::string& line) { out.info(line); }, [&out](const std::string& line) { out.warn(line); }, out.progress()};
}

void add_output_flags(CLI::App* sub, Output& out) {
  sub->add_flag("--json", out.json, "Print a machine-readable JSON report on stdout");
  sub->add_flag("-q,--quiet", out.quiet, "No progress or informational output");
}

}  // namespace kwheel::cli
