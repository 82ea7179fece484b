#pragma once
// An ELF file's dynamic symbol table (part of elf.hpp's reader, namespace
// kwheel::elf): each symbol's name, binding, type, and the version its
// versym entry names (elf_versions.hpp).
#include <cstdint>
#include <unordered_map>

#include "kwheel/evidence/elf_versions.hpp"

namespace kwheel::elf {

// Fills info.dynamic_symbols (the null symbol left out); a versym index no
// need or definition in `index` declares is refused.
void read_symbols(Image& img, const Layout& l, ElfInfo& info, const std::unordered_map<std::uint16_t, VersionRef>& index);

}  // namespace kwheel::elf
