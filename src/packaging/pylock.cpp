#include "kwheel/packaging/pylock.hpp"

#include <nlohmann/json.hpp>
#include <regex>

// As kernel_lock.cpp: errors as values, a malformed lock is an input error.
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "kwheel/base/error.hpp"

namespace kwheel {

bool is_pylock_name(const std::string& filename) {
  static const std::regex rule(R"(^pylock\.([^.]+\.)?toml$)");
  return filename.size() < 256 && std::regex_match(filename, rule);
}

std::optional<std::string> pylock_name_problem(const std::string& filename) {
  if (is_pylock_name(filename) || !filename.starts_with("pylock") || !filename.ends_with(".toml")) return std::nullopt;
  return "'" + filename + "' is not a PEP 751 lock file name, which pip and uv look for; name it pylock.toml or pylock.NAME.toml (NAME without dots)";
}

namespace {

// A TOML basic string: JSON's escapes (\" \\ \n \uXXXX ...) are TOML's too.
std::string toml_string(const std::string& s) { return nlohmann::json(s).dump(); }

std::string file_table(const LockedFile& f) {
  std::string t = "{ ";
  if (!f.name.empty()) t += "name = " + toml_string(f.name) + ", ";
  t += f.url.empty() ? "path = " + toml_string(f.path) : "url = " + toml_string(f.url);
  if (f.size) t += ", size = " + std::to_string(*f.size);
  return t + ", hashes = { sha256 = " + toml_string(f.sha256) + " } }";
}

std::string package_table(const LockedPackage& p) {
  std::string t = "\n[[packages]]\nname = " + toml_string(p.name) + "\nversion = " + toml_string(p.version) + "\n";
  if (!p.marker.empty()) t += "marker = " + toml_string(p.marker) + "\n";
  if (!p.requires_python.empty()) t += "requires-python = " + toml_string(p.requires_python) + "\n";
  if (!p.index.empty()) t += "index = " + toml_string(p.index) + "\n";
  if (p.sdist) t += "sdist = " + file_table(*p.sdist) + "\n";
  if (!p.wheels.empty()) {
    t += "wheels = [\n";
    for (const auto& w : p.wheels) t += "    " + file_table(w) + ",\n";
    t += "]\n";
  }
  return t;
}

}  // namespace

std::string pylock_text(const std::vector<std::string>& comments, const std::string& created_by, const std::string& requires_python,
                        const std::vector<LockedPackage>& packages) {
  std::string t;
  for (const auto& c : comments) t += "# " + c + "\n";
  t += "lock-version = \"1.0\"\ncreated-by = " + toml_string(created_by) + "\n";
  if (!requires_python.empty()) t += "requires-python = " + toml_string(requires_python) + "\n";
  for (const auto& p : packages) t += package_table(p);
  return t;
}

namespace {

std::string toml_text(const toml::node_view<const toml::node>& n) { return n.value_or(std::string()); }

LockedFile read_locked_file(const toml::table& t, const std::string& where) {
  LockedFile f;
  f.name = toml_text(t["name"]);
  f.url = toml_text(t["url"]);
  f.path = toml_text(t["path"]);
  if (auto size = t["size"].value<int64_t>(); size && *size >= 0) f.size = static_cast<uint64_t>(*size);
  f.sha256 = toml_text(t["hashes"]["sha256"]);
  if (f.sha256.size() != 64) throw Error(ErrorKind::input, where + ": a file of it has no sha256 (" + (f.url.empty() ? f.path : f.url) + ")");
  return f;
}

LockedPackage read_package(const toml::table& t, const std::string& where) {
  LockedPackage p;
  p.name = toml_text(t["name"]);
  p.version = toml_text(t["version"]);
  const std::string at = where + " package '" + p.name + "'";
  if (p.name.empty() || p.version.empty()) throw Error(ErrorKind::input, at + " has no name or no version; lock it again");
  p.marker = toml_text(t["marker"]);
  p.requires_python = toml_text(t["requires-python"]);
  p.index = toml_text(t["index"]);
  if (const toml::table* s = t["sdist"].as_table()) p.sdist = read_locked_file(*s, at);
  if (const toml::array* ws = t["wheels"].as_array())
    for (const auto& w : *ws)
      if (const toml::table* wt = w.as_table()) p.wheels.push_back(read_locked_file(*wt, at));
  return p;
}

}  // namespace

std::vector<LockedPackage> read_pylock_packages(const std::string& text, const std::string& where) {
  toml::parse_result parsed = toml::parse(text, where);
  if (!parsed) {
    const auto& e = parsed.error();
    throw Error(ErrorKind::input, where + " is not valid TOML (line " + std::to_string(e.source().begin.line) + ": " + std::string(e.description()) + ")");
  }
  const toml::table& root = parsed.table();
  if (!toml_text(root["lock-version"]).starts_with("1."))
    throw Error(ErrorKind::input, where + " is not a PEP 751 lock of version 1.x (lock-version '" + toml_text(root["lock-version"]) + "')");
  std::vector<LockedPackage> out;
  if (const toml::array* packages = root["packages"].as_array())
    for (const auto& p : *packages)
      if (const toml::table* t = p.as_table()) out.push_back(read_package(*t, where));
  return out;
}

}  // namespace kwheel
