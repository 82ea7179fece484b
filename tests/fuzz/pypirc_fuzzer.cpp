// ~/.pypirc (or --config-file), read as resolve_repository reads it:
// parse_ini, then twine's repository table.
#include <cctype>

#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/index/pypirc.hpp"

using namespace kwheel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  IniFile ini;
  try {
    ini = parse_ini(fuzz_string(data, size), "fuzz.pypirc");
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);
    return 0;
  }
  auto check_options = [](const std::map<std::string, std::string>& options) {
    for (const auto& [key, _] : options) {  // RawConfigParser.optionxform: lower-cased, stripped
      FUZZ_CHECK(!key.empty());
      for (unsigned char c : key) FUZZ_CHECK(std::tolower(c) == c);
      FUZZ_CHECK(key.front() != ' ' && key.back() != ' ');
    }
  };
  check_options(ini.defaults);
  for (const auto& [name, options] : ini.sections) {
    FUZZ_CHECK(name != "DEFAULT");
    check_options(options);
    for (const auto& [key, value] : options) FUZZ_CHECK(ini.get(name, key) == value);
  }
  const auto repos = pypirc_repositories(ini);
  FUZZ_CHECK(repos.count("pypi") == 1);
  for (const auto& [name, repo] : repos) FUZZ_CHECK(!name.empty());
  return 0;
}
