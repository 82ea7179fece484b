#include "kwheel/wheel/deflate.hpp"

#include <libdeflate.h>
#include <zlib.h>

#include <array>
#include <stdexcept>

namespace kwheel {

struct ChunkDeflater::Impl {
  struct CompressorFree {
    void operator()(libdeflate_compressor* c) const noexcept { libdeflate_free_compressor(c); }
  };
  std::unique_ptr<libdeflate_compressor, CompressorFree> compressor;
  // zlib's inflate is the one decoder that reports block boundaries at bit
  // precision (Z_BLOCK); it is how gzappend finds a stream's last block.
  z_stream inflater{};
  bool inflater_ready = false;
  std::array<unsigned char, 64 * 1024> sink{};

  ~Impl() {
    if (inflater_ready) inflateEnd(&inflater);
  }
};

ChunkDeflater::ChunkDeflater(int level) : level_(level), impl_(std::make_unique<Impl>()) {
  if (level < 1 || level > 12) throw std::invalid_argument("deflate level " + std::to_string(level) + " is not 1..12");
  impl_->compressor.reset(libdeflate_alloc_compressor(level));
  if (!impl_->compressor) throw std::bad_alloc();
  if (inflateInit2(&impl_->inflater, -MAX_WBITS) != Z_OK) throw std::bad_alloc();
  impl_->inflater_ready = true;
}

ChunkDeflater::~ChunkDeflater() = default;

std::string ChunkDeflater::engine(int level) {
  return std::string("libdeflate ") + LIBDEFLATE_VERSION_STRING + " level " + std::to_string(level) + " chunk " +
         std::to_string(kDeflateChunk);
}

void ChunkDeflater::compress(std::span<const std::byte> chunk, bool last, std::vector<unsigned char>& out) {
  out.resize(bound(chunk.size()));
  out.resize(compress(chunk, last, std::span<unsigned char>(out)));
}

size_t ChunkDeflater::bound(size_t chunk_size) const {
  // +5 for the stored block that byte-aligns a non-final chunk.
  return libdeflate_deflate_compress_bound(impl_->compressor.get(), chunk_size) + 5;
}

size_t ChunkDeflater::compress(std::span<const std::byte> chunk, bool last, std::span<unsigned char> out) {
  // libdeflate is given exactly bound() bytes of room, as it always was,
  // whatever the buffer: the same room, the same code path, the same bytes.
  const size_t room = bound(chunk.size());
  if (out.size() < room) throw std::logic_error("ChunkDeflater: output buffer under bound()");
  auto* c = impl_->compressor.get();
  size_t n = libdeflate_deflate_compress(c, chunk.data(), chunk.size(), out.data(), room);
  if (n == 0) throw std::logic_error("libdeflate: output exceeds its own bound");
  if (last) return n;

  // Walk the blocks: inflate(Z_BLOCK) stops after each end-of-block code.
  // The bit after a block's end is where the next block's header starts;
  // the final block is the one during which data_type has bit 64 set.
  z_stream& z = impl_->inflater;
  if (inflateReset(&z) != Z_OK) throw std::logic_error("inflateReset failed");
  z.next_in = out.data();
  z.avail_in = static_cast<uInt>(n);
  size_t header_bit = 0;  // first block's header: bit 0 of byte 0
  size_t end_bit = 0;
  for (;;) {
    z.next_out = impl_->sink.data();
    z.avail_out = static_cast<uInt>(impl_->sink.size());
    const int ret = inflate(&z, Z_BLOCK);
    if (ret != Z_OK && ret != Z_STREAM_END)
      throw std::logic_error(std::string("libdeflate output does not inflate: ") + (z.msg ? z.msg : "?"));
    if (!(z.data_type & 128)) continue;  // the sink filled up mid-block
    const size_t consumed = n - z.avail_in;
    const size_t bit = consumed * 8 - static_cast<size_t>(z.data_type & 7);
    if (z.data_type & 64) {
      end_bit = bit;
      break;
    }
    header_bit = bit;
    if (ret == Z_STREAM_END || z.avail_in == 0) throw std::logic_error("deflate stream ended without a final block");
  }
  if ((end_bit + 7) / 8 != n) throw std::logic_error("libdeflate wrote bytes after the final block");

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
