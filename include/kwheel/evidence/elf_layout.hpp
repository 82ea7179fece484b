#pragma once
// Where an ELF file's dynamic-linking tables live (part of elf.hpp's reader,
// namespace kwheel::elf): found from the section headers when the file has
// dynamic ones, as auditwheel (pyelftools) finds them, else from PT_DYNAMIC
// and the dynamic array, as the loader does.
#include <cstdint>
#include <optional>
#include <vector>

#include "kwheel/evidence/elf_image.hpp"

namespace kwheel::elf {

struct Layout {
  std::optional<Region> dynamic;
  Region dynstr;
  std::optional<Region> dynsym;
  std::uint64_t sym_entsize = 0;
  Region symstr;
  std::optional<Region> versym;
  std::optional<Region> verneed;
  std::uint64_t verneed_count = 0;
  Region verneed_str;
  std::optional<Region> verdef;
  std::uint64_t verdef_count = 0;
  Region verdef_str;
};

// The tables' places. Refuses a file whose section headers put the dynamic
// array somewhere other than its PT_DYNAMIC segment.
Layout dynamic_layout(Image& img, const std::vector<Section>& sections, const std::vector<Segment>& segments);

}  // namespace kwheel::elf
