#pragma once
// The inside of elf.hpp's reader, shared by src/evidence/elf*.cpp and by
// nothing else (namespace kwheel::elf): ELF's constants, the checked image
// every field is read through, and the file's own structure, the ELF header
// and its section and program header tables. What is read from them: the
// dynamic tables' places (elf_layout.hpp), the dynamic array
// (elf_dynamic.hpp), the symbol versions (elf_versions.hpp) and the dynamic
// symbols (elf_symbols.hpp).
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/base/byte_reader.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/evidence/elf.hpp"

namespace kwheel::elf {

// ELF constants, spelled out so no system <elf.h> (glibc-specific, host-arch
// biased) is needed.
// Section types (sh_type), the GNU symbol-versioning ones last.
enum SectionType : std::uint32_t { SHT_STRTAB = 3, SHT_DYNAMIC = 6, SHT_NOBITS = 8, SHT_DYNSYM = 11 };
enum GnuSectionType : std::uint32_t { SHT_GNU_VERDEF = 0x6ffffffd, SHT_GNU_VERNEED = 0x6ffffffe, SHT_GNU_VERSYM = 0x6fffffff };
// Segment types (p_type).
enum SegmentType : std::uint32_t { PT_LOAD = 1, PT_DYNAMIC = 2 };
// Dynamic-array tags (d_tag): the generic ones, then GNU's.
enum DynamicTag : std::int64_t {
  DT_NULL = 0, DT_NEEDED = 1, DT_HASH = 4, DT_STRTAB = 5, DT_SYMTAB = 6, DT_STRSZ = 10,
  DT_SYMENT = 11, DT_SONAME = 14, DT_RPATH = 15, DT_RUNPATH = 29
};
enum GnuDynamicTag : std::int64_t {
  DT_GNU_HASH = 0x6ffffef5, DT_VERSYM = 0x6ffffff0, DT_FLAGS_1 = 0x6ffffffb, DT_VERDEF = 0x6ffffffc,
  DT_VERDEFNUM = 0x6ffffffd, DT_VERNEED = 0x6ffffffe, DT_VERNEEDNUM = 0x6fffffff
};
// Flag bits, and the escape values of header counts too large for 16 bits.
enum : std::uint16_t { VER_FLG_BASE = 0x1, VERSYM_HIDDEN = 0x8000, PN_XNUM = 0xffff };
constexpr std::uint64_t SHN_XINDEX = 0xffff;

// Real objects stay far below these; they bound work on hostile headers
// whose counts are not otherwise tied to bytes present in the file.
constexpr std::uint64_t kMaxSections = 1u << 20;
constexpr std::uint64_t kMaxSegments = 1u << 16;
constexpr std::uint64_t kMaxVersionIndex = 0x7fff;  // versym indices are 15-bit

// Error(input): "<name>: malformed ELF: <what>".
[[noreturn]] void fail(std::string_view name, const std::string& what);

// A file range already checked to lie inside the image.
struct Region {
  std::uint64_t off = 0;
  std::uint64_t size = 0;
};

// The image with ELF's error messages, and what ELF adds to plain reads:
// checked arithmetic on offsets from the file, address-sized fields, and
// names out of string tables. Every read goes through here, so no offset
// from the file is ever dereferenced unchecked.
class Image : public ByteReader {
 public:
  Image(std::span<const std::byte> bytes, std::string_view name)
      : ByteReader(bytes, ByteOrder::little, past_the_end(name, bytes.size())), name_(name) {
    // Strings are copied out of the image; a hostile file can point
    // thousands of symbols at one long name, so total copied bytes are
    // capped relative to the input.
    string_budget_ = 64ull * 1024 * 1024 + 4 * static_cast<std::uint64_t>(bytes.size());
  }

  std::string_view name() const { return name_; }
  bool is64 = true;

  [[noreturn]] void fail(const std::string& what) const { elf::fail(name_, what); }

