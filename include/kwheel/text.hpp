#pragma once
// Small string helpers shared by the parsers of names, tags and labels.
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

// Every field between separators, empty ones included: split("a..b", '.')
// is {"a", "", "b"}; split("", '.') is {""}.
std::vector<std::string> split(std::string_view text, char separator);

}  // namespace kwheel
