#pragma once
// Requires-Python (core metadata, PEP 503's data-requires-python, PEP 691's
// requires-python): whether a file may be installed into a Python, decided
// as pip 26 decides it (pip/_internal/utils/packaging.py
// check_requires_python: the target's major.minor.micro against the
// specifier set, empty parts of the set dropped as packaging drops them).
#include <optional>
#include <string>
#include <string_view>

namespace kwheel {

// Why a file whose Requires-Python is `requires_python` (as `where` gives
// it: "its index entry", "its METADATA") may not be installed into Python
// `python` ("3.11.2", or "3.11" read as 3.11.0), or nullopt when it may (an
// empty value allows every Python). A value that is not a PEP 440
// specifier set is a reason too: pip ignores such a value and installs,
// kwheel does not pin what it cannot check. The value is quoted with
// printable(): it comes from an index.
std::optional<std::string> requires_python_problem(std::string_view requires_python, const std::string& python, std::string_view where);

}  // namespace kwheel
