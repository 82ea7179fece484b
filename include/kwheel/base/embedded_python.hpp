#pragma once
// Python helpers kwheel runs in other interpreters (src/python/*.py),
// compiled into the binary by cmake/embed_python.cmake.
#include <string_view>

namespace kwheel {

// The source of src/python/<name>.py, or an empty view.
std::string_view embedded_python(std::string_view name);

}  // namespace kwheel
