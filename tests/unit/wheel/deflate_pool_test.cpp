// The pool's joined stream must be the serial ChunkDeflater's, byte for
// byte: over random bytes and real machine code (this test binary), at
// sizes on and around the chunk edge, with several streams sharing one
// pool at once and a budget small enough that streams wait on each other.
// A decoder reads the result back.
#include "kwheel/wheel/deflate_pool.hpp"

#include <gtest/gtest.h>
#include <libdeflate.h>

#include <cstring>
#include <fstream>
#include <future>
#include <random>
#include <thread>
#include <utility>

using namespace kwheel;

namespace {

// The serial path: one deflater, one chunk after another.
std::vector<unsigned char> serial(const std::vector<unsigned char>& data, int level) {
  ChunkDeflater d(level);
  std::vector<unsigned char> joined, piece;
  const auto* bytes = reinterpret_cast<const std::byte*>(data.data());
  size_t off = 0;
  do {
    const size_t n = std::min(kDeflateChunk, data.size() - off);
    d.compress({bytes + off, n}, off + n == data.size(), piece);
    joined.insert(joined.end(), piece.begin(), piece.end());
    off += n;
  } while (off < data.size());
  return joined;
}

// The pool's path, fed as the wheel writer feeds it: as many chunks ahead
// as the budget allows, pieces taken in order.
std::vector<unsigned char> pooled(DeflatePool& pool, const std::vector<unsigned char>& data, int level) {
  DeflateStream stream(pool, level);
  std::vector<unsigned char> joined;
  size_t off = 0;
  bool fed_all = false;
  while (!fed_all || stream.pending()) {
    while (!fed_all) {
      auto chunk = stream.next_buffer();
      if (!chunk) break;
      chunk->size = std::min(kDeflateChunk, data.size() - off);
      // An empty input's data() may be null, which memcpy must not get.
      if (chunk->size > 0) std::memcpy(chunk->raw.get(), data.data() + off, chunk->size);
      off += chunk->size;
      chunk->last = fed_all = off == data.size();
      stream.push(std::move(chunk));
    }
    const auto piece = stream.take();
    joined.insert(joined.end(), piece.begin(), piece.end());
  }
  return joined;
}

// libdeflate's own decoder reads the joined stream back (deflate_test.cpp
// checks the serial stream with zlib's).
std::vector<unsigned char> decompressed(const std::vector<unsigned char>& in, size_t size) {
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d(libdeflate_alloc_decompressor(),
                                                                                  libdeflate_free_decompressor);
  std::vector<unsigned char> out(size);
  size_t got = 0;
  EXPECT_EQ(libdeflate_deflate_decompress(d.get(), in.data(), in.size(), out.data(), out.size(), &got), LIBDEFLATE_SUCCESS);
  out.resize(got);
  return out;
}

std::vector<unsigned char> random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  // Half noise, half a small alphabet: both stored and Huffman blocks occur.
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i / 4096) % 2 ? rng() : rng() % 5);
  return v;
}

// This test binary's own code (read once: it is some 16 MB).
std::vector<unsigned char> machine_code(size_t n) {
  static const std::vector<unsigned char> exe = [] {
    std::ifstream f("/proc/self/exe", std::ios::binary | std::ios::ate);
    std::vector<unsigned char> bytes(static_cast<size_t>(f.tellg()));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return bytes;
  }();
  const size_t start = exe.size() / 3;  // past the ELF headers, into .text
  std::vector<unsigned char> v;
  while (v.size() < n) v.insert(v.end(), exe.begin() + start, exe.begin() + start + std::min(n - v.size(), exe.size() - start));
  return v;
}

const size_t kSizes[] = {0, 1, 4093, kDeflateChunk - 1, kDeflateChunk, kDeflateChunk + 1, 2 * kDeflateChunk,
                         3 * kDeflateChunk + 12345};

}  // namespace

TEST(DeflatePool, SameBytesAsTheSerialDeflater) {
  DeflatePool pool(3);
  for (int level : {1, 6, 9}) {
    for (size_t size : kSizes) {
      for (bool code : {false, true}) {
        SCOPED_TRACE("level " + std::to_string(level) + " size " + std::to_string(size) + (code ? " machine code" : " random"));
        const auto data = code ? machine_code(size) : random_bytes(size, static_cast<unsigned>(size));
        const auto expected = serial(data, level);
        const auto got = pooled(pool, data, level);
        EXPECT_TRUE(got == expected) << got.size() << " bytes vs " << expected.size();
        EXPECT_EQ(decompressed(got, data.size()), data);
      }
    }
  }
}

TEST(DeflatePool, StreamsSharingOnePoolEachGetTheirOwnBytes) {
  // Six streams at once on two workers, four slots: they interleave on the
  // workers and wait for each other's slots.
  DeflatePool pool(2);
  std::vector<std::vector<unsigned char>> inputs, outputs(6);
  for (unsigned i = 0; i < 6; ++i) inputs.push_back(i % 2 ? machine_code(kDeflateChunk * (i + 1) + i) : random_bytes(kDeflateChunk * i + 7, i));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < 6; ++i) threads.emplace_back([&, i] { outputs[i] = pooled(pool, inputs[i], 6); });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < 6; ++i) EXPECT_TRUE(outputs[i] == serial(inputs[i], 6)) << "stream " << i;
  EXPECT_LE(pool.work().peak_slots_held(), pool.work().slots());
  // Six streams filled inputs at once, yet no more were ever made than
  // the pool's fixed number.
  EXPECT_EQ(pool.raw_buffers(), 4u);
  EXPECT_LE(pool.raw_buffers_made(), pool.raw_buffers());
}

