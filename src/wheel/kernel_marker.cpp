#include "kwheel/wheel/kernel_marker.hpp"

#include "kwheel/base/text.hpp"

namespace kwheel {

bool marks_kernel(const MetadataFields& fields) {
  // Header names are case-insensitive (the email format METADATA uses).
  for (const auto& [key, value] : fields)
    if (ascii_lower(key) == "keywords")
      for (const auto& keyword : split(value, ','))
        if (ascii_lower(trim(keyword)) == kKernelKeyword) return true;
  return recorded_revision(fields).has_value();
}

}  // namespace kwheel
