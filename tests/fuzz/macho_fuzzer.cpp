// libFuzzer target for the Mach-O reader, and for the PE reader too: both
// read the headers of a binary from an untrusted wheel, and one corpus of
// small real dylibs, objects and DLLs (tests/fuzz/seeds/macho/) feeds both.
// Built and run by scripts/fuzz. Any outcome but "parsed" or kwheel::Error
// (a crash, a sanitizer report, a hang, an out-of-memory) is a bug, and so
// is a result that breaks a FUZZ_CHECK.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/macho.hpp"
#include "kwheel/evidence/pe.hpp"

namespace {

void fuzz_macho(std::span<const std::byte> bytes) {
  try {
    const kwheel::MachOInfo info = kwheel::parse_macho(bytes, "fuzz.dylib");
    // Scanners skip what the prefilter turns away: it must pass whatever
    // the parser accepts. Callers take each slice as evidence.
    FUZZ_CHECK(kwheel::has_macho_magic(bytes));
    FUZZ_CHECK(!info.slices.empty());
    FUZZ_CHECK(info.universal || info.slices.size() == 1);
    for (const auto& s : info.slices) {
      FUZZ_CHECK(!s.arch.empty());
      FUZZ_CHECK(s.min_macos.has_value() == !s.min_macos_source.empty());
    }
  } catch (const kwheel::Error&) {
  }
}

void fuzz_pe(std::span<const std::byte> bytes) {
  try {
    const kwheel::PeInfo info = kwheel::parse_pe(bytes, "fuzz.dll");
    FUZZ_CHECK(kwheel::has_pe_magic(bytes));
    FUZZ_CHECK(!info.arch.empty());
  } catch (const kwheel::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  fuzz_macho(bytes);
  fuzz_pe(bytes);
  return 0;
}
