#pragma once
// An ELF file's GNU symbol versions (part of elf.hpp's reader, namespace
// kwheel::elf): the version needs (SHT_GNU_verneed, DT_VERNEED), which
// library must define which version, and the version definitions
// (SHT_GNU_verdef, DT_VERDEF). Both fill the index that the dynamic
// symbols' versym entries name (elf_symbols.hpp).
#include <cstdint>
#include <string>
#include <unordered_map>

#include "kwheel/evidence/elf_layout.hpp"

namespace kwheel::elf {

// What a versym index stands for.
struct VersionRef {
  std::string name;
  std::string file;  // empty for definitions
};

// Fill info.version_definitions and info.version_needs, and `index` with
// every version index they declare.
void read_verdef(Image& img, const Layout& l, ElfInfo& info, std::unordered_map<std::uint16_t, VersionRef>& index);
void read_verneed(Image& img, const Layout& l, ElfInfo& info, std::unordered_map<std::uint16_t, VersionRef>& index);

}  // namespace kwheel::elf
