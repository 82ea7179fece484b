#pragma once
// ~/.pypirc, read the way twine 7 reads it (utils.get_config): Python's
// configparser.RawConfigParser syntax, [distutils] index-servers naming the
// repositories, [server-login] as the fallback credentials, "pypi" always
// known. Errors never quote the file's values: they may be tokens.
#include <map>
#include <optional>
#include <string>

#include "kwheel/base/secret.hpp"

namespace kwheel {

// RawConfigParser's model: section -> option (lower-cased) -> value, with
// [DEFAULT]'s options visible in every section. Throws Error(input) naming
// `where` and the line on duplicate sections/options, options outside a
// section or lines that are not "key = value" / "key: value".
struct IniFile {
  std::map<std::string, std::map<std::string, std::string>> sections;
  std::map<std::string, std::string> defaults;
  bool has_section(const std::string& s) const { return sections.count(s) > 0; }
  std::optional<std::string> get(const std::string& section, const std::string& option) const;
};
IniFile parse_ini(const std::string& text, const std::string& where);

struct PypircRepository {
  std::optional<std::string> repository;  // upload URL
  std::optional<std::string> username;
  std::optional<Secret> password;
  std::optional<std::string> ca_cert;
  std::optional<std::string> client_cert;
};

constexpr const char* kPypiUploadUrl = "https://upload.pypi.org/legacy/";
constexpr const char* kTestPypiUploadUrl = "https://test.pypi.org/legacy/";

// twine's get_config: one entry per index server ("pypi" always, "testpypi"
// when listed), each starting from [server-login]'s username/password.
std::map<std::string, PypircRepository> pypirc_repositories(const IniFile& ini);

}  // namespace kwheel
