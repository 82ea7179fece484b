#include "kwheel/evidence/elf_image.hpp"

#include "kwheel/base/error.hpp"

namespace kwheel::elf {

void fail(std::string_view name, const std::string& what) {
  throw Error(ErrorKind::input, std::string(name) + ": malformed ELF: " + what);
}

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

namespace {

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

}  // namespace

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

}  // namespace kwheel::elf
