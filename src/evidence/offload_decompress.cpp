#include "kwheel/evidence/offload_decompress.hpp"

#include <zlib.h>
// ZSTD_createDCtx_advanced and the DStream size estimates: the decoder's
// memory is reserved before it runs and held to that reservation.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

namespace kwheel::offload {
namespace {

// The one buffer decompressed bytes pass through. Left uninitialised: only
// what the decoder writes becomes resident.
class OutputChunk {
 public:
  OutputChunk() : bytes_(std::make_unique_for_overwrite<std::byte[]>(kOutputChunkBytes)) {}
  std::byte* data() { return bytes_.get(); }
  // Room for the next write: the chunk, or less where the stream would
  // pass its limit and one byte (so an overlong stream is seen as one).
  static std::size_t room(std::uint64_t produced, std::uint64_t limit) {
    return static_cast<std::size_t>(std::min<std::uint64_t>(kOutputChunkBytes, limit + 1 - produced));
  }

 private:
  std::unique_ptr<std::byte[]> bytes_;
};

class Inflater {
 public:
  Inflater() {
    if (inflateInit(&z) != Z_OK) throw std::bad_alloc();
  }
  ~Inflater() { inflateEnd(&z); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  z_stream z{};
};

}  // namespace

Decompressed inflate_zlib(std::span<const std::byte> in, std::uint64_t limit, const Sink& sink) {
  Decompressed r;
  Inflater inflater;
  z_stream& z = inflater.z;
  OutputChunk chunk;
  std::size_t chunk_room = 0;  // what the chunk offered the last inflate
  const auto flush = [&] {
    const std::size_t filled = chunk_room - z.avail_out;
    if (filled > 0) sink(std::span<const std::byte>(chunk.data(), filled));
    r.produced += filled;
    chunk_room = z.avail_out = 0;
  };
  std::uint64_t fed = 0;
  for (;;) {
    if (z.avail_in == 0 && fed < in.size()) {
      const auto n = std::min<std::uint64_t>(in.size() - fed, std::numeric_limits<uInt>::max());
      z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + fed));
      z.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    if (z.avail_out == 0) {
      flush();
      if (r.produced > limit) {
        r.end = StreamEnd::overlong;
        break;
      }
      chunk_room = OutputChunk::room(r.produced, limit);
      z.next_out = reinterpret_cast<Bytef*>(chunk.data());
      z.avail_out = static_cast<uInt>(chunk_room);
    }
    const int ret = inflate(&z, Z_NO_FLUSH);
    if (ret == Z_STREAM_END) {
      r.end = StreamEnd::complete;
      break;
    }
    if (ret == Z_OK) continue;
    if (ret == Z_MEM_ERROR) throw std::bad_alloc();
    if (ret == Z_BUF_ERROR) {
      // No progress: room to grow, or input to feed, or the stream is cut off.
      if (z.avail_out == 0 || fed < in.size()) continue;
      r.end = StreamEnd::truncated;
      break;
    }
    r.message = z.msg != nullptr ? z.msg : "error " + std::to_string(ret);
    break;
  }
  flush();
  r.consumed = fed - z.avail_in;
  return r;
}

namespace {

// zstd allocates through this: what it holds at once is counted, and an
// allocation past the reservation fails (zstd then reports a memory error),
// so the reservation bounds the decoder whatever a frame declares.
class CountedHeap {
 public:
  explicit CountedHeap(std::uint64_t limit) : limit_(limit) {}
  ZSTD_customMem mem() { return {&CountedHeap::alloc, &CountedHeap::release, this}; }
  bool refused() const { return refused_; }

 private:
  static constexpr std::size_t kHeader = alignof(std::max_align_t);  // holds the size; keeps alignment

  static void* alloc(void* self, std::size_t n) {
    auto* h = static_cast<CountedHeap*>(self);
    if (n > h->limit_ - h->held_) {
      h->refused_ = true;
      return nullptr;
    }
    auto* base = static_cast<std::byte*>(std::malloc(n + kHeader));
    if (base == nullptr) return nullptr;
    std::memcpy(base, &n, sizeof n);
    h->held_ += n;
    return base + kHeader;
  }

  static void release(void* self, void* p) {
    if (p == nullptr) return;
    auto* base = static_cast<std::byte*>(p) - kHeader;
    std::size_t n = 0;
    std::memcpy(&n, base, sizeof n);
    static_cast<CountedHeap*>(self)->held_ -= n;
    std::free(base);
  }

  const std::uint64_t limit_;
  std::uint64_t held_ = 0;
  bool refused_ = false;
};

struct FreeDctx {
  void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};

}  // namespace

std::uint64_t zstd_decoder_bytes(std::span<const std::byte> frame) {
  const std::size_t most = ZSTD_estimateDStreamSize(std::size_t{1} << kZstdWindowLogMax);
  const std::size_t estimate = ZSTD_estimateDStreamSize_fromFrame(frame.data(), frame.size());
  if (ZSTD_isError(estimate)) return ZSTD_estimateDStreamSize(0);
  return std::min(estimate, most);
}

// zstd's decoding buffer is the smaller of the frame's window and its
// declared content size; the window is capped at 2^27 (kZstdWindowLogMax),
// so a frame that records no content size still costs at most that much.
Decompressed decompress_zstd(std::span<const std::byte> in, std::uint64_t limit, std::uint64_t heap_limit,
                             const Sink& sink) {
  CountedHeap heap(heap_limit);
  const std::unique_ptr<ZSTD_DCtx, FreeDctx> dctx(ZSTD_createDCtx_advanced(heap.mem()));
  if (!dctx) throw std::bad_alloc();
  if (ZSTD_isError(ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, kZstdWindowLogMax))) throw std::bad_alloc();
  Decompressed r;
  OutputChunk chunk;
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  ZSTD_outBuffer dst{chunk.data(), 0, 0};
  const auto flush = [&] {
    if (dst.pos > 0) sink(std::span<const std::byte>(chunk.data(), dst.pos));
    r.produced += dst.pos;
    dst.pos = dst.size = 0;
  };
  for (;;) {
    if (dst.pos == dst.size) {
      flush();
      if (r.produced > limit) {
        r.end = StreamEnd::overlong;
        break;
      }
      dst.size = OutputChunk::room(r.produced, limit);
    }
    const std::size_t src_before = src.pos, dst_before = dst.pos;
    const std::size_t ret = ZSTD_decompressStream(dctx.get(), &dst, &src);
    if (ZSTD_isError(ret)) {
      r.end = heap.refused() ? StreamEnd::over_reservation : StreamEnd::corrupt;
      r.message = ZSTD_getErrorName(ret);
      break;
    }
    if (ret == 0) {  // the frame is decoded and flushed
      r.end = StreamEnd::complete;
      break;
    }
    if (dst.pos == dst.size) continue;
    // Room left and nothing more read or written: the frame needs bytes
    // that are not there.
    if (src.pos == src.size || (src.pos == src_before && dst.pos == dst_before)) {
      r.end = StreamEnd::truncated;
      break;
    }
  }
  flush();
  r.consumed = src.pos;
  return r;
}

std::optional<std::uint64_t> zstd_content_size(std::span<const std::byte> frame) {
  const unsigned long long n = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN) return std::nullopt;
  return n;
}

}  // namespace kwheel::offload
