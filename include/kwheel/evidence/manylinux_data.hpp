#pragma once
// The data files under manylinux/, compiled into the library (embedded_data)
// so the tool needs no data directory at run time.
#include <string_view>

namespace kwheel::manylinux_data {

std::string_view policy_json();          // manylinux/policy.json
std::string_view torch_provided_json();  // manylinux/torch-provided.json
std::string_view stable_abi_json();      // manylinux/stable_abi.json

}  // namespace kwheel::manylinux_data
