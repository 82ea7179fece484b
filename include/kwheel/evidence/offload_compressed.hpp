#pragma once
// The compressed clang offload bundle ("CCOB", clang 18+'s
// clang-offload-bundler -compress), inside the reader (namespace
// kwheel::offload): "CCOB", u16 version, u16 method (0 zlib, 1 zstd), then
//   v1: u32 uncompressed size, u64 hash;
//   v2: u32 total size (header included), u32 uncompressed size, u64 hash;
//   v3: u64 total size, u64 uncompressed size, u64 hash;
// then the compressed form of one uncompressed bundle
// (offload_entry_table.hpp), all little-endian. The payload is decoded
// (offload_decompress.hpp) with its decoder's memory reserved from the
// run's offload_decode_budget() and read as it streams: never held whole.
#include <cstddef>
#include <span>

#include "kwheel/evidence/offload_reading.hpp"

namespace kwheel::offload {

// `bytes` runs from the magic to the end of the section; the bundle's
// extent is the total size its header declares (version 1: where its
// stream ends).
Parsed parse_compressed(std::span<const std::byte> bytes, const Where& where, Budget& budget);

}  // namespace kwheel::offload
