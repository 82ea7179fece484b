#pragma once
// The CUDA code a shared object carries: the entries of its .nv_fatbin
// section, each SASS or PTX for one architecture, stored plain or
// compressed.
//
// Where the format comes from. NVIDIA's public header fatbinary_section.h
// names the section (.nv_fatbin) and the wrapper that points at it; the
// cuobjdump manual names the entry kinds and architectures. The byte layout
// of a container and its entries is not in a public NVIDIA header: it is as
// public readers describe it (rCUDA/cricket's fatbin-decompress, Apache-2.0)
// and as nvcc 13.0 writes it, which tests/unit/evidence/fatbin_test.cpp checks on
// fatbins nvcc builds in the test. Only header fields are read; payloads
// are never decompressed or executed.
//
//   container: u32 magic 0xBA55ED50, u16 version 1, u16 header size (16),
//              u64 size of the entries that follow
//   entry:     u16 kind (1 PTX, 2 ELF/SASS), u16 ?, u32 header size (64, 80,
//              96 or 112), u64 payload size, u32 compressed size, u32 ?,
//              u16 minor/major of the code format, u32 arch (90, 103, 121),
//              u32 name offset, u32 name size, u64 flags, u64 ?,
//              u64 uncompressed size; the payload follows the header.
//   flags:     0x2000 LZ4-compressed, 0x8000 zstd-compressed, 0x100000 the
//              `a` arch, 0x200000 the `f` arch.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/evidence/cuda_arch.hpp"
#include "kwheel/evidence/cuda_release.hpp"

namespace kwheel {

inline constexpr std::string_view kFatbinSection = ".nv_fatbin";

struct FatbinEntry {
  std::uint16_t kind = 0;            // 1 PTX, 2 SASS; others (LTO IR, ...) are kept but run nowhere
  std::optional<CudaTarget> target;  // for PTX and SASS
  bool compressed = false;
  std::uint64_t size = 0;            // stored payload bytes
  // The header's code format version: the ELF ABI of SASS ([1, 8]), the
  // PTX ISA of PTX ([9, 0] from CUDA 13.0).
  unsigned code_major = 0, code_minor = 0;
  // The release an uncompressed payload says compiled it (cuda_release.hpp).
  std::optional<CudaRelease> toolkit;
  std::string str() const;           // "sm_90a", "compute_80", "kind_4"
};

// Every entry of every container in `section` (a .nv_fatbin's bytes), in
// order. Throws Error(input) naming `name` for a malformed section.
std::vector<FatbinEntry> parse_fatbin(std::span<const std::byte> section, std::string_view name);

// The runnable targets among `entries`.
std::vector<CudaTarget> cuda_targets(const std::vector<FatbinEntry>& entries);

// `entries` for a one-line message or a text report: each name once, in
// the order first met, counted when repeated ("sm_90a ×546, sm_80 ×2,
// compute_90"), at most `max_names` names and then "and N more". A
// linker that joins one container per translation unit repeats each
// target hundreds of times (sgl-kernel: 546 sm_90a entries in one .so).
// `compression` marks names whose entries are compressed.
std::string describe_entries(const std::vector<FatbinEntry>& entries, bool compression = false, std::size_t max_names = 12);

}  // namespace kwheel
