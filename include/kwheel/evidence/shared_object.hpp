#pragma once
// Which archive paths are shared objects ("_ops.abi3.so", "libfoo.so.1"):
// the members the build reads evidence from, the writer marks executable,
// and inspect extracts. One rule, so the three always agree.
#include <string_view>

namespace kwheel {

inline bool is_shared_object(std::string_view path) {
  return path.ends_with(".so") || path.find(".so.") != std::string_view::npos;
}

// Where a wheel carries executables, which the loader links as it links a
// shared object: `<dist>.data/scripts/<file>`, installed on PATH, and
// `<name>.scripts/<file>`, where `auditwheel repair` moves an ELF script
// (leaving a Python shim in its place) so that its RPATH reaches the
// libraries grafted into `<name>.libs/`. Unlike a shared object, such a
// member may be a plain script: inspect reads it only when it is ELF or
// Mach-O. (auditwheel reads every non-.py member that parses as ELF;
// kernel wheels may carry ELF GPU code, cubins, that no loader links, so
// inspect looks only where executables go.)
inline bool is_wheel_script(std::string_view path) {
  const auto first = path.find('/');
  if (first == std::string_view::npos || first + 1 == path.size()) return false;
  const std::string_view top = path.substr(0, first), rest = path.substr(first + 1);
  if (top.ends_with(".scripts") && top.size() > 8) return rest.find('/') == std::string_view::npos;
  return top.ends_with(".data") && top.size() > 5 && rest.starts_with("scripts/") && rest.size() > 8 &&
         rest.find('/', 8) == std::string_view::npos;
}

}  // namespace kwheel
