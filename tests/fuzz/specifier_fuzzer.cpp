// Version specifiers (`--version` of pin and build ORG/NAME, Requires-Dist
// of foreign wheels in validate) and PEP 440 versions: the first line is a
// specifier set, the rest a version to test against it. Invariants: a
// parsed set keeps its text; a parsed version's normal form parses again to
// an equal version; `==V` contains V and `!=V` does not.
#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/packaging/pep440.hpp"

using namespace kwheel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input = fuzz_string(data, size);
  const auto nl = input.find('\n');
  const std::string spec = input.substr(0, nl), version = nl == std::string::npos ? "" : input.substr(nl + 1);

  std::optional<SpecifierSet> set;
  try {
    set = SpecifierSet::parse(spec);
    FUZZ_CHECK(spec.size() <= 1024);  // longer ones are refused before any regex
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::usage);
  }

  const auto v = Version::try_parse(version);
  if (!v) return 0;
  const auto again = Version::try_parse(v->str());
  FUZZ_CHECK(again && *again == *v && again->str() == v->str());
  if (set) (void)set->contains(*v, true), (void)set->contains(*v, false);
  if (v->str().size() < 1000) {
    FUZZ_CHECK(SpecifierSet::parse("==" + v->str()).contains(*v, true));
    FUZZ_CHECK(!SpecifierSet::parse("!=" + v->str()).contains(*v, true));
  }
  return 0;
}
