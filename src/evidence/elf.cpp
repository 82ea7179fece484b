#include "kwheel/evidence/elf.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "kwheel/base/byte_reader.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/base/mapped_file.hpp"

namespace kwheel {
namespace {

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

[[noreturn]] void fail(std::string_view name, const std::string& what) {
  throw Error(ErrorKind::input, std::string(name) + ": malformed ELF: " + what);
}

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

  [[noreturn]] void fail(const std::string& what) const { kwheel::fail(name_, what); }

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
      kwheel::fail(name, std::string(what) + " at offset " + hex_offset(off) + " runs past the end of the file (" +
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

// Where the dynamic-linking tables live, found from section headers when the
// file has them (as auditwheel/pyelftools does) or from PT_DYNAMIC otherwise.
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

Header read_header(Image& img, ElfInfo& info) {
  if (img.size() < 16) img.fail("file is " + std::to_string(img.size()) + " bytes, too short for an ELF header");
  const auto cls = img.get<std::uint8_t>(4, "e_ident");
  const auto data = img.get<std::uint8_t>(5, "e_ident");
  if (cls != 1 && cls != 2) img.fail("unknown ELF class " + std::to_string(cls));
  if (data != 1 && data != 2) img.fail("unknown ELF data encoding " + std::to_string(data));
  img.is64 = cls == 2;
  info.elf_class = img.is64 ? ElfClass::elf64 : ElfClass::elf32;
  info.endian = data == 1 ? ElfEndian::little : ElfEndian::big;
  img.set_order(data == 2 ? ByteOrder::big : ByteOrder::little);

  const std::uint64_t ehsize = img.at(52, 64);
  if (img.size() < ehsize) img.fail("file is " + std::to_string(img.size()) + " bytes, too short for the ELF header");
  Header h;
  h.type = img.get<std::uint16_t>(16, "e_type");
  h.machine = img.get<std::uint16_t>(18, "e_machine");
  // From e_phoff on, ELFCLASS64 fields sit later: e_entry and the offsets widen.
  h.phoff = img.word(img.at(28, 32), "e_phoff");
  h.shoff = img.word(img.at(32, 40), "e_shoff");
  h.phentsize = img.u16(img.at(42, 54), "e_phentsize");
  h.phnum = img.u16(img.at(44, 56), "e_phnum");
  h.shentsize = img.u16(img.at(46, 58), "e_shentsize");
  h.shnum = img.u16(img.at(48, 60), "e_shnum");
  h.shstrndx = img.u16(img.at(50, 62), "e_shstrndx");
  return h;
}

Section read_section(Image& img, const Header& h, std::uint64_t index) {
  const std::uint64_t off = img.add(h.shoff, img.mul(index, h.shentsize, "section header offset"), "section header offset");
  // Checked whole first, so the field offsets below cannot wrap.
  img.region(off, h.shentsize, "section header " + std::to_string(index));
  Section s;
  s.name = img.u32(off, "sh_name");
  s.type = img.u32(off + 4, "sh_type");
  s.offset = img.word(off + img.at(16, 24), "sh_offset");
  s.size = img.word(off + img.at(20, 32), "sh_size");
  s.link = img.u32(off + img.at(24, 40), "sh_link");
  s.info = img.u32(off + img.at(28, 44), "sh_info");
  s.entsize = img.word(off + img.at(36, 56), "sh_entsize");
  return s;
}

std::vector<Section> read_sections(Image& img, Header& h) {
  std::vector<Section> out;
  if (h.shoff == 0) return out;
  const std::uint64_t want = img.at(40, 64);
  if (h.shentsize != want) {
    img.fail("e_shentsize is " + std::to_string(h.shentsize) + ", expected " + std::to_string(want));
  }
  // Extended numbering: counts too large for the 16-bit header fields live
  // in section 0.
  if (h.shnum == 0 || h.phnum == PN_XNUM || h.shstrndx == SHN_XINDEX) {
    const Section zero = read_section(img, h, 0);
    if (h.shnum == 0) h.shnum = zero.size;
    if (h.phnum == PN_XNUM) h.phnum = zero.info;
    if (h.shstrndx == SHN_XINDEX) h.shstrndx = zero.link;
  }
  if (h.shnum > kMaxSections) img.fail("section count " + std::to_string(h.shnum) + " exceeds the limit");
  img.region(h.shoff, img.mul(h.shnum, h.shentsize, "section header table size"), "section header table");
  out.reserve(h.shnum);
  for (std::uint64_t i = 0; i < h.shnum; ++i) out.push_back(read_section(img, h, i));
  return out;
}

std::vector<Segment> read_segments(Image& img, const Header& h) {
  std::vector<Segment> out;
  if (h.phoff == 0 || h.phnum == 0) return out;
  const std::uint64_t want = img.at(32, 56);
  if (h.phentsize != want) {
    img.fail("e_phentsize is " + std::to_string(h.phentsize) + ", expected " + std::to_string(want));
  }
  if (h.phnum > kMaxSegments) img.fail("program header count " + std::to_string(h.phnum) + " exceeds the limit");
  img.region(h.phoff, img.mul(h.phnum, h.phentsize, "program header table size"), "program header table");
  out.reserve(h.phnum);
  for (std::uint64_t i = 0; i < h.phnum; ++i) {
    const std::uint64_t off = h.phoff + i * h.phentsize;
    Segment s;
    // ELFCLASS64 moves p_flags up front, so every later field shifts.
    s.type = img.u32(off, "p_type");
    s.offset = img.word(off + img.at(4, 8), "p_offset");
    s.vaddr = img.word(off + img.at(8, 16), "p_vaddr");
    s.filesz = img.word(off + img.at(16, 32), "p_filesz");
    out.push_back(s);
  }
  return out;
}

Region section_region(Image& img, const Section& s, const std::string& what) {
  if (s.type == SHT_NOBITS) return Region{0, 0};
  return img.region(s.offset, s.size, what);
}

Region linked_strtab(Image& img, const std::vector<Section>& sections, const Section& s, const std::string& what) {
  if (s.link == 0 || s.link >= sections.size()) {
    img.fail(what + " links to section " + std::to_string(s.link) + ", which does not exist");
  }
  const Section& strtab = sections[s.link];
  if (strtab.type != SHT_STRTAB) img.fail(what + " links to section " + std::to_string(s.link) + ", which is not a string table");
  return section_region(img, strtab, what + " string table");
}

std::uint64_t sym_size(const Image& img) { return img.at(16, 24); }
std::uint64_t dyn_size(const Image& img) { return img.at(8, 16); }

Layout layout_from_sections(Image& img, const std::vector<Section>& sections) {
  Layout l;
  const Section* dynamic = nullptr;
  const Section* dynsym = nullptr;
  const Section* versym = nullptr;
  const Section* verneed = nullptr;
  const Section* verdef = nullptr;
  // The first of each kind, as the loader and pyelftools would see it.
  for (const Section& s : sections) {
    if (s.type == SHT_DYNAMIC && !dynamic) dynamic = &s;
    if (s.type == SHT_DYNSYM && !dynsym) dynsym = &s;
    if (s.type == SHT_GNU_VERSYM && !versym) versym = &s;
    if (s.type == SHT_GNU_VERNEED && !verneed) verneed = &s;
    if (s.type == SHT_GNU_VERDEF && !verdef) verdef = &s;
  }
  if (dynamic) {
    l.dynamic = section_region(img, *dynamic, "dynamic section");
    l.dynstr = linked_strtab(img, sections, *dynamic, "dynamic section");
  }
  if (dynsym) {
    if (dynsym->entsize != sym_size(img)) {
      img.fail("dynamic symbol table entry size is " + std::to_string(dynsym->entsize) + ", expected " +
               std::to_string(sym_size(img)));
    }
    l.dynsym = section_region(img, *dynsym, "dynamic symbol table");
    l.sym_entsize = dynsym->entsize;
    l.symstr = linked_strtab(img, sections, *dynsym, "dynamic symbol table");
  }
  if (versym) l.versym = section_region(img, *versym, "symbol version table");
  if (verneed) {
    l.verneed = section_region(img, *verneed, "version needs section");
    l.verneed_count = verneed->info;
    l.verneed_str = linked_strtab(img, sections, *verneed, "version needs section");
  }
  if (verdef) {
    l.verdef = section_region(img, *verdef, "version definitions section");
    l.verdef_count = verdef->info;
    l.verdef_str = linked_strtab(img, sections, *verdef, "version definitions section");
  }
  return l;
}

// Virtual address -> file range up to the end of the PT_LOAD that holds it.
Region map_vaddr(Image& img, const std::vector<Segment>& segments, std::uint64_t vaddr, const char* what) {
  for (const Segment& s : segments) {
    if (s.type != PT_LOAD) continue;
    if (vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz) {
      const std::uint64_t delta = vaddr - s.vaddr;
      const std::uint64_t off = img.add(s.offset, delta, what);
      const Region seg = img.region(s.offset, s.filesz, "loadable segment");
      return Region{off, seg.size - delta};
    }
  }
  img.fail(std::string(what) + " address " + hex_offset(vaddr) + " is not inside any loadable segment");
}

// Symbol count from DT_GNU_HASH: the highest bucket start, then its chain to
// the terminating entry (low bit set). Without section headers this is the
// only way to size .dynsym.
std::uint64_t gnu_hash_symbol_count(Image& img, Region r) {
  const std::uint64_t nbuckets = img.get<std::uint32_t>(r.off, "GNU hash table");
  const std::uint64_t symoffset = img.get<std::uint32_t>(r.off + 4, "GNU hash table");
  const std::uint64_t bloom_size = img.get<std::uint32_t>(r.off + 8, "GNU hash table");
  const std::uint64_t bloom_bytes = img.mul(bloom_size, img.at(4, 8), "GNU hash bloom filter size");
  const std::uint64_t buckets = img.add(r.off + 16, bloom_bytes, "GNU hash buckets offset");
  img.region(buckets, img.mul(nbuckets, 4, "GNU hash bucket array size"), "GNU hash buckets");
  std::uint64_t max_index = 0;
  for (std::uint64_t i = 0; i < nbuckets; ++i) {
    max_index = std::max<std::uint64_t>(max_index, img.get<std::uint32_t>(buckets + 4 * i, "GNU hash bucket"));
  }
  if (max_index < symoffset) return symoffset;
  const std::uint64_t chains = buckets + 4 * nbuckets;
  std::uint64_t index = max_index;
  // Each step reads a distinct, increasing entry, so the walk ends at the
  // terminator or at the end of the file.
  while (true) {
    const std::uint64_t at = img.add(chains, img.mul(index - symoffset, 4, "GNU hash chain offset"), "GNU hash chain offset");
    if ((img.get<std::uint32_t>(at, "GNU hash chain") & 1u) != 0) break;
    ++index;
  }
  return index + 1;
}

Layout layout_from_segments(Image& img, const std::vector<Segment>& segments) {
  Layout l;
  const Segment* dyn = nullptr;
  for (const Segment& s : segments) {
    if (s.type == PT_DYNAMIC) {
      dyn = &s;
      break;
    }
  }
  if (!dyn) return l;  // statically linked: nothing dynamic to report
  l.dynamic = img.region(dyn->offset, dyn->filesz, "dynamic segment");
  std::map<std::int64_t, std::uint64_t> tags;
  const std::uint64_t n = l.dynamic->size / dyn_size(img);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t off = l.dynamic->off + i * dyn_size(img);
    const std::int64_t tag = img.sword(off, "dynamic entry");
    if (tag == DT_NULL) break;
    tags.emplace(tag, img.word(off + img.at(4, 8), "dynamic entry"));
  }
  auto has = [&](std::int64_t t) { return tags.count(t) != 0; };
  if (has(DT_STRTAB)) {
    const Region at = map_vaddr(img, segments, tags[DT_STRTAB], "DT_STRTAB");
    const std::uint64_t size = has(DT_STRSZ) ? tags[DT_STRSZ] : 0;
    if (size > at.size) img.fail("DT_STRSZ " + std::to_string(size) + " runs past its segment");
    l.dynstr = Region{at.off, size};
  }
  l.symstr = l.dynstr;
  l.verneed_str = l.dynstr;
  l.verdef_str = l.dynstr;
  if (has(DT_SYMTAB)) {
    const Region at = map_vaddr(img, segments, tags[DT_SYMTAB], "DT_SYMTAB");
    const std::uint64_t entsize = has(DT_SYMENT) ? tags[DT_SYMENT] : sym_size(img);
    if (entsize != sym_size(img)) img.fail("DT_SYMENT is " + std::to_string(entsize));
    std::uint64_t count = 0;
    if (has(DT_HASH)) {
      const Region h = map_vaddr(img, segments, tags[DT_HASH], "DT_HASH");
      count = img.get<std::uint32_t>(h.off + 4, "DT_HASH nchain");
    } else if (has(DT_GNU_HASH)) {
      count = gnu_hash_symbol_count(img, map_vaddr(img, segments, tags[DT_GNU_HASH], "DT_GNU_HASH"));
    }
    const std::uint64_t bytes = img.mul(count, entsize, "dynamic symbol table size");
    if (bytes > at.size) img.fail("dynamic symbol table of " + std::to_string(count) + " entries runs past its segment");
    l.dynsym = Region{at.off, bytes};
    l.sym_entsize = entsize;
  }
  if (has(DT_VERSYM)) l.versym = map_vaddr(img, segments, tags[DT_VERSYM], "DT_VERSYM");
  if (has(DT_VERNEED)) {
    l.verneed = map_vaddr(img, segments, tags[DT_VERNEED], "DT_VERNEED");
    l.verneed_count = has(DT_VERNEEDNUM) ? tags[DT_VERNEEDNUM] : 0;
  }
  if (has(DT_VERDEF)) {
    l.verdef = map_vaddr(img, segments, tags[DT_VERDEF], "DT_VERDEF");
    l.verdef_count = has(DT_VERDEFNUM) ? tags[DT_VERDEFNUM] : 0;
  }
  return l;
}

std::vector<std::string> split_path_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = s.find(':', start);
    out.push_back(s.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

void read_dynamic(Image& img, const Layout& l, ElfInfo& info) {
  if (!l.dynamic) return;
  const std::uint64_t n = l.dynamic->size / dyn_size(img);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t off = l.dynamic->off + i * dyn_size(img);
    const std::int64_t tag = img.sword(off, "dynamic entry");
    const std::uint64_t val = img.word(off + img.at(4, 8), "dynamic entry");
    switch (tag) {
      case DT_NULL:
        return;
      // The loader trusts these counts, not the section headers; a file
      // whose sections under-state them would hide version needs from us.
      case DT_VERNEEDNUM:
        if (l.verneed && val != l.verneed_count) {
          img.fail("DT_VERNEEDNUM is " + std::to_string(val) + " but the version needs section declares " +
                   std::to_string(l.verneed_count));
        }
        break;
      case DT_VERDEFNUM:
        if (l.verdef && val != l.verdef_count) {
          img.fail("DT_VERDEFNUM is " + std::to_string(val) + " but the version definitions section declares " +
                   std::to_string(l.verdef_count));
        }
        break;
      case DT_NEEDED:
        info.needed.push_back(img.str(l.dynstr, val, "DT_NEEDED"));
        break;
      case DT_SONAME:
        info.soname = img.str(l.dynstr, val, "DT_SONAME");
        break;
      case DT_RPATH:
        for (auto& p : split_path_list(img.str(l.dynstr, val, "DT_RPATH"))) info.rpath.push_back(std::move(p));
        break;
      case DT_RUNPATH:
        for (auto& p : split_path_list(img.str(l.dynstr, val, "DT_RUNPATH"))) info.runpath.push_back(std::move(p));
        break;
      case DT_FLAGS_1:
        info.flags_1 = val;
        break;
      default:
        break;
    }
  }
}

struct VersionRef {
  std::string name;
  std::string file;  // empty for definitions
};

// Walks a Verneed/Verdef-style chain: entries linked by relative "next"
// offsets. Offsets only grow (64-bit arithmetic, zero ends the chain), so a
// chain cannot cycle; the visited set still rejects revisits explicitly.
// Aux lists may legitimately be shared between entries, so the callers bound
// the total aux entries visited by what the section can hold, which stops
// overlapping lists from multiplying the work.
class ChainGuard {
 public:
  ChainGuard(Image& img, Region r, const char* what) : img_(img), r_(r), what_(what) {}
  std::uint64_t entry(std::uint64_t off, std::uint64_t size) {
    if (off < r_.off || off - r_.off > r_.size || size > r_.size - (off - r_.off)) {
      img_.fail(std::string(what_) + " entry at offset " + hex_offset(off) + " lies outside its section");
    }
    if (!seen_.insert(off).second) img_.fail(std::string(what_) + " chain loops back to offset " + hex_offset(off));
    return off;
  }

