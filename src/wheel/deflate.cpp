#include "kwheel/wheel/deflate.hpp"

#include <libdeflate.h>

#include <stdexcept>

namespace kwheel {

void ChunkDeflater::CompressorFree::operator()(libdeflate_compressor* c) const noexcept { libdeflate_free_compressor(c); }

ChunkDeflater::ChunkDeflater(int level) : level_(level) {
  if (level < 1 || level > 12) throw std::invalid_argument("deflate level " + std::to_string(level) + " is not 1..12");
  compressor_.reset(libdeflate_alloc_compressor(level));
  if (!compressor_) throw std::bad_alloc();
}

ChunkDeflater::~ChunkDeflater() = default;

std::string ChunkDeflater::engine(int level) {
  // Appended piece by piece: GCC 12 at -O2 warns falsely (-Warray-bounds)
  // on the chain of operator+ temporaries this used to be.
  std::string s = "libdeflate ";
  s += LIBDEFLATE_VERSION_STRING;
  s += " level " + std::to_string(level);
  s += " chunk " + std::to_string(kDeflateChunk);
  return s;
}

void ChunkDeflater::compress(std::span<const std::byte> chunk, bool last, std::vector<unsigned char>& out) {
  out.resize(bound(chunk.size()));
  out.resize(compress(chunk, last, std::span<unsigned char>(out)));
}

size_t ChunkDeflater::bound(size_t chunk_size) const {
  // +5 for the stored block that byte-aligns a non-final chunk.
  return libdeflate_deflate_compress_bound(compressor_.get(), chunk_size) + 5;
}

size_t ChunkDeflater::compress(std::span<const std::byte> chunk, bool last, std::span<unsigned char> out) {
  // libdeflate is given exactly bound() bytes of room, as it always was,
  // whatever the buffer: the same room, the same code path, the same bytes.
  const size_t room = bound(chunk.size());
  if (out.size() < room) throw std::logic_error("ChunkDeflater: output buffer under bound()");
  auto* c = compressor_.get();
  size_t n = libdeflate_deflate_compress(c, chunk.data(), chunk.size(), out.data(), room);
  if (n == 0) throw std::logic_error("libdeflate: output exceeds its own bound");
  if (last) return n;

  // libdeflate noted where it wrote the final block (third_party/libdeflate:
  // kwheel's one addition), so the piece need not be decoded to find it.
  size_t header_bit = 0, end_bit = 0;
  kwheel_libdeflate_final_block(c, &header_bit, &end_bit);
  if (header_bit >= end_bit || (end_bit + 7) / 8 != n)
    throw std::logic_error("libdeflate's final block does not end its output");

  out[header_bit / 8] &= static_cast<unsigned char>(~(1u << (header_bit % 8)));
  // Clear the padding after the end-of-block code (our stored block's header
  // is three zero bits there: BFINAL=0, BTYPE=00), then pad and LEN/NLEN.
  if (end_bit % 8) out[n - 1] &= static_cast<unsigned char>((1u << (end_bit % 8)) - 1);
  if (end_bit % 8 == 0 || end_bit % 8 > 5) out[n++] = 0;  // fewer than 3 free bits in the last byte
  for (unsigned char b : {0x00, 0x00, 0xff, 0xff}) out[n++] = b;
  return n;
}

uint32_t crc32_update(uint32_t crc, std::span<const std::byte> data) {
  return libdeflate_crc32(crc, data.data(), data.size());
}

}  // namespace kwheel
