#include "kwheel/packaging/wheel_filename.hpp"

#include <algorithm>
#include <cctype>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/wheel_variant.hpp"

namespace kwheel {

std::vector<std::string> WheelFilename::tags() const {
  std::vector<std::string> out;
  for (const auto& p : python)
    for (const auto& a : abi)
      for (const auto& pl : platform) out.push_back(p + "-" + a + "-" + pl);
  return out;
}

namespace {

bool starts_with_digit(const std::string& s) { return !s.empty() && std::isdigit(static_cast<unsigned char>(s.front())); }

bool ascii_alnum(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// The bytes a wheel filename can hold: a name (letters, digits, '.', '_'),
// a PEP 440 version ('+' of a local label, '!' of an epoch) and tags
// between '-'. Whatever else a listing gives (a control byte, whitespace,
// '/', '#', ';', '%', a quote) is no wheel's: refused, so no part of it
// can carry such a byte into a file kwheel writes.
size_t foreign_byte_at(const std::string& filename) {
  for (size_t i = 0; i < filename.size(); ++i) {
    const char c = filename[i];
    if (!ascii_alnum(c) && c != '.' && c != '_' && c != '-' && c != '+' && c != '!') return i;
  }
  return std::string::npos;
}

// A compressed tag set ("cp39.cp310", "manylinux_2_28_x86_64"): tags of
// letters, digits and '_', joined by '.'.
bool is_tag_set(const std::string& part) {
  for (const auto& tag : split(part, '.'))
    if (tag.empty() || !std::all_of(tag.begin(), tag.end(), [](char c) { return ascii_alnum(c) || c == '_'; })) return false;
  return true;
}

// Where the parts of a 5-7 part stem go: PEP 825's rule (a build tag starts
// with a digit, a Python tag must not), as uv's WheelFilename::parse.
struct WheelLayout {
  bool build = false;
  bool label = false;
};

WheelLayout wheel_layout(const std::vector<std::string>& parts) {
  if (parts.size() == 7) return {true, true};
  if (parts.size() == 6) return starts_with_digit(parts[2]) ? WheelLayout{true, false} : WheelLayout{false, true};
  return {};
}

// Before PEP 825 a sixth part was a build tag, and seven were too many: the
// same messages, and what the name reads as today when it is a valid
// variant wheel name.
std::string unaccepted_label(const std::string& filename, const std::vector<std::string>& parts) {
  std::string why = parts.size() == 7 ? "expected name-version[-build]-python-abi-platform" : "build tag must start with a digit";
  try {
    const WheelFilename w = parse_wheel_filename(filename, VariantLabels::accept);
    why += " (read per PEP 825 it is a variant wheel, label '" + *w.variant + "', which is not taken here)";
  } catch (const Error&) {
  }
  return why;
}

}  // namespace

WheelFilename parse_wheel_filename(const std::string& filename, VariantLabels labels) {
  auto fail = [&](const std::string& why) {
    return Error(ErrorKind::input, "'" + filename + "' is not a valid wheel filename: " + why);
  };
  if (!filename.ends_with(".whl")) throw fail("it does not end in .whl");
  // One path component (NAME_MAX): index pages may list anything, and what
  // is parsed from it (versions, tags, labels) stays short.
  if (filename.size() > 255)
    throw Error(ErrorKind::input, "'" + filename.substr(0, 60) + "...' is not a valid wheel filename: longer than 255 bytes");
  auto parts = split(filename.substr(0, filename.size() - 4), '-');
  const bool accept = labels == VariantLabels::accept;
  if (parts.size() < 5 || parts.size() > 7)
    throw fail(accept ? "expected name-version[-build]-python-abi-platform[-label]" : "expected name-version[-build]-python-abi-platform");
  for (const auto& p : parts)
    if (p.empty()) throw fail("empty component");
  const WheelLayout layout = wheel_layout(parts);
  if (layout.label && !accept) throw fail(unaccepted_label(filename, parts));
  WheelFilename w;
  w.name = parts[0];
  w.version = parts[1];
  if (!is_valid_name(w.name)) throw fail("bad distribution name '" + w.name + "'");
  if (!Version::try_parse(w.version)) throw fail("'" + w.version + "' is not a PEP 440 version");
  size_t i = 2;
  if (layout.build) {
    w.build = parts[i++];
    if (!starts_with_digit(*w.build)) throw fail("build tag must start with a digit");
    if (!std::all_of(w.build->begin(), w.build->end(), [](char c) { return ascii_alnum(c) || c == '_'; }))
      throw fail("build tag '" + *w.build + "' holds more than letters, digits and '_'");
  }
  if (accept && starts_with_digit(parts[i])) throw fail("the Python tag must not start with a digit (PEP 825)");
  for (size_t t = i; t < i + 3; ++t)
    if (!is_tag_set(parts[t])) throw fail("tag '" + parts[t] + "' is not a '.'-joined set of tags of letters, digits and '_'");
  w.python = split(parts[i], '.');
  w.abi = split(parts[i + 1], '.');
  w.platform = split(parts[i + 2], '.');
  if (layout.label) {
    w.variant = parts.back();
    if (!is_variant_label(*w.variant)) throw fail("variant label '" + *w.variant + "' is not ^[0-9a-z_.]+$ (PEP 825)");
  }
  // Last, so that the part checks above keep their own reasons; nothing
  // parsed is used before this, so no part can carry such a byte on.
  if (const size_t at = foreign_byte_at(filename); at != std::string::npos)
    throw fail("byte " + std::to_string(at) + " ('" + printable(filename.substr(at, 1)) + "') is not one a wheel filename holds (letters, digits and . _ - + ! only)");
  return w;
}

std::string variants_json_filename(std::string_view name, std::string_view version) {
  if (!is_valid_name(name)) throw Error(ErrorKind::input, "'" + std::string(name) + "' is not a valid distribution name");
  // PEP 440 normal form, its local label lower-cased too (uv's Version
  // Display does).
  return wheel_name_component(name) + "-" + ascii_lower(Version::parse(version).str()) + "-variants.json";
}

}  // namespace kwheel
