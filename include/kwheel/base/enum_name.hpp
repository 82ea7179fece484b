#pragma once
// The printed name of an enum value (a status in a report, a suffix in an
// arch name), looked up in a table written beside the enum's printer: one
// rule for every such printer instead of a switch apiece.
#include <cstddef>
#include <string_view>

namespace kwheel {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

// `fallback` is what a value missing from the table prints as. Tables list
// names as string literals, so name.data() is a C string.
template <class E, std::size_t N>
constexpr std::string_view enum_name(E value, const EnumName<E> (&names)[N], std::string_view fallback = "?") {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return fallback;
}

}  // namespace kwheel
