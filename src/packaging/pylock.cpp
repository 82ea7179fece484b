#include "kwheel/packaging/pylock.hpp"

#include <cstdint>
#include <regex>

// As kernel_lock.cpp: errors as values, a malformed lock is an input error.
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

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

// Where `s` first stops being UTF-8 (RFC 3629: no overlong form, no
// surrogate, nothing past U+10FFFF), or npos.
size_t invalid_utf8_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    const size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return i;
    uint32_t cp = c & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (b & 0x3f);
    }
    constexpr uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kLeast[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace

std::string toml_basic_string(std::string_view s, const std::string& what) {
  // TOML 1.0 reads UTF-8 only; what is not cannot be written, and is not
  // replaced (the name would no longer be the file's).
  if (const size_t at = invalid_utf8_at(s); at != std::string_view::npos)
    throw Error(ErrorKind::input, "pylock.toml cannot hold " + what + " '" + printable(s) + "': byte " + std::to_string(at) + " is not UTF-8, which TOML requires");
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {  // the control characters a basic string may not hold raw
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {

std::string file_table(const LockedFile& f, const std::string& package) {
  const std::string of = " of package '" + printable(package) + "'";
  std::string t = "{ ";
  if (!f.name.empty()) t += "name = " + toml_basic_string(f.name, "the file name" + of) + ", ";
  t += f.url.empty() ? "path = " + toml_basic_string(f.path, "the path" + of) : "url = " + toml_basic_string(f.url, "the URL" + of);
  if (f.size) {
    // A TOML integer is 64-bit signed.
    if (*f.size > static_cast<uint64_t>(INT64_MAX)) throw Error(ErrorKind::input, "pylock.toml cannot hold the size " + std::to_string(*f.size) + of);
    t += ", size = " + std::to_string(*f.size);
  }
  return t + ", hashes = { sha256 = " + toml_basic_string(f.sha256, "the sha256" + of) + " } }";
}

std::string package_table(const LockedPackage& p) {
  const std::string of = " of package '" + printable(p.name) + "'";
  std::string t = "\n[[packages]]\nname = " + toml_basic_string(p.name, "the package name") + "\nversion = " + toml_basic_string(p.version, "the version" + of) + "\n";
  if (!p.marker.empty()) t += "marker = " + toml_basic_string(p.marker, "the marker" + of) + "\n";
  if (!p.requires_python.empty()) t += "requires-python = " + toml_basic_string(p.requires_python, "requires-python" + of) + "\n";
  if (!p.index.empty()) t += "index = " + toml_basic_string(p.index, "the index" + of) + "\n";
  if (p.sdist) t += "sdist = " + file_table(*p.sdist, p.name) + "\n";
  if (!p.wheels.empty()) {
    t += "wheels = [\n";
    for (const auto& w : p.wheels) t += "    " + file_table(w, p.name) + ",\n";
    t += "]\n";
  }
  return t;
}

}  // namespace

std::string pylock_text(const std::vector<std::string>& comments, const std::string& created_by, const std::string& requires_python,
                        const std::vector<LockedPackage>& packages) {
  std::string t;
  // A TOML comment holds no control character but tab, and only UTF-8:
  // printable() escapes the rest.
  for (const auto& c : comments) t += "# " + printable(c) + "\n";
  t += "lock-version = \"1.0\"\ncreated-by = " + toml_basic_string(created_by, "created-by") + "\n";
  if (!requires_python.empty()) t += "requires-python = " + toml_basic_string(requires_python, "requires-python") + "\n";
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
  f.sha256 = ascii_lower(toml_text(t["hashes"]["sha256"]));
  if (f.sha256.empty()) throw Error(ErrorKind::input, where + ": a file of it has no sha256 (" + (f.url.empty() ? f.path : f.url) + ")");
  if (!is_sha256_hex(f.sha256)) throw Error(ErrorKind::input, where + ": a file of it has the sha256 '" + f.sha256 + "', which is not 64 hex digits (" + (f.url.empty() ? f.path : f.url) + ")");
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
