#include "kwheel/evidence/elf_versions.hpp"

#include <functional>
#include <set>
#include <utility>

namespace kwheel::elf {
namespace {

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

}  // namespace

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

}  // namespace kwheel::elf