 private:
  Image& img_;
  Region r_;
  const char* what_;
  std::set<std::uint64_t> seen_;
};

// Version needs and version definitions are both a counted chain of
// entries, each starting with a 16-bit version (1) and giving the byte
// distance to the next; they differ in entry size and field names.
struct VersionChain {
  const char* entry;          // "version need"
  const char* entries;        // "version needs"
  const char* version_field;  // "vn_version"
  const char* next_field;     // "vn_next"
  std::uint64_t entry_size;
};

// Calls `read_entry(off)` for each of `count` entries in `r`, which reads
// the entry and returns its next field.
void walk_version_chain(Image& img, Region r, std::uint64_t count, const VersionChain& c,
                        const std::function<std::uint64_t(std::uint64_t)>& read_entry) {
  if (count > r.size / c.entry_size) {
    img.fail(std::string(c.entries) + " claim " + std::to_string(count) + " entries but the section holds at most " +
             std::to_string(r.size / c.entry_size));
  }
  ChainGuard guard(img, r, c.entry);
  std::uint64_t off = r.off;
  for (std::uint64_t i = 0; i < count; ++i) {
    guard.entry(off, c.entry_size);
    const auto version = img.u16(off, c.version_field);
    if (version != 1) {
      img.fail(std::string(c.entry) + " at " + hex_offset(off) + " has unsupported " + c.version_field + " " + std::to_string(version));
    }
    const std::uint64_t next = read_entry(off);
    if (next == 0 && i + 1 < count) {
      img.fail(std::string(c.entries) + " end after " + std::to_string(i + 1) + " of " + std::to_string(count) + " entries");
    }
    off = img.add(off, next, c.next_field);
  }
}

void read_verneed(Image& img, const Layout& l, ElfInfo& info, std::unordered_map<std::uint16_t, VersionRef>& index) {
  if (!l.verneed) return;
  const Region r = *l.verneed;
  constexpr std::uint64_t kEntry = 16;  // Elf32_Verneed == Elf64_Verneed; same for Vernaux
  std::uint64_t aux_budget = r.size / kEntry;
  const VersionChain chain{"version need", "version needs", "vn_version", "vn_next", kEntry};
  walk_version_chain(img, r, l.verneed_count, chain, [&](std::uint64_t off) {
    const std::uint64_t vn_cnt = img.u16(off + 2, "vn_cnt");
    const std::uint64_t vn_file = img.u32(off + 4, "vn_file");
    const std::uint64_t vn_aux = img.u32(off + 8, "vn_aux");
    if (vn_cnt > aux_budget) img.fail("version needs list more auxiliary entries than the section can hold");
    aux_budget -= vn_cnt;
    ElfVersionNeed need;
    need.file = img.str(l.verneed_str, vn_file, "version need file");
    std::uint64_t aux = img.add(off, vn_aux, "vn_aux");
    ChainGuard aux_guard(img, r, "version need auxiliary");
    for (std::uint64_t j = 0; j < vn_cnt; ++j) {
      aux_guard.entry(aux, kEntry);
      const auto vna_other = img.u16(aux + 6, "vna_other");
      const std::uint64_t vna_next = img.u32(aux + 12, "vna_next");
      std::string version = img.str(l.verneed_str, img.u32(aux + 8, "vna_name"), "version need");
      index[static_cast<std::uint16_t>(vna_other & kMaxVersionIndex)] = VersionRef{version, need.file};
      need.versions.push_back(std::move(version));
      if (vna_next == 0 && j + 1 < vn_cnt) {
        img.fail("version need for " + need.file + " ends after " + std::to_string(j + 1) + " of " +
                 std::to_string(vn_cnt) + " versions");
      }
      aux = img.add(aux, vna_next, "vna_next");
    }
    info.version_needs.push_back(std::move(need));
    return std::uint64_t{img.u32(off + 12, "vn_next")};
  });
}

void read_verdef(Image& img, const Layout& l, ElfInfo& info, std::unordered_map<std::uint16_t, VersionRef>& index) {
  if (!l.verdef) return;
  const Region r = *l.verdef;
  constexpr std::uint64_t kDef = 20, kAux = 8;
  std::uint64_t aux_budget = r.size / kAux;
  const VersionChain chain{"version definition", "version definitions", "vd_version", "vd_next", kDef};
  walk_version_chain(img, r, l.verdef_count, chain, [&](std::uint64_t off) {
    const auto vd_flags = img.u16(off + 2, "vd_flags");
    const auto vd_ndx = img.u16(off + 4, "vd_ndx");
    const std::uint64_t vd_cnt = img.u16(off + 6, "vd_cnt");
    if (vd_cnt > aux_budget) img.fail("version definitions list more names than the section can hold");
    aux_budget -= vd_cnt;
    const std::uint64_t vd_next = img.u32(off + 16, "vd_next");
    if (vd_cnt == 0) return vd_next;
    // Only the first Verdaux names the version; the rest name its parents.
    // Linkers may point several definitions at one shared Verdaux (seen in
    // the wild when a version is named like the soname), so each definition
    // guards its own walk.
    std::uint64_t aux = img.add(off, img.u32(off + 12, "vd_aux"), "vd_aux");
    ChainGuard aux_guard(img, r, "version definition auxiliary");
    for (std::uint64_t j = 0; j < vd_cnt; ++j) {
      aux_guard.entry(aux, kAux);
      if (j == 0) {
        std::string name = img.str(l.verdef_str, img.u32(aux, "vda_name"), "version definition");
        index[static_cast<std::uint16_t>(vd_ndx & kMaxVersionIndex)] = VersionRef{name, ""};
        if ((vd_flags & VER_FLG_BASE) == 0) info.version_definitions.push_back(std::move(name));
      }
      const std::uint64_t vda_next = img.u32(aux + 4, "vda_next");
      if (vda_next == 0) break;
      aux = img.add(aux, vda_next, "vda_next");
    }
    return vd_next;
  });
}

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


}  // namespace

bool has_elf_magic(std::span<const std::byte> head) {
  return head.size() >= 4 && head[0] == std::byte{0x7f} && head[1] == std::byte{'E'} && head[2] == std::byte{'L'} &&
         head[3] == std::byte{'F'};
}

bool is_elf_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  std::byte head[4];
  const ssize_t n = ::pread(fd, head, sizeof head, 0);
  ::close(fd);
  return n == 4 && has_elf_magic(head);
}

