#pragma once
// Which archive paths are shared objects ("_ops.abi3.so", "libfoo.so.1"):
// the members the build reads evidence from, the writer marks executable,
// and inspect extracts. One rule, so the three always agree.
#include <string_view>

namespace kwheel {

inline bool is_shared_object(std::string_view path) {
  return path.ends_with(".so") || path.find(".so.") != std::string_view::npos;
}

}  // namespace kwheel
