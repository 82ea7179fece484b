#pragma once
// Raw DEFLATE (RFC 1951) of a byte stream cut into fixed-size chunks. Each
// chunk is compressed on its own by libdeflate, which is 2-3x faster than
// zlib at the same or a smaller size, and the pieces are joined into one
// stream, so a zip member of any size is deflated in bounded memory.
//
// libdeflate only writes complete streams. Every chunk but the last one
// gets its final-block bit cleared, and is then ended with an empty stored
// block to reach a byte boundary, as zlib's Z_SYNC_FLUSH does. The output
// depends only on the input bytes, the chunk size, the level and the
// libdeflate version; engine() names them for build fingerprints.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

struct libdeflate_compressor;

namespace kwheel {

// 1 MiB: ratio within 0.2 % of 4 MiB chunks on machine code, and memory per
// writer stays ~3 MiB (docs/performance.md).
inline constexpr size_t kDeflateChunk = size_t{1} << 20;

class ChunkDeflater {
 public:
  explicit ChunkDeflater(int level);  // 1 (fastest) .. 12 (smallest)
  ~ChunkDeflater();
  ChunkDeflater(const ChunkDeflater&) = delete;
  ChunkDeflater& operator=(const ChunkDeflater&) = delete;

  // Replaces `out` with the compressed form of `chunk`; `last` ends the
  // stream. Chunks may be of any size; an empty last chunk is valid.
  void compress(std::span<const std::byte> chunk, bool last, std::vector<unsigned char>& out);
  // The same into `out`, at least bound(chunk.size()) bytes, of which only
  // the returned count is written: a buffer left uninitialised stays out of
  // the resident set beyond that.
  size_t compress(std::span<const std::byte> chunk, bool last, std::span<unsigned char> out);
  size_t bound(size_t chunk_size) const;

  int level() const { return level_; }
  // What decides the bytes at `level`: "libdeflate 1.14 level 6 chunk 1048576".
  static std::string engine(int level);

 private:
  struct CompressorFree {
    void operator()(libdeflate_compressor* c) const noexcept;
  };
  int level_;
  std::unique_ptr<libdeflate_compressor, CompressorFree> compressor_;
};

// CRC-32 (ISO 3309, the zip one), continued from `crc`; libdeflate's
// carry-less-multiply implementation.
uint32_t crc32_update(uint32_t crc, std::span<const std::byte> data);

}  // namespace kwheel
