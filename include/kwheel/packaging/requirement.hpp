#pragma once
// A dependency as a wheel's Requires-Dist states it: a PEP 508 requirement
// (name, extras, version specifiers, environment marker), read by the
// grammar packaging 26 (pip's parser) uses. A Requires-Dist is untrusted
// text from whoever built the wheel; kwheel hands a child tool only what
// passed this parse, in the form for_pip() gives, so a value such as
// "--find-links=http://host/" or "--log=FILE" can never be read as an
// option, and none names a file or URL to fetch.
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

struct Requirement {
  std::string name;                     // as written
  std::vector<std::string> extras;      // as written
  std::vector<std::string> specifiers;  // each "OP VERSION" without spaces, e.g. ">=0.7"
  std::string marker;                   // "" or the marker as written, e.g. python_version >= "3.9"

  // One argv word (or requirements-file line) pip reads as this
  // requirement and as nothing else: the PEP 503 name (no '.', so never a
  // file name such as "x.whl"), the extras, the specifiers in parentheses
  // (so a local label such as "+a.zip" never ends it), " ; " and the marker.
  std::string for_pip() const;
};

// Parses `text` (surrounding whitespace ignored). Refused, as an
// Error(input) that says why and does not quote `text` (the caller names
// it and where it came from): anything that is not a
// PEP 508 requirement; a direct URL ("name @ URL"), which would make the
// tool fetch from wherever the wheel says; the arbitrary-equality operator
// "===", whose free-form version pip may read as a file name; control
// characters; and more than kMaxRequirementBytes.
inline constexpr size_t kMaxRequirementBytes = 4096;
Requirement parse_requirement(std::string_view text);

}  // namespace kwheel
