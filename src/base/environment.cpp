#include "kwheel/base/environment.hpp"

#include <cstdlib>

namespace kwheel {

std::optional<std::string> env_value(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

}  // namespace kwheel
