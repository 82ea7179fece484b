#pragma once
// An ELF file's dynamic array (part of elf.hpp's reader, namespace
// kwheel::elf): DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH and DT_FLAGS_1,
// and the version counts the loader trusts over the section headers.
#include "kwheel/evidence/elf_layout.hpp"

namespace kwheel::elf {

// Fills info's needed, soname, rpath, runpath and flags_1.
void read_dynamic(Image& img, const Layout& l, ElfInfo& info);

}  // namespace kwheel::elf