namespace {

// Section names, for readers of sections the loader never looks at
// (.nv_fatbin, .hip_fatbin). The loader ignores section headers, so a file
// whose names are unreadable still loads: it is not refused, it just names
// no section (and so shows no GPU code, which the build's arch audit then
// refuses if metadata.json declares any).
void name_sections(std::span<const std::byte> bytes, const Header& h, const std::vector<Section>& sections, ElfInfo& info) {
  if (h.shstrndx == 0 || h.shstrndx >= sections.size()) return;
  const Section& strtab = sections[h.shstrndx];
  if (strtab.type != SHT_STRTAB || strtab.offset > bytes.size() || strtab.size > bytes.size() - strtab.offset) return;
  const auto names = bytes.subspan(strtab.offset, strtab.size);
  std::vector<ElfSection> named;
  named.reserve(sections.size());
  for (const Section& s : sections) {
    if (s.name >= names.size()) return;
    const auto rest = names.subspan(s.name);
    const void* nul = std::memchr(rest.data(), 0, rest.size());
    if (nul == nullptr) return;
    const std::string name(reinterpret_cast<const char*>(rest.data()), static_cast<const std::byte*>(nul) - rest.data());
    named.push_back({name, s.type, s.offset, s.type == SHT_NOBITS ? 0 : s.size});
  }
  info.sections = std::move(named);
}

}  // namespace

