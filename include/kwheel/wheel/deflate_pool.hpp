#pragma once
// The 1 MiB chunks of ChunkDeflater (kwheel/wheel/deflate.hpp) compressed
// in parallel, in the manner of pigz, by one pool for the whole run: every
// member of every wheel (and every kernel of a --lock build) feeds the same
// workers, so a run uses all of them whether it writes one huge wheel or
// many small ones. Chunks are compressed independently already, so the
// joined stream is byte for byte the serial one; a DeflateStream only puts
// the pieces back in order.
//
// Memory is fixed, in two budgets (docs/performance.md). The pool's slots
// bound the chunks in flight over all streams, queued, being compressed or
// compressed and waiting to be taken in order: one per worker plus half as
// many. Each keeps only its compressed piece once a worker is done with it
// (about a third of a chunk for machine code): the 1 MiB input goes back to
// the pool then, and inputs are fewer, one per worker plus two. So a stream
// whose oldest chunk is still being compressed can hold its finished pieces
// without leaving workers short of input. No stream takes more than its
// share of the slots, so the streams of one run finish together instead of
// one after another, and one writer does not end up feeding every worker.
// A writer waiting for its oldest piece wakes as soon as an input comes back
// it could fill, not only when that piece is done: otherwise each input
// freed by another stream's chunk would idle until some writer's oldest
// finished, and the workers would run dry (docs/performance.md). A slot
// freed on its own wakes no one: the next input back or chunk done does, a
// chunk's time later at most.
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "kwheel/base/work_pool.hpp"
#include "kwheel/wheel/deflate.hpp"

namespace kwheel {

class DeflatePool;

// A chunk's input buffer, which goes back to its pool when let go of.
struct RawReturn {
  DeflatePool* pool = nullptr;
  void operator()(std::byte* raw) const noexcept;
};
using RawBuffer = std::unique_ptr<std::byte[], RawReturn>;

// One chunk's buffers: the raw bytes in, the compressed piece out. The
// piece's buffer is left uninitialised, so only the bytes libdeflate writes
// (about a third of a chunk for machine code) become resident.
struct DeflateChunk {
  RawBuffer raw;                         // kDeflateChunk bytes, `size` of them the chunk; null once compressed
  size_t size = 0;
  bool last = false;                     // ends the stream
  bool done = false;                     // compressed (or failed); under the pool's lock
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
  // (the piece it is handing to libzip) ever exist, and at most
  // raw_buffers() inputs. With `wait` false, null when every input is in
  // use; with it, waits for a worker to finish one.
  std::unique_ptr<DeflateChunk> buffer(bool wait = true);
  void recycle(std::unique_ptr<DeflateChunk> chunk);

  // Compresses chunk->raw into chunk->packed at `level` on worker `worker`
  // (its own deflater for that level, made on first use), then, also when
  // it fails, gives the input buffer back and marks the chunk done.
  void compress(unsigned worker, int level, DeflateChunk& chunk);

  unsigned raw_buffers() const { return raw_cap_; }
  unsigned raw_buffers_made() const;
  // The most chunks one of `streams` live streams may have in flight.
  unsigned share(unsigned streams) const;

 private:
  friend struct RawReturn;
  friend class DeflateStream;
  // An input back (raw may be null), and/or a chunk marked done, under one
  // lock and one wake-up.
  void give_back(std::byte* raw, DeflateChunk* done = nullptr) noexcept;
  bool input_free() const { return !raw_free_.empty() || raw_made_ < raw_cap_; }  // under free_mutex_

  // Per worker, per level 1..12: only that worker's thread touches them.
  std::vector<std::array<std::unique_ptr<ChunkDeflater>, 13>> deflaters_;
  mutable std::mutex free_mutex_;
  // An input came back, or a chunk is done: what writers wait for.
  std::condition_variable changed_;
  std::vector<std::unique_ptr<DeflateChunk>> free_;
  std::vector<std::unique_ptr<std::byte[]>> raw_free_;
  unsigned raw_cap_ = 0, raw_made_ = 0;
  std::atomic<unsigned> streams_{0};
  WorkPool work_;  // last: its workers stop before the buffers and deflaters go
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

  // A buffer for the next chunk; null when this stream holds pieces and
  // the run's budget, its share of it, or the run's inputs are spent:
  // take() one first. Blocks only when it holds none.
  std::unique_ptr<DeflateChunk> next_buffer();
  // Queues the filled buffer (chunk->size bytes; chunk->last on the final one).
  void push(std::unique_ptr<DeflateChunk> chunk);
  bool pending() const { return !tasks_.empty(); }
  // With something pending: blocks until the oldest piece is compressed
  // (true: take() it) or, when `more` chunks are left to queue, until
  // next_buffer() would give one (false: fill it first).
  bool await(bool more);
  // The oldest piece, compressed; valid until the next take(). Rethrows a
  // worker's error.
  std::span<const unsigned char> take();

 private:
  DeflatePool& pool_;
  int level_;
  bool within_share() const;
  bool room() const;  // under the pool's free_mutex_

  // The chunks queued or compressed, oldest first. Owned here and lent to
  // the tasks, which are declared after them: they are waited for before
  // the chunks go, and a failed task's chunk stays readable by await().
  std::deque<std::unique_ptr<DeflateChunk>> in_flight_;
  OrderedTasks<DeflateChunk*> tasks_;
  std::unique_ptr<DeflateChunk> current_;  // what take() returned last
};

}  // namespace kwheel
