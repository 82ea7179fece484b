#pragma once
// Policy data kwheel follows (kernels-data/*.json, manylinux/*.json and
// sigstore-data/*.json),
// compiled into the binary by cmake/embed_files.cmake so the rules travel
// with the program and no generated source is checked in.
#include <string_view>

namespace kwheel {

// The text of kernels-data/<name>.json, manylinux/<name>.json or
// sigstore-data/<name>.json, or an empty view.
std::string_view embedded_data(std::string_view name);

}  // namespace kwheel