const ElfSection* find_section(const ElfInfo& info, std::string_view name) {
  for (const auto& s : info.sections)
    if (s.name == name) return &s;
  return nullptr;
}

ElfInfo parse_elf(std::span<const std::byte> bytes, std::string_view name) {
  if (!has_elf_magic(bytes)) throw Error(ErrorKind::input, std::string(name) + ": not an ELF file (no \\x7fELF magic)");
  Image img(bytes, name);
  ElfInfo info;
  info.name = std::string(name);
  Header h = read_header(img, info);
  info.e_type = h.type;
  info.e_machine = h.machine;
  info.machine = machine_name(h.machine, info.elf_class, info.endian);

  const std::vector<Section> sections = read_sections(img, h);
  const std::vector<Segment> segments = read_segments(img, h);
  for (const Segment& s : segments) info.dynamic_segment |= s.type == PT_DYNAMIC;
  name_sections(bytes, h, sections, info);
  bool has_dynamic_sections = false;
  for (const Section& s : sections) has_dynamic_sections |= s.type == SHT_DYNAMIC || s.type == SHT_DYNSYM;
  // Stripped-to-the-bone objects (sstrip) have no section headers; the
  // loader only needs PT_DYNAMIC, so neither do we.
  const Layout layout = has_dynamic_sections ? layout_from_sections(img, sections) : layout_from_segments(img, segments);
  // Section headers are advisory to the loader; if they point the dynamic
  // array somewhere other than PT_DYNAMIC, what we read is not what runs.
  if (has_dynamic_sections && layout.dynamic) {
    for (const Segment& s : segments) {
      if (s.type == PT_DYNAMIC && s.offset != layout.dynamic->off) {
        img.fail("dynamic section at " + hex_offset(layout.dynamic->off) + " is not the PT_DYNAMIC segment at " + hex_offset(s.offset));
      }
    }
  }

  read_dynamic(img, layout, info);
  std::unordered_map<std::uint16_t, VersionRef> versions;
  read_verdef(img, layout, info, versions);
  read_verneed(img, layout, info, versions);
  read_symbols(img, layout, info, versions);
  return info;
}

