#include "kwheel/index/pypirc.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
namespace {

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

std::optional<std::string> IniFile::get(const std::string& section, const std::string& option) const {
  auto s = sections.find(section);
  if (s == sections.end()) return std::nullopt;  // RawConfigParser.has_option: no section, no option
  auto o = s->second.find(option);
  if (o != s->second.end()) return o->second;
  auto d = defaults.find(option);
  if (d != defaults.end()) return d->second;
  return std::nullopt;
}

IniFile parse_ini(const std::string& text, const std::string& where) {
  IniFile ini;
  std::map<std::string, std::string>* current = nullptr;
  std::string current_option;
  size_t option_indent = 0;
  size_t blank_lines = 0;
  size_t lineno = 0;
  auto malformed = [&](const std::string& why) {
    return Error(ErrorKind::input, "malformed configuration in " + where + " line " + std::to_string(lineno) + ": " + why +
                                       " (format: https://packaging.python.org/specifications/pypirc/)");
  };
  std::istringstream in(text);
  for (std::string raw; std::getline(in, raw);) {
    ++lineno;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (lineno == 1 && raw.starts_with("\xEF\xBB\xBF")) raw.erase(0, 3);
    const std::string line = trim(raw);
    const size_t indent = raw.find_first_not_of(" \t");
    if (line.empty() || line[0] == '#' || line[0] == ';') {
      if (line.empty()) ++blank_lines;  // kept inside a value that goes on, dropped at its end
      continue;
    }
    // A line indented deeper than its option continues that option's value.
    if (current && !current_option.empty() && indent != std::string::npos && indent > option_indent) {
      std::string& v = (*current)[current_option];
      v += (v.empty() ? "" : std::string(blank_lines + 1, '\n')) + line;
      blank_lines = 0;
      continue;
    }
    if (line.front() == '[' && line.find(']') != std::string::npos && line.back() == ']') {
      std::string name = line.substr(1, line.size() - 2);
      if (name == "DEFAULT") {
        current = &ini.defaults;
      } else {
        if (ini.sections.count(name)) throw malformed("section [" + name + "] appears twice");
        current = &ini.sections[name];
      }
      current_option.clear();
      blank_lines = 0;
      continue;
    }
    if (!current) throw malformed("an option before the first [section]");
    size_t eq = line.find_first_of("=:");
    if (eq == std::string::npos || eq == 0) throw malformed("expected 'key = value'");
    std::string key = ascii_lower(trim(line.substr(0, eq)));
    if (key.empty()) throw malformed("expected 'key = value'");
    if (current->count(key)) throw malformed("option '" + key + "' appears twice in one section");
    (*current)[key] = trim(line.substr(eq + 1));
    current_option = key;
    blank_lines = 0;
    option_indent = indent == std::string::npos ? 0 : indent;
  }
  return ini;
}

std::map<std::string, PypircRepository> pypirc_repositories(const IniFile& ini) {
  PypircRepository defaults;
  defaults.username = ini.get("server-login", "username");
  if (auto p = ini.get("server-login", "password")) defaults.password = Secret(*p);
  std::vector<std::string> servers = split_ws(ini.get("distutils", "index-servers").value_or("pypi testpypi"));
  std::map<std::string, PypircRepository> out;
  out["pypi"] = defaults;
  out["pypi"].repository = kPypiUploadUrl;
  if (std::find(servers.begin(), servers.end(), "testpypi") != servers.end()) {
    out["testpypi"] = defaults;
    out["testpypi"].repository = kTestPypiUploadUrl;
  }
  for (const auto& name : servers) {
    auto [it, fresh] = out.try_emplace(name, defaults);
    PypircRepository& r = it->second;
    if (auto v = ini.get(name, "username")) r.username = *v;
    if (auto v = ini.get(name, "repository")) r.repository = *v;
    if (auto v = ini.get(name, "password")) r.password = Secret(*v);
    if (auto v = ini.get(name, "ca_cert")) r.ca_cert = *v;
    if (auto v = ini.get(name, "client_cert")) r.client_cert = *v;
  }
  return out;
}

}  // namespace kwheel
