#include "kwheel/evidence/elf_layout.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace kwheel::elf {
namespace {

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

}  // namespace

Layout dynamic_layout(Image& img, const std::vector<Section>& sections, const std::vector<Segment>& segments) {
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
  return layout;
}

}  // namespace kwheel::elf