std::optional<std::string> load_refusal(const ElfInfo& info, LoadedAs how) {
  // glibc's _dl_map_object_from_fd, in the order it checks.
  enum : std::uint16_t { ET_EXEC = 2, ET_DYN = 3 };
  enum : std::uint64_t { DF_1_NOOPEN = 0x40, DF_1_PIE = 0x08000000 };
  if (info.e_type == ET_EXEC) return "an executable (ET_EXEC), which the loader refuses: \"cannot dynamically load executable\"";
  if (info.e_type != ET_DYN) {
    std::string why = "ELF type ";
    return why.append(std::to_string(info.e_type)).append(", not a shared object (ET_DYN); the loader refuses it: \"only ET_DYN and ET_EXEC can be loaded\"");
  }
  if (!info.dynamic_segment) return "a shared object without a PT_DYNAMIC segment; the loader refuses it: \"object file has no dynamic section\"";
  if (info.flags_1 & DF_1_PIE)
    return "a position-independent executable (DF_1_PIE), which glibc 2.30 and later refuse: \"cannot dynamically load position-independent executable\"";
  if (how == LoadedAs::dlopen && (info.flags_1 & DF_1_NOOPEN))
    return "linked with -z nodlopen (DF_1_NOOPEN), so dlopen refuses it: \"shared object cannot be dlopen()ed\"";
  return std::nullopt;
}

