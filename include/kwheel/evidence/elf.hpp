#pragma once
// The dynamic-linking facts of an ELF file that decide a wheel's platform tag:
// machine, DT_NEEDED/SONAME/RPATH/RUNPATH, symbol-version needs and
// definitions, and the dynamic symbol table with the version each undefined
// symbol asks for. Files come from the internet, so every offset, size and
// count is checked; a malformed file is an Error(input) naming the file and
// the defect, never a crash, a hang or an unbounded allocation.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

enum class ElfClass { elf32, elf64 };
enum class ElfEndian { little, big };

enum class SymbolBinding { local, global, weak, unique, other };
enum class SymbolType { notype, object, func, section, file, common, tls, ifunc, other };

// One Verneed entry: a library and the version names needed from it.
struct ElfVersionNeed {
  std::string file;                   // "libc.so.6"
  std::vector<std::string> versions;  // {"GLIBC_2.2.5", "GLIBC_2.34"}, file order
};

struct ElfSymbol {
  std::string name;
  bool defined = false;  // st_shndx != SHN_UNDEF
  SymbolBinding binding = SymbolBinding::other;
  SymbolType type = SymbolType::other;
  // Undefined: the version needed ("GLIBC_2.34") and the library that must
  // define it ("libc.so.6"). Defined: the version it is defined under (empty
  // library). Both empty for unversioned symbols.
  std::string version;
  std::string version_file;
};

// A section by name and place in the file (size 0 for SHT_NOBITS), for the
// readers of what the loader never looks at: .nv_fatbin, .hip_fatbin.
struct ElfSection {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t offset = 0, size = 0;  // as the header says: a reader checks them against the file
};

struct ElfInfo {
  std::string name;  // the path or buffer name given, used in every message
  ElfClass elf_class = ElfClass::elf64;
  ElfEndian endian = ElfEndian::little;
  std::uint16_t e_type = 0;     // ET_DYN (3) for shared objects
  bool dynamic_segment = false; // a PT_DYNAMIC program header: what the loader reads the dynamic array from
  std::uint64_t flags_1 = 0;    // DT_FLAGS_1 (DF_1_PIE 0x08000000, DF_1_NOOPEN 0x40), 0 when absent
  std::uint16_t e_machine = 0;  // raw EM_* value
  // Wheel-platform spelling where one exists ("x86_64", "aarch64", "i686",
  // "ppc64le", "s390x", "armv7l", "riscv64", "loongarch64"), else "em_<n>".
  std::string machine;
  std::vector<std::string> needed;  // DT_NEEDED, in order
  std::optional<std::string> soname;
  std::vector<std::string> rpath;    // DT_RPATH split on ':'
  std::vector<std::string> runpath;  // DT_RUNPATH split on ':'
  std::vector<ElfVersionNeed> version_needs;
  std::vector<std::string> version_definitions;  // SHT_GNU_verdef names, base (the soname) excluded
  std::vector<ElfSymbol> dynamic_symbols;        // index 0 (the null symbol) excluded
  std::vector<ElfSection> sections;              // file order; empty if the file names none
};

// The first section called `name`, or nullptr.
const ElfSection* find_section(const ElfInfo& info, std::string_view name);

// Maps the file read-only (never reads it whole into memory) and parses it.
// Throws Error(input) for a non-ELF or malformed file, Error(io) when the
// file cannot be opened.
ElfInfo read_elf(const std::filesystem::path& path);

// Parses an in-memory image; `name` is used in error messages. The fuzzing
// entry point: whatever the bytes, it returns or throws kwheel::Error.
ElfInfo parse_elf(std::span<const std::byte> bytes, std::string_view name);

// True if the bytes start with the ELF magic; cheap pre-filter for scanning
// a tree, like auditwheel's elf_file_filter.
bool has_elf_magic(std::span<const std::byte> head);
bool is_elf_file(const std::filesystem::path& path);

// How a file in a wheel reaches the loader: dlopen()ed by Python's import
// (any name ending ".so" is importable) or only as another object's DT_NEEDED
// ("libfoo.so.1").
enum class LoadedAs { dlopen, needed };

// Why glibc's loader refuses to load the file that way, in its own words
// ("cannot dynamically load executable"), with what the file is; nullopt
// when it loads. Only a shared object loads: ET_DYN with PT_DYNAMIC and
// without DF_1_PIE (glibc >= 2.30 refuses a PIE); a dlopen also refuses
// DF_1_NOOPEN (-z nodlopen).
std::optional<std::string> load_refusal(const ElfInfo& info, LoadedAs how);

std::string_view to_string(SymbolBinding binding);
std::string_view to_string(SymbolType type);
// The wheel-platform machine name for an e_machine value (class and byte
// order disambiguate ppc64/ppc64le and 32/64-bit variants).
std::string machine_name(std::uint16_t e_machine, ElfClass elf_class, ElfEndian endian);

}  // namespace kwheel
