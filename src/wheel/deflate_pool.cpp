#include "kwheel/wheel/deflate_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace kwheel {

namespace {
// Slots beyond one per worker: a stream's finished pieces wait in them until
// its oldest chunk is done, and keep only the compressed bytes meanwhile.
// On the GPU machine at 16 workers (docs/performance.md) a quarter per
// worker, each slot holding its 1 MiB input until taken, left 2-4 of 16
// cores idle.
unsigned spare_slots(unsigned workers) { return std::max(2u, workers / 2); }
// Inputs beyond one per worker, filled while the workers are busy; an input
// is held only until it is compressed.
constexpr unsigned kSpareInputs = 2;
}  // namespace

DeflatePool::DeflatePool(unsigned workers)
    : raw_cap_(resolve_workers(workers) + kSpareInputs),
      work_(resolve_workers(workers), resolve_workers(workers) + spare_slots(resolve_workers(workers))) {
  // The pool is built first (it picks the worker count), then the state its
  // tasks use; no task can run before the constructor returns.
  deflaters_.resize(work_.workers());
  raw_free_.reserve(raw_cap_);  // so that give_back() never allocates
}

DeflatePool::~DeflatePool() = default;

RunPool::RunPool(DeflatePool* given, int level, unsigned workers) {
  if (level <= 0) return;  // stored members need no pool
  if (!given) owned_ = std::make_unique<DeflatePool>(workers);
  pool_ = given ? given : owned_.get();
}

void RawReturn::operator()(std::byte* raw) const noexcept { pool->give_back(raw); }

void DeflatePool::give_back(std::byte* raw, DeflateChunk* done) noexcept {
  {
    std::lock_guard lock(free_mutex_);
    if (raw) raw_free_.emplace_back(raw);  // room for every input was reserved: cannot throw
    if (done) done->done = true;
  }
  // All: a writer woken for an input it has no share left for would swallow
  // the wake-up of one that could use it.
  changed_.notify_all();
}

std::unique_ptr<DeflateChunk> DeflatePool::buffer(bool wait) {
  std::unique_lock lock(free_mutex_);
  if (!wait && !input_free()) return nullptr;
  changed_.wait(lock, [this] { return input_free(); });
  std::unique_ptr<DeflateChunk> chunk;
  if (!free_.empty()) {
    chunk = std::move(free_.back());
    free_.pop_back();
  } else {
    chunk = std::make_unique<DeflateChunk>();
  }
  if (!raw_free_.empty()) {
    chunk->raw = RawBuffer(raw_free_.back().release(), RawReturn{this});
    raw_free_.pop_back();
  } else {
    chunk->raw = RawBuffer(std::make_unique_for_overwrite<std::byte[]>(kDeflateChunk).release(), RawReturn{this});
    ++raw_made_;
  }
  return chunk;
}

unsigned DeflatePool::raw_buffers_made() const {
  std::lock_guard lock(free_mutex_);
  return raw_made_;
}

unsigned DeflatePool::share(unsigned streams) const {
  // An even split plus one, so a stream whose writer is busy for a moment
  // does not leave its part of the budget unused.
  streams = std::max(1u, streams);
  return (work_.slots() + streams - 1) / streams + 1;
}

void DeflatePool::recycle(std::unique_ptr<DeflateChunk> chunk) {
  if (!chunk) return;
  chunk->raw.reset();
  chunk->size = 0;
  chunk->last = false;
  chunk->done = false;
  std::lock_guard lock(free_mutex_);
  free_.push_back(std::move(chunk));
}

void DeflatePool::compress(unsigned worker, int level, DeflateChunk& chunk) {
  // The input goes back at once, for the next chunk, while this piece
  // waits its turn; and its writer learns it is done even if this throws.
  struct Finish {
    DeflatePool& pool;
    DeflateChunk& chunk;
    ~Finish() { pool.give_back(chunk.raw.release(), &chunk); }
  } finish{*this, chunk};
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
  ++pool_.streams_;
}

DeflateStream::~DeflateStream() {
  pool_.recycle(std::move(current_));
  --pool_.streams_;
}

std::unique_ptr<DeflateChunk> DeflateStream::next_buffer() {
  const bool holding = !tasks_.empty();
  if (holding && !within_share()) return nullptr;
  if (!tasks_.reserve()) return nullptr;
  return pool_.buffer(/*wait=*/!holding);
}

void DeflateStream::push(std::unique_ptr<DeflateChunk> chunk) {
  DeflateChunk* lent = chunk.get();
  in_flight_.push_back(std::move(chunk));
  try {
    tasks_.submit([this, lent](unsigned worker) {
      pool_.compress(worker, level_, *lent);
      return lent;
    });
  } catch (...) {
    in_flight_.pop_back();  // not queued (OrderedTasks::submit): no task holds it
    throw;
  }
}

bool DeflateStream::within_share() const { return tasks_.size() < pool_.share(pool_.streams_.load()); }

bool DeflateStream::room() const { return within_share() && (tasks_.reserved() || pool_.work_.slot_free()) && pool_.input_free(); }

bool DeflateStream::await(bool more) {
  if (in_flight_.empty()) throw std::logic_error("DeflateStream::await with nothing in flight");
  const DeflateChunk& oldest = *in_flight_.front();  // alive until take(), whatever its task did
  std::unique_lock lock(pool_.free_mutex_);
  pool_.changed_.wait(lock, [&] { return oldest.done || (more && room()); });
  return oldest.done;
}

std::span<const unsigned char> DeflateStream::take() {
  pool_.recycle(std::move(current_));
  std::unique_ptr<DeflateChunk> oldest = std::move(in_flight_.front());
  in_flight_.pop_front();  // first: pop() may rethrow, and the two must stay in step
  tasks_.pop();            // once it returns or throws, the task is done with the chunk
  current_ = std::move(oldest);
  return current_->piece();
}

}  // namespace kwheel
