#include "kwheel/evidence/elf.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <unordered_map>

#include "kwheel/base/error.hpp"
#include "kwheel/base/mapped_file.hpp"
#include "kwheel/evidence/elf_dynamic.hpp"
#include "kwheel/evidence/elf_image.hpp"
#include "kwheel/evidence/elf_layout.hpp"
#include "kwheel/evidence/elf_symbols.hpp"
#include "kwheel/evidence/elf_versions.hpp"

// The reader's parts, in the order parse_elf uses them: the image, header
// and tables (elf_image), where the dynamic tables are (elf_layout), the
// dynamic array (elf_dynamic), symbol versions (elf_versions) and dynamic
// symbols (elf_symbols). This file is what elf.hpp promises.
namespace kwheel {

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
void name_sections(std::span<const std::byte> bytes, const elf::Header& h, const std::vector<elf::Section>& sections, ElfInfo& info) {
  if (h.shstrndx == 0 || h.shstrndx >= sections.size()) return;
  const elf::Section& strtab = sections[h.shstrndx];
  if (strtab.type != elf::SHT_STRTAB || strtab.offset > bytes.size() || strtab.size > bytes.size() - strtab.offset) return;
  const auto names = bytes.subspan(strtab.offset, strtab.size);
  std::vector<ElfSection> named;
  named.reserve(sections.size());
  for (const elf::Section& s : sections) {
    if (s.name >= names.size()) return;
    const auto rest = names.subspan(s.name);
    const void* nul = std::memchr(rest.data(), 0, rest.size());
    if (nul == nullptr) return;
    const std::string name(reinterpret_cast<const char*>(rest.data()), static_cast<const std::byte*>(nul) - rest.data());
    named.push_back({name, s.type, s.offset, s.type == elf::SHT_NOBITS ? 0 : s.size});
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
  elf::Image img(bytes, name);
  ElfInfo info;
  info.name = std::string(name);
  elf::Header h = elf::read_header(img, info);
  info.e_type = h.type;
  info.e_machine = h.machine;
  info.machine = machine_name(h.machine, info.elf_class, info.endian);

  const std::vector<elf::Section> sections = elf::read_sections(img, h);
  const std::vector<elf::Segment> segments = elf::read_segments(img, h);
  for (const elf::Segment& s : segments) info.dynamic_segment |= s.type == elf::PT_DYNAMIC;
  name_sections(bytes, h, sections, info);
  const elf::Layout layout = elf::dynamic_layout(img, sections, segments);

  elf::read_dynamic(img, layout, info);
  std::unordered_map<std::uint16_t, elf::VersionRef> versions;
  elf::read_verdef(img, layout, info, versions);
  elf::read_verneed(img, layout, info, versions);
  elf::read_symbols(img, layout, info, versions);
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