TEST(DeflatePool, AStreamHoldsNoMoreThanItsShareOfTheSlots) {
  // Two workers: four slots. Three live streams split them three ways
  // (plus one); once the others are gone, one stream may use them all.
  DeflatePool pool(2);
  ASSERT_EQ(pool.work().slots(), 4u);
  ASSERT_EQ(pool.share(3), 3u);
  const auto data = random_bytes(4 * kDeflateChunk, 3);
  DeflateStream a(pool, 6);
  auto fill = [&](int i) {
    auto chunk = a.next_buffer();
    if (!chunk) return false;
    chunk->size = kDeflateChunk;
    chunk->last = i == 3;
    std::memcpy(chunk->raw.get(), data.data() + i * kDeflateChunk, kDeflateChunk);
    a.push(std::move(chunk));
    return true;
  };
  {
    DeflateStream b(pool, 6), c(pool, 6);
    EXPECT_TRUE(fill(0));
    EXPECT_TRUE(fill(1));
    EXPECT_TRUE(fill(2));
    EXPECT_FALSE(fill(3)) << "a fourth chunk would take the other streams' share";
  }
  EXPECT_TRUE(fill(3));
  std::vector<unsigned char> joined;
  while (a.pending()) {
    const auto piece = a.take();
    joined.insert(joined.end(), piece.begin(), piece.end());
  }
  EXPECT_EQ(decompressed(joined, data.size()), data);
}

TEST(DeflatePool, AWaitingStreamWakesForAnInputBeforeItsOldestIsDone) {
  // One worker, held by a task of the test's: the stream's chunk cannot be
  // compressed. Every input is in use. When one comes back, await() must
  // return for it (false: fill it), not wait on for the held chunk.
  DeflatePool pool(1);
  ASSERT_EQ(pool.raw_buffers(), 3u);
  std::promise<void> gate;
  auto blocker = pool.work().submit([open = gate.get_future().share()](unsigned) { open.wait(); });
  const auto data = random_bytes(kDeflateChunk, 11);
  DeflateStream stream(pool, 6);
  // Declared after the stream, so destroyed before it: an early return
  // opens the gate first, and the stream's end does not wait on the blocker.
  struct Opener {
    std::promise<void>& gate;
    bool open = false;
    void operator()() {
      if (!std::exchange(open, true)) gate.set_value();
    }
    ~Opener() { (*this)(); }
  } opener{gate};
  auto chunk = stream.next_buffer();
  ASSERT_TRUE(chunk);
  chunk->size = data.size();
  chunk->last = true;
  std::memcpy(chunk->raw.get(), data.data(), data.size());
  stream.push(std::move(chunk));
  std::vector<std::unique_ptr<DeflateChunk>> held;
  for (int i = 0; i < 2; ++i) held.push_back(pool.buffer(/*wait=*/false));
  ASSERT_TRUE(held[0] && held[1]);
  ASSERT_FALSE(pool.buffer(/*wait=*/false)) << "every input should be in use";

  auto woke = std::async(std::launch::async, [&] { return stream.await(/*more=*/true); });
  // Nothing it waits for has happened: it must not return. (Had it not
  // started waiting yet, the input below would find it later, and the
  // assertions after it would hold all the same.)
  EXPECT_EQ(woke.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout) << "await() returned with no input free";
  held.pop_back();  // an input comes back
  const bool in_time = woke.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  opener();  // in either case, so that nothing is left waiting
  ASSERT_TRUE(in_time) << "await() slept through an input coming back";
  EXPECT_FALSE(woke.get()) << "the oldest chunk cannot be done: its worker was held";

  blocker.get();
  EXPECT_TRUE(stream.await(/*more=*/false));
  const auto piece = stream.take();
  EXPECT_EQ(decompressed({piece.begin(), piece.end()}, data.size()), data);
}

TEST(DeflatePool, AStreamLeftHalfWayGivesEverythingBack) {
  DeflatePool pool(2);
  const auto data = random_bytes(5 * kDeflateChunk, 9);
  {
    DeflateStream stream(pool, 6);
    for (int i = 0; i < 3; ++i) {
      auto chunk = stream.next_buffer();
      ASSERT_TRUE(chunk);
      chunk->size = kDeflateChunk;
      std::memcpy(chunk->raw.get(), data.data() + i * kDeflateChunk, kDeflateChunk);
      stream.push(std::move(chunk));
    }
    stream.take();  // then abandoned, as when libzip stops on another member's error
  }
  for (unsigned i = 0; i < pool.work().slots(); ++i) EXPECT_TRUE(pool.work().try_acquire_slot());
  for (unsigned i = 0; i < pool.work().slots(); ++i) pool.work().release_slot();
  // Every input came back too, also the compressed chunks' (taken or not).
  std::vector<std::unique_ptr<DeflateChunk>> held;
  for (unsigned i = 0; i < pool.raw_buffers(); ++i) held.push_back(pool.buffer(/*wait=*/false));
  for (const auto& chunk : held) EXPECT_TRUE(chunk && chunk->raw);
  EXPECT_FALSE(pool.buffer(/*wait=*/false)) << "more inputs than the pool's " << pool.raw_buffers();
  for (auto& chunk : held) pool.recycle(std::move(chunk));
  EXPECT_TRUE(pooled(pool, data, 6) == serial(data, 6));
}

TEST(DeflatePool, RejectsLevelsOutsideLibdeflatesRange) {
  DeflatePool pool(1);
  EXPECT_THROW(DeflateStream(pool, 0), std::invalid_argument);
  EXPECT_THROW(DeflateStream(pool, 13), std::invalid_argument);
}