  std::uint64_t add(std::uint64_t a, std::uint64_t b, const char* what) const {
    if (a > std::numeric_limits<std::uint64_t>::max() - b) fail(std::string(what) + " overflows");
    return a + b;
  }
  std::uint64_t mul(std::uint64_t a, std::uint64_t b, const char* what) const {
    if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) fail(std::string(what) + " overflows");
    return a * b;
  }

  Region region(std::uint64_t off, std::uint64_t len, const std::string& what) const {
    if (!contains(off, len)) {
      fail(what + " at offset " + hex_offset(off) + " (size " + std::to_string(len) +
           ") runs past the end of the file (" + std::to_string(size()) + " bytes)");
    }
    return Region{off, len};
  }

  // The offset of a field that ELFCLASS32 and ELFCLASS64 lay out apart.
  std::uint64_t at(std::uint64_t elf32, std::uint64_t elf64) const { return is64 ? elf64 : elf32; }
  // Address-sized field: 4 bytes in ELFCLASS32, 8 in ELFCLASS64.
  std::uint64_t word(std::uint64_t off, const char* what) const {
    return is64 ? get<std::uint64_t>(off, what) : get<std::uint32_t>(off, what);
  }
  std::int64_t sword(std::uint64_t off, const char* what) const {
    return is64 ? get<std::int64_t>(off, what) : get<std::int32_t>(off, what);
  }

  // NUL-terminated string at `index` inside the string table `table`.
  std::string str(const Region& table, std::uint64_t index, const char* what) {
    if (index >= table.size) {
      fail(std::string(what) + " name offset " + hex_offset(index) + " is outside its string table (" +
           std::to_string(table.size) + " bytes)");
    }
    const char* begin = reinterpret_cast<const char*>(bytes().data() + table.off + index);
    const std::uint64_t max = table.size - index;
    const void* nul = std::memchr(begin, 0, max);
    if (nul == nullptr) fail(std::string(what) + " name is not NUL-terminated inside its string table");
    const std::uint64_t len = static_cast<std::uint64_t>(static_cast<const char*>(nul) - begin);
    if (len > string_budget_) fail("string data exceeds the size limit (names overlap pathologically)");
    string_budget_ -= len;
    return std::string(begin, len);
  }

 private:
  static Refusal past_the_end(std::string_view name, std::uint64_t size) {
    return [name, size](std::uint64_t off, std::uint64_t, std::string_view what) {
      elf::fail(name, std::string(what) + " at offset " + hex_offset(off) + " runs past the end of the file (" +
                          std::to_string(size) + " bytes)");
    };
  }

  std::string_view name_;
  std::uint64_t string_budget_ = 0;
};

struct Header {
  std::uint16_t type = 0, machine = 0;
  std::uint64_t phoff = 0, shoff = 0;
  std::uint16_t phentsize = 0, shentsize = 0;
  std::uint64_t phnum = 0, shnum = 0;
  std::uint64_t shstrndx = 0;
};

struct Section {
  std::uint32_t name = 0;  // offset into the section-name string table
  std::uint32_t type = 0;
  std::uint64_t offset = 0, size = 0, entsize = 0;
  std::uint32_t link = 0, info = 0;
};

struct Segment {
  std::uint32_t type = 0;
  std::uint64_t offset = 0, vaddr = 0, filesz = 0;
};

// The ELF header; sets the image's class and byte order, and info's.
Header read_header(Image& img, ElfInfo& info);
// The section header table (empty without one). Extended numbering moves
// counts too large for the header into section 0: `h` is updated with them.
std::vector<Section> read_sections(Image& img, Header& h);
// The program header table (empty without one).
std::vector<Segment> read_segments(Image& img, const Header& h);

// A section's bytes in the file (none for SHT_NOBITS).
Region section_region(Image& img, const Section& s, const std::string& what);
// The string table section `s` links to; `what` names `s` in refusals.
Region linked_strtab(Image& img, const std::vector<Section>& sections, const Section& s, const std::string& what);

// The sizes of one Elf_Sym and one Elf_Dyn in the image's class.
inline std::uint64_t sym_size(const Image& img) { return img.at(16, 24); }
inline std::uint64_t dyn_size(const Image& img) { return img.at(8, 16); }

}  // namespace kwheel::elf
