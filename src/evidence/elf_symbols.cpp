#include "kwheel/evidence/elf_symbols.hpp"

#include <string>
#include <utility>

namespace kwheel::elf {
namespace {

SymbolBinding binding_of(std::uint8_t info) {
  switch (info >> 4) {
    case 0: return SymbolBinding::local;
    case 1: return SymbolBinding::global;
    case 2: return SymbolBinding::weak;
    case 10: return SymbolBinding::unique;
    default: return SymbolBinding::other;
  }
}

SymbolType type_of(std::uint8_t info) {
  switch (info & 0xf) {
    case 0: return SymbolType::notype;
    case 1: return SymbolType::object;
    case 2: return SymbolType::func;
    case 3: return SymbolType::section;
    case 4: return SymbolType::file;
    case 5: return SymbolType::common;
    case 6: return SymbolType::tls;
    case 10: return SymbolType::ifunc;
    default: return SymbolType::other;
  }
}

}  // namespace

void read_symbols(Image& img, const Layout& l, ElfInfo& info,
                  const std::unordered_map<std::uint16_t, VersionRef>& index) {
  if (!l.dynsym || l.sym_entsize == 0) return;
  const std::uint64_t count = l.dynsym->size / l.sym_entsize;
  if (l.versym && l.versym->size / 2 < count) {
    img.fail("symbol version table has " + std::to_string(l.versym->size / 2) + " entries for " +
             std::to_string(count) + " dynamic symbols");
  }
  info.dynamic_symbols.reserve(count > 0 ? count - 1 : 0);
  for (std::uint64_t i = 1; i < count; ++i) {
    const std::uint64_t off = l.dynsym->off + i * l.sym_entsize;
    // Elf32_Sym puts st_value and st_size before st_info; Elf64_Sym after.
    const std::uint64_t st_name = img.u32(off, "st_name");
    const std::uint8_t st_info = img.u8(off + img.at(12, 4), "st_info");
    const std::uint16_t st_shndx = img.u16(off + img.at(14, 6), "st_shndx");
    ElfSymbol sym;
    sym.name = img.str(l.symstr, st_name, "symbol");
    sym.defined = st_shndx != 0;
    sym.binding = binding_of(st_info);
    sym.type = type_of(st_info);
    if (l.versym) {
      const std::uint16_t v = img.get<std::uint16_t>(l.versym->off + 2 * i, "versym entry") & ~VERSYM_HIDDEN;
      if (v > 1) {  // 0: local, 1: global base version; neither names a version
        const auto it = index.find(v);
        if (it == index.end()) {
          img.fail("symbol `" + sym.name + "` has version index " + std::to_string(v) +
                   " that no version need or definition declares");
        }
        sym.version = it->second.name;
        if (!sym.defined) sym.version_file = it->second.file;
      }
    }
    info.dynamic_symbols.push_back(std::move(sym));
  }
}

}  // namespace kwheel::elf
