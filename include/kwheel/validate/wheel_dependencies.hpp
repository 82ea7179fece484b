#pragma once
// A kernel wheel's dependencies in `kwheel validate`'s environment: the
// Requires-Dist beyond torch (python-depends, kernel-depends), installed
// from the index or directories the user names and from nowhere else, or,
// without them, the ones the environment lacks, named with the way to
// supply them (so a FAIL says "needs einops", not "No module named").
//
// torch is the interpreter's: the environment sees it through a .pth, and
// pip gets a constraint that holds torch to exactly that version, so a
// dependency that wants another torch fails instead of replacing it.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/hub/child_tool_access.hpp"
#include "kwheel/validate/interpreter.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {

// Where `validate` may take dependencies from: pip's --index-url and
// --find-links (repeatable); neither: nowhere (as before issue 37).
struct DependencySources {
  std::optional<std::string> index_url;
  std::vector<std::string> find_links;
  ChildToolAccess access;  // CA, client certificate and logins for pip (hub/connection)
  bool any() const { return index_url || !find_links.empty(); }
  // "--index-url URL", "--find-links DIR", both: for messages (no userinfo).
  std::string describe() const;
};

// The wheel's Requires-Dist other than torch, each read as a PEP 508
// requirement (packaging/requirement) and given in the one form pip is
// handed (Requirement::for_pip): a Requires-Dist is the wheel builder's
// text, and pip would obey "--find-links=URL" or fetch "name @ URL". One
// that does not pass is an Error(input) naming the wheel and the value.
std::vector<std::string> runtime_requirements(const WheelArchive& wheel);

// Installs `requirements` (runtime_requirements') into the environment of
// `env_python`, after "--" on pip's command line (operands, never
// options), with pip run as `pip_prefix` gives (the runner in that environment), from
// `sources` only, torch constrained to `in`'s. Why it failed, in one line
// naming the requirements and pip's reason; nullopt on success.
std::optional<std::string> install_requirements(const std::vector<std::string>& pip_prefix, const std::vector<std::string>& requirements,
                                                const DependencySources& sources, const InterpreterInfo& in, const std::filesystem::path& scratch,
                                                std::chrono::seconds timeout);

// Without sources: the requirements `env_python` does not have, as one
// line naming them and how to supply them; nullopt when none is missing.
std::optional<std::string> missing_requirements(const std::string& env_python, const std::vector<std::string>& requirements,
                                                const std::string& project, const std::filesystem::path& scratch, std::chrono::seconds timeout);

}  // namespace kwheel
