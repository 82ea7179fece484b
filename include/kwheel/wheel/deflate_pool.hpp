#pragma once
// The 1 MiB chunks of ChunkDeflater (kwheel/wheel/deflate.hpp) compressed
// in parallel, in the manner of pigz, by one pool for the whole run: every
// member of every wheel (and every kernel of a --lock build) feeds the same
// workers, so a run uses all of them whether it writes one huge wheel or
// many small ones. Chunks are compressed independently already, so the
// joined stream is byte for byte the serial one; a DeflateStream only puts
// the pieces back in order.
//
// Memory is fixed: the pool's slot budget bounds the chunks in flight over
// all streams, and their buffers are recycled. The budget is one chunk per
// worker plus a quarter as many (at least two) filled ahead: at 16 workers
// that is 20 chunks, about 29 MB, inside the 64 MB a run may take
// (docs/performance.md).
#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "kwheel/base/work_pool.hpp"
#include "kwheel/wheel/deflate.hpp"

namespace kwheel {

// One chunk's buffers: the raw bytes in, the compressed piece out. The
// piece's buffer is left uninitialised, so only the bytes libdeflate writes
// (about a third of a chunk for machine code) become resident.
struct DeflateChunk {
  std::unique_ptr<std::byte[]> raw;      // kDeflateChunk bytes; `size` of them are the chunk
  size_t size = 0;
  bool last = false;                     // ends the stream
  std::unique_ptr<unsigned char[]> packed;
  size_t packed_room = 0, packed_size = 0;
  std::span<const unsigned char> piece() const { return {packed.get(), packed_size}; }
};

class DeflatePool {
 public:
  explicit DeflatePool(unsigned workers);  // 0: one per CPU
  DeflatePool(const DeflatePool&) = delete;
  DeflatePool& operator=(const DeflatePool&) = delete;
  ~DeflatePool();

  WorkPool& work() { return work_; }
  unsigned workers() const { return work_.workers(); }

  // A chunk's buffers, recycled: at most one per slot plus one per stream
  // (the piece it is handing to libzip) ever exist.
  std::unique_ptr<DeflateChunk> buffer();
  void recycle(std::unique_ptr<DeflateChunk> chunk);

  // Compresses chunk->raw into chunk->packed at `level` on worker `worker`
  // (its own deflater for that level, made on first use).
  void compress(unsigned worker, int level, DeflateChunk& chunk);

 private:
  // Per worker, per level 1..12: only that worker's thread touches them.
  std::vector<std::array<std::unique_ptr<ChunkDeflater>, 13>> deflaters_;
  std::mutex free_mutex_;
  std::vector<std::unique_ptr<DeflateChunk>> free_;
  WorkPool work_;  // last: its workers stop before the deflaters go
};

// The pool one run's writers share: the caller's when it gave one (a
// pipeline's, for all its kernels), else one of `workers` owned here for
// as long as this lives; none at level 0, where members are stored.
class RunPool {
 public:
  RunPool(DeflatePool* given, int level, unsigned workers);
  DeflatePool* get() const { return pool_; }

 private:
  std::unique_ptr<DeflatePool> owned_;
  DeflatePool* pool_ = nullptr;
};

// One member's stream over the pool. The caller fills buffers in order
// (next_buffer, push), and takes the compressed pieces in the same order.
class DeflateStream {
 public:
  DeflateStream(DeflatePool& pool, int level);
  ~DeflateStream();
  DeflateStream(const DeflateStream&) = delete;
  DeflateStream& operator=(const DeflateStream&) = delete;

  // A buffer for the next chunk; null when the run's budget is spent and
  // this stream holds pieces: take() one first. Blocks only when it holds
  // none.
  std::unique_ptr<DeflateChunk> next_buffer();
  // Queues the filled buffer (chunk->size bytes; chunk->last on the final one).
  void push(std::unique_ptr<DeflateChunk> chunk);
  bool pending() const { return !tasks_.empty(); }
  // The oldest piece, compressed; valid until the next take(). Rethrows a
  // worker's error.
  std::span<const unsigned char> take();

 private:
  DeflatePool& pool_;
  int level_;
  OrderedTasks<std::unique_ptr<DeflateChunk>> tasks_;
  std::unique_ptr<DeflateChunk> current_;  // what take() returned last
};

}  // namespace kwheel
