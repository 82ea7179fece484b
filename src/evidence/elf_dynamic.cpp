#include "kwheel/evidence/elf_dynamic.hpp"

#include <string>
#include <utility>
#include <vector>

namespace kwheel::elf {
namespace {

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

}  // namespace

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

}  // namespace kwheel::elf
