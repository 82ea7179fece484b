#include "kwheel/sigstore/canonical_json.hpp"

#include "kwheel/base/error.hpp"

namespace kwheel::sigstore {

namespace {

void canonical_refuse_floats(const nlohmann::json& v) {
  if (v.is_number_float()) throw Error(ErrorKind::input, "canonical JSON: floating-point numbers are not supported");
  if (v.is_structured())
    for (const auto& item : v) canonical_refuse_floats(item);
}

}  // namespace

std::string canonical_json(const nlohmann::json& value) {
  canonical_refuse_floats(value);
  // nlohmann's compact dump is RFC 8785 for this subset: object keys are
  // held sorted by byte (UTF-8 byte order equals UTF-16 code unit order for
  // the ASCII keys a promise has), no whitespace, "\b \t \n \f \r \" \\"
  // short escapes and other controls as lowercase \u00xx, everything else
  // as raw UTF-8 (ensure_ascii off), integers in decimal.
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
}

}  // namespace kwheel::sigstore
