#include "kwheel/packaging/wheel_filename.hpp"

#include "kwheel/base/error.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {

std::vector<std::string> WheelFilename::tags() const {
  std::vector<std::string> out;
  for (const auto& p : python)
    for (const auto& a : abi)
      for (const auto& pl : platform) out.push_back(p + "-" + a + "-" + pl);
  return out;
}

WheelFilename parse_wheel_filename(const std::string& filename) {
  auto fail = [&](const std::string& why) {
    return Error(ErrorKind::input, "'" + filename + "' is not a valid wheel filename: " + why);
  };
  if (!filename.ends_with(".whl")) throw fail("it does not end in .whl");
  // One path component (NAME_MAX): index pages may list anything, and what
  // is parsed from it (versions, tags, labels) stays short.
  if (filename.size() > 255)
    throw Error(ErrorKind::input, "'" + filename.substr(0, 60) + "...' is not a valid wheel filename: longer than 255 bytes");
  auto parts = split(filename.substr(0, filename.size() - 4), '-');
  if (parts.size() != 5 && parts.size() != 6) throw fail("expected name-version[-build]-python-abi-platform");
  for (const auto& p : parts)
    if (p.empty()) throw fail("empty component");
  WheelFilename w;
  w.name = parts[0];
  w.version = parts[1];
  if (!is_valid_name(w.name)) throw fail("bad distribution name '" + w.name + "'");
  if (!Version::try_parse(w.version)) throw fail("'" + w.version + "' is not a PEP 440 version");
  size_t i = 2;
  if (parts.size() == 6) {
    w.build = parts[2];
    if (!std::isdigit(static_cast<unsigned char>(w.build->front()))) throw fail("build tag must start with a digit");
    i = 3;
  }
  w.python = split(parts[i], '.');
  w.abi = split(parts[i + 1], '.');
  w.platform = split(parts[i + 2], '.');
  return w;
}

}  // namespace kwheel
