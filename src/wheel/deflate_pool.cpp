#include "kwheel/wheel/deflate_pool.hpp"

#include <algorithm>

namespace kwheel {

namespace {
// Chunks filled ahead beyond one per worker, so a worker that finishes finds
// the next one waiting, and a stream whose oldest chunk is still being
// compressed does not leave workers idle. On the GPU machine at 16 workers
// (docs/performance.md), half a chunk per worker took 67-70 MB peak RSS,
// over the 64 MB bound; two in all held 3 x 1 GB to a 10.2x speedup.
unsigned spare_chunks(unsigned workers) { return std::max(2u, workers / 4); }
}  // namespace

DeflatePool::DeflatePool(unsigned workers)
    : work_(resolve_workers(workers), resolve_workers(workers) + spare_chunks(resolve_workers(workers))) {
  // The pool is built first (it picks the worker count), then the state its
  // tasks use; no task can run before the constructor returns.
  deflaters_.resize(work_.workers());
}

DeflatePool::~DeflatePool() = default;

RunPool::RunPool(DeflatePool* given, int level, unsigned workers) {
  if (level <= 0) return;  // stored members need no pool
  if (!given) owned_ = std::make_unique<DeflatePool>(workers);
  pool_ = given ? given : owned_.get();
}

std::unique_ptr<DeflateChunk> DeflatePool::buffer() {
  {
    std::lock_guard lock(free_mutex_);
    if (!free_.empty()) {
      auto chunk = std::move(free_.back());
      free_.pop_back();
      return chunk;
    }
  }
  auto chunk = std::make_unique<DeflateChunk>();
  chunk->raw = std::make_unique_for_overwrite<std::byte[]>(kDeflateChunk);
  return chunk;
}

void DeflatePool::recycle(std::unique_ptr<DeflateChunk> chunk) {
  if (!chunk) return;
  chunk->size = 0;
  chunk->last = false;
  std::lock_guard lock(free_mutex_);
  free_.push_back(std::move(chunk));
}

void DeflatePool::compress(unsigned worker, int level, DeflateChunk& chunk) {
  auto& d = deflaters_.at(worker).at(static_cast<size_t>(level));
  if (!d) d = std::make_unique<ChunkDeflater>(level);
  const size_t room = d->bound(chunk.size);
  if (chunk.packed_room < room) {
    chunk.packed = std::make_unique_for_overwrite<unsigned char[]>(room);
    chunk.packed_room = room;
  }
  chunk.packed_size = d->compress({chunk.raw.get(), chunk.size}, chunk.last, {chunk.packed.get(), chunk.packed_room});
}

DeflateStream::DeflateStream(DeflatePool& pool, int level) : pool_(pool), level_(level), tasks_(pool.work()) {
  if (level < 1 || level > 12) throw std::invalid_argument("deflate level " + std::to_string(level) + " is not 1..12");
}

DeflateStream::~DeflateStream() { pool_.recycle(std::move(current_)); }

std::unique_ptr<DeflateChunk> DeflateStream::next_buffer() {
  if (!tasks_.reserve()) return nullptr;
  return pool_.buffer();
}

void DeflateStream::push(std::unique_ptr<DeflateChunk> chunk) {
  tasks_.submit([this, chunk = std::move(chunk)](unsigned worker) mutable {
    pool_.compress(worker, level_, *chunk);
    return std::move(chunk);
  });
}

std::span<const unsigned char> DeflateStream::take() {
  pool_.recycle(std::move(current_));
  current_ = tasks_.pop();
  return current_->piece();
}

}  // namespace kwheel