ElfInfo read_elf(const std::filesystem::path& path) {
  const MappedFile file(path);
  return parse_elf(file.bytes(), path.string());
}

std::string_view to_string(SymbolBinding binding) {
  switch (binding) {
    case SymbolBinding::local: return "local";
    case SymbolBinding::global: return "global";
    case SymbolBinding::weak: return "weak";
    case SymbolBinding::unique: return "unique";
    case SymbolBinding::other: return "other";
  }
  return "other";
}

std::string_view to_string(SymbolType type) {
  switch (type) {
    case SymbolType::notype: return "notype";
    case SymbolType::object: return "object";
    case SymbolType::func: return "func";
    case SymbolType::section: return "section";
    case SymbolType::file: return "file";
    case SymbolType::common: return "common";
    case SymbolType::tls: return "tls";
    case SymbolType::ifunc: return "ifunc";
    case SymbolType::other: return "other";
  }
  return "other";
}

std::string machine_name(std::uint16_t e_machine, ElfClass elf_class, ElfEndian endian) {
  const bool is64 = elf_class == ElfClass::elf64;
  switch (e_machine) {
    case 3: return "i686";       // EM_386; auditwheel's name for 32-bit x86 wheels
    case 62: return "x86_64";    // EM_X86_64
    case 183: return "aarch64";  // EM_AARCH64
    case 40: return "armv7l";    // EM_ARM
    case 20: return "ppc";       // EM_PPC
    case 21: return endian == ElfEndian::little ? "ppc64le" : "ppc64";  // EM_PPC64
    case 22: return is64 ? "s390x" : "s390";                            // EM_S390
    case 243: return is64 ? "riscv64" : "riscv32";                      // EM_RISCV
    case 258: return is64 ? "loongarch64" : "loongarch32";              // EM_LOONGARCH
    case 8: return is64 ? "mips64" : "mips";                            // EM_MIPS
    case 2: return "sparc";
    case 43: return "sparc64";   // EM_SPARCV9
    case 50: return "ia64";
    case 190: return "cuda";     // EM_CUDA: a cubin, not a host object
    case 224: return "amdgpu";   // EM_AMDGPU: a GPU code object
    default: return "em_" + std::to_string(e_machine);
  }
}

}  // namespace kwheel
