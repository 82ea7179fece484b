#include "kwheel/evidence/manylinux_data.hpp"

#include "kwheel/base/embedded_data.hpp"

namespace kwheel::manylinux_data {

std::string_view policy_json() { return embedded_data("policy"); }
std::string_view torch_provided_json() { return embedded_data("torch-provided"); }
std::string_view stable_abi_json() { return embedded_data("stable_abi"); }

}  // namespace kwheel::manylinux_data
