// A wheel's Requires-Dist, read as validate and pin read it before a child
// tool sees it (parse_requirement, then for_pip). Invariants: a result or
// Error(input); what pip is handed parses again to itself, starts with the
// PEP 503 name (never '-', never a path or URL), and before its marker
// holds no '@', '/', '\', ';' or '#' and does not end in a file extension.
#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/requirement.hpp"

using namespace kwheel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Requirement r;
  try {
    r = parse_requirement(fuzz_string(data, size));
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);
    return 0;
  }
  const std::string pip = r.for_pip();
  FUZZ_CHECK(pip.starts_with(normalize_name(r.name)) && is_valid_name(r.name));
  const std::string head = pip.substr(0, pip.find(" ; "));
  FUZZ_CHECK(head.find_first_of("@/\\;#\n\r") == std::string::npos);
  FUZZ_CHECK(head.back() == ')' || head.back() == ']' || head.find('.') == std::string::npos);
  const Requirement again = parse_requirement(pip);
  FUZZ_CHECK(again.for_pip() == pip);
  return 0;
}
