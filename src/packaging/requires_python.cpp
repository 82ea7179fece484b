#include "kwheel/packaging/requires_python.hpp"

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/packaging/pep440.hpp"

namespace kwheel {

std::optional<std::string> requires_python_problem(std::string_view requires_python, const std::string& python, std::string_view where) {
  const std::string value = trim(requires_python);
  if (value.empty()) return std::nullopt;
  // packaging's SpecifierSet skips empty parts (">=3.9," is ">=3.9").
  std::string parts;
  for (const auto& part : split(value, ','))
    if (!trim(part).empty()) parts += (parts.empty() ? "" : ",") + trim(part);
  const std::string quoted = "'" + printable(value) + "'";
  std::optional<SpecifierSet> spec;
  try {
    if (!parts.empty()) spec = SpecifierSet::parse(parts);
  } catch (const Error&) {
  }
  if (!spec)
    return std::string(where) + " gives Requires-Python " + quoted +
           ", which is not a PEP 440 specifier set, so whether the target's Python fits is unknown (pip would ignore it; kwheel pins only what it can check)";
  const auto version = Version::try_parse(python);
  if (!version) throw Error(ErrorKind::usage, "the target interpreter reports Python '" + python + "', not a version like 3.11.2; pass --python PATH to a CPython 3");
  // pip's resolver compares with prereleases allowed; the version it
  // compares is sys.version_info[:3], always a final release.
  if (spec->contains(*version, true)) return std::nullopt;
  return "requires Python " + printable(value) + " by " + std::string(where) + ", the target has " + python;
}

}  // namespace kwheel
