#pragma once
// RFC 8785 (JSON Canonicalization Scheme) as far as a Rekor inclusion
// promise needs it: objects with string and integer members, keys sorted,
// no whitespace, strings escaped as the RFC says. Floats are refused rather
// than formatted (ECMAScript number formatting is not needed here).
#include <string>

#include <nlohmann/json.hpp>

namespace kwheel::sigstore {

// Throws Error(input) when `value` holds a float.
std::string canonical_json(const nlohmann::json& value);

}  // namespace kwheel::sigstore
