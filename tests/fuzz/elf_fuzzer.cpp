// libFuzzer target for the ELF reader and the decision built on it. Built and
// run by scripts/fuzz. Any outcome but "parsed" or "kwheel::Error" (a
// crash, a sanitizer report, a hang, an out-of-memory) is a bug.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kwheel/evidence/elf.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/manylinux.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    std::vector<kwheel::ElfInfo> files{kwheel::parse_elf(bytes, "fuzz.so")};
    // Whatever the parser accepts must be safe to judge, too.
    kwheel::ManylinuxOptions options;
    options.arch = "x86_64";
    options.requested = "manylinux_2_28";
    (void)kwheel::assess_manylinux(files, options);
  } catch (const kwheel::Error&) {
  }
  return 0;
}
