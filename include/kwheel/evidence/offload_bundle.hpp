#pragma once
// The GPU code objects a ROCm/HIP library carries: clang offload bundles, as
// clang-offload-bundler writes them and a HIP link concatenates them into a
// host library's .hip_fatbin section. The gfx processors they name are what
// a ROCm kernel variant runs on. Bundles come from the internet inside
// kernels and wheels, so every offset, size and count is checked; malformed
// bytes are an Error(input) naming the file and the defect, never a crash, a
// hang or an unbounded allocation.
//
// Format (https://clang.llvm.org/docs/ClangOffloadBundler.html, and
// clang/lib/Driver/OffloadBundler.cpp in llvm-project, whose writer and
// readers are the reference where the page is silent):
//   uncompressed: "__CLANG_OFFLOAD_BUNDLE__", u64 entry count, then per entry
//     u64 offset (from the bundle's first byte), u64 size, u64 id length, id;
//     all little-endian.
//   compressed ("CCOB"): u16 version, u16 method (0 zlib, 1 zstd), then
//     v1: u32 uncompressed size, u64 hash;
//     v2: u32 total size (header included), u32 uncompressed size, u64 hash;
//     v3: u64 total size, u64 uncompressed size, u64 hash;
//     then the compressed form of one uncompressed bundle.
// A section holds one or more bundles, one per linked object, each padded
// with zeros to its object's .hip_fatbin alignment (clang's HIP codegen:
// HIPCodeObjectAlign, 4096).
//
// The reader's parts (namespace kwheel::offload): offload_reading.hpp what
// they share, offload_entry_table.hpp the uncompressed bundle,
// offload_compressed.hpp the CCOB container, offload_decompress.hpp its
// zlib and zstd decoders; offload_target.hpp the entry ids' grammar.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/evidence/offload_target.hpp"

namespace kwheel {

class ByteBudget;

// The memory every thread of a run decoding compressed bundles may hold
// together (issue 38, defect 4): a zstd decoder with the largest window
// kwheel decodes (2^27) and its buffers, plus a few MiB for smaller frames
// and zlib streams beside it. Each decode reserves what its frame header
// says it needs before it starts, and waits its turn when others hold the
// rest; the payload itself is never held (only its entry table is kept), so
// a bundle that inflates to 1 GiB costs its decoder's window, not 1 GiB.
inline constexpr std::uint64_t kOffloadDecodeBudgetBytes = (std::uint64_t{1} << 27) + (std::uint64_t{4} << 20);

// The one budget of kOffloadDecodeBudgetBytes every parse in this process
// reserves from (tests and benchmarks read its peak).
ByteBudget& offload_decode_budget();

struct OffloadBundle {
  bool compressed = false;  // read from a "CCOB" container
  std::vector<OffloadTarget> targets;  // entry order
};

// True if the bytes start with either bundle magic ("__CLANG_OFFLOAD_BUNDLE__"
// or "CCOB"); a cheap pre-filter, not a validation.
bool has_offload_bundle_magic(std::span<const std::byte> head);

// Every bundle in a section's bytes (e.g. .hip_fatbin), in order; none for
// an empty or all-zero section. `name` names the file in errors. Compressed
// bundles are decompressed (zlib or zstd; up to 1 GiB each, 1 GiB plus 64
// times the section's size in all, and exactly the size their header
// declares), streamed through a fixed chunk; the decoder's memory is
// reserved from offload_decode_budget(). The fuzzing entry point: whatever the bytes, it returns or
// throws kwheel::Error.
std::vector<OffloadBundle> parse_offload_bundles(std::span<const std::byte> section, std::string_view name);

// Sorted, unique processors ("gfx90a", "gfx942") over all bundles' non-host
// entries.
std::vector<std::string> gfx_targets(const std::vector<OffloadBundle>& bundles);

}  // namespace kwheel
