#include <iostream>

#include "cli.hpp"

namespace kwheel::cli {

void Output::emit_json(const nlohmann::json& j) const { std::cout << j.dump(2) << std::endl; }

void Output::info(const std::string& line) const {
  if (!quiet && !json) std::cerr << line << "\n";
}

void Output::warn(const std::string& line) const { std::cerr << "kwheel: warning: " << line << "\n"; }

void add_output_flags(CLI::App* sub, Output& out) {
  sub->add_flag("--json", out.json, "Print a machine-readable JSON report on stdout");
  sub->add_flag("-q,--quiet", out.quiet, "No progress or informational output");
}

}  // namespace kwheel::cli
