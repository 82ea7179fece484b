#include "kwheel/secret.hpp"

namespace kwheel {

std::string Secret::redact(std::string text) const {
  if (value_.empty()) return text;
  for (size_t pos; (pos = text.find(value_)) != std::string::npos;) text.replace(pos, value_.size(), "***");
  return text;
}

}  // namespace kwheel
