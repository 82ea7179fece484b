#pragma once
// Reading the environment: a variable set to the empty string counts as
// unset, as pip, huggingface_hub and uv read theirs.
#include <optional>
#include <string>

namespace kwheel {

// The variable's value, or nullopt when it is unset or empty.
std::optional<std::string> env_value(const char* name);

}  // namespace kwheel
