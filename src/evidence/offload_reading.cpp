#include "kwheel/evidence/offload_reading.hpp"

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel::offload {

void Where::fail(const std::string& what) const {
  throw Error(ErrorKind::input, std::string(name) + ": " + bundle + " " + what + std::string(kFix));
}

void fail_cut_off(const Where& where, std::uint64_t size, std::uint64_t off, std::uint64_t len, std::string_view what) {
  where.fail("is cut off: " + std::string(what) + " (" + std::to_string(len) + " bytes at " + hex_offset(off) +
             ") runs past the " + std::to_string(size) + " bytes there are");
}

void Budget::charge(std::uint64_t bytes, const Where& where) {
  if (bytes > left_) where.fail("lists more entries than any real bundle (the size limit on what is read out)");
  left_ -= bytes;
}

void Budget::charge_inflated(std::uint64_t bytes, const Where& where) {
  if (bytes > inflate_left_) where.fail("decompresses, with the bundles before it, to more than 64 times the section's size");
  inflate_left_ -= bytes;
}

}  // namespace kwheel::offload
