#pragma once
// The facts of a Windows PE image that decide a wheel's platform tag: the
// machine it runs on and whether it is a DLL. Files come from the internet,
// so every offset is checked; a malformed file is an Error(input) naming the
// file and the defect, never a crash or a read past the end.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kwheel {

struct PeInfo {
  std::string name;  // the path or buffer name given, used in every message
  std::uint16_t machine = 0;  // raw COFF IMAGE_FILE_MACHINE_* value
  // The wheel tag's spelling after "win_": "amd64", "arm64", and "win32"
  // for i386 (whose tag is plain win32); "machine_0x<hex>" for any other
  // machine (ARM64EC, ARMNT, ...), which has no wheel tag.
  std::string arch;
  bool dll = false;        // IMAGE_FILE_DLL in the COFF characteristics
  bool pe32_plus = false;  // optional header magic 0x20b (64-bit images)
};

// Why LoadLibrary cannot load the image as a library (an .exe: no
// IMAGE_FILE_DLL, so no DllMain, relocations or exports for Python's
// import), or nullopt for a DLL.
std::optional<std::string> load_refusal(const PeInfo& info);

// True if the bytes start with "MZ" and hold a plausible e_lfanew (below
// the Windows loader's 256 MiB limit); when `head` reaches that offset, the
// "PE\0\0" signature must be there too.
bool has_pe_magic(std::span<const std::byte> head);
bool is_pe_file(const std::filesystem::path& path);

// Parses an in-memory image; `name` is used in error messages. The fuzzing
// entry point: whatever the bytes, it returns or throws kwheel::Error.
PeInfo parse_pe(std::span<const std::byte> bytes, std::string_view name);

// Maps the file read-only and parses it. Throws Error(input) for a non-PE or
// malformed file, Error(io) when it cannot be opened.
PeInfo read_pe(const std::filesystem::path& path);

}  // namespace kwheel
