#include "kwheel/evidence/offload_bundle.hpp"

#include <zlib.h>
// ZSTD_createDCtx_advanced and the DStream size estimates: the decoder's
// memory is reserved before it runs and held to that reservation.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <set>

#include "kwheel/base/byte_budget.hpp"
#include "kwheel/base/byte_reader.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
namespace {

constexpr std::string_view kBundleMagic = "__CLANG_OFFLOAD_BUNDLE__";
constexpr std::string_view kCompressedMagic = "CCOB";
constexpr std::uint64_t kBundleHeaderBytes = 32;  // magic, entry count
constexpr std::uint64_t kEntryFieldBytes = 24;    // offset, size, id length
// Real ids are under 100 bytes; the cap keeps one hostile length from
// copying a large part of a section into a single string.
constexpr std::uint64_t kMaxEntryIdBytes = 1024;
constexpr std::uint64_t kMaxInflatedBytes = std::uint64_t{1} << 30;
// Decompressed bytes pass through one buffer of this size on their way to
// the entry-table reader; only the table is kept, never the payload.
constexpr std::size_t kOutputChunkBytes = 128 * 1024;
// zlib's inflate state (about 7 KiB) and its 32 KiB window.
constexpr std::uint64_t kZlibStateBytes = 48 * 1024;
// zstd frames are decoded with windows up to 2^27 (zstd's default cap, and
// more than LLVM's long-distance-matching writer uses).
constexpr int kZstdWindowLogMax = 27;
// The method field stores llvm::compression::Format.
constexpr std::uint16_t kMethodZlib = 0;
constexpr std::uint16_t kMethodZstd = 1;

constexpr const char* kFix = "; the file is damaged or was not written by clang-offload-bundler, rebuild it";

// Which file, and which bundle in it, an error is about.
struct Where {
  std::string_view name;
  std::string bundle;  // "offload bundle at offset 0x2000"

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorKind::input, std::string(name) + ": " + bundle + " " + what + kFix);
  }
};

bool starts_with(std::span<const std::byte> bytes, std::string_view magic) {
  return bytes.size() >= magic.size() && std::memcmp(bytes.data(), magic.data(), magic.size()) == 0;
}

[[noreturn]] void fail_cut_off(const Where& where, std::uint64_t size, std::uint64_t off, std::uint64_t len,
                               std::string_view what) {
  where.fail("is cut off: " + std::string(what) + " (" + std::to_string(len) + " bytes at " + hex_offset(off) +
             ") runs past the " + std::to_string(size) + " bytes there are");
}

// Whether [off, off + len) lies inside `size` bytes; no sum can wrap.
bool inside(std::uint64_t size, std::uint64_t off, std::uint64_t len) { return off <= size && len <= size - off; }

// One bundle's bytes, little-endian, with its "is cut off" error: every
// read is checked, so no offset or length from the input is used unchecked.
class Fields : public ByteReader {
 public:
  Fields(std::span<const std::byte> bytes, const Where& where)
      : ByteReader(bytes, ByteOrder::little, cut_off(where, bytes.size())) {}

  void check(std::uint64_t off, std::uint64_t len, const std::string& what) const { range(off, len, what); }

 private:
  // `where` outlives the reader: both live for one bundle's parse.
  static Refusal cut_off(const Where& where, std::uint64_t size) {
    return [&where, size](std::uint64_t off, std::uint64_t len, std::string_view what) {
      fail_cut_off(where, size, off, len, what);
    };
  }
};

// Strings copied out are capped relative to the input, as in elf.cpp: a
// compressed bundle can expand to many entries from a few bytes. The fixed
// part is 1 MiB (it was 64 MiB): every thread parsing a section may hold
// this much, so it is part of the run's memory bound (docs/performance.md),
// and a real bundle's entries (about 260 bytes charged each, beside code
// objects of kilobytes) fit in 4 times its section. So is the section's
// decompressed total: each bundle's own cap (1 GiB) would otherwise let
// many small zlib bundles cost minutes of inflating.
class Budget {
 public:
  explicit Budget(std::uint64_t input_bytes)
      : left_(1024 * 1024 + 4 * input_bytes), inflate_left_(kMaxInflatedBytes + 64 * input_bytes) {}
  void charge(std::uint64_t bytes, const Where& where) {
    if (bytes > left_) where.fail("lists more entries than any real bundle (the size limit on what is read out)");
    left_ -= bytes;
  }
  void charge_inflated(std::uint64_t bytes, const Where& where) {
    if (bytes > inflate_left_) where.fail("decompresses, with the bundles before it, to more than 64 times the section's size");
    inflate_left_ -= bytes;
  }

 private:
  std::uint64_t left_;
  std::uint64_t inflate_left_;
};

bool chars_in(std::string_view s, std::string_view extra) {
  return std::all_of(s.begin(), s.end(), [extra](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || extra.find(c) != extra.npos;
  });
}

// Up to n pieces; the last keeps the rest, separators included.
std::vector<std::string_view> split_n(std::string_view s, char sep, std::size_t n) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < n) {
    const auto at = s.find(sep);
    if (at == s.npos) break;
    out.push_back(s.substr(0, at));
    s.remove_prefix(at + 1);
  }
  out.push_back(s);
  return out;
}

// <processor>(:<feature>(+|-))*. Generic processors hold '-'
// (gfx9-generic, gfx10-3-generic), so only ':' separates features.
bool valid_target_id(std::string_view tid) {
  const auto parts = split_n(tid, ':', std::numeric_limits<std::size_t>::max());
  if (parts[0].empty() || !chars_in(parts[0], "_-")) return false;
  return std::all_of(parts.begin() + 1, parts.end(), [](std::string_view f) {
    return f.size() >= 2 && (f.back() == '+' || f.back() == '-') && chars_in(f.substr(0, f.size() - 1), "_");
  });
}

// Older HIP toolchains wrote a three-field triple followed directly by the
// target id ("hip-amdgcn-amd-amdhsa-gfx906"); no environment field starts
// like a processor name, so this tells the two layouts apart.
bool starts_like_processor(std::string_view s) { return s.starts_with("gfx") || s.starts_with("sm_"); }

// <kind>-<arch>-<vendor>-<os>[-<env>[-<target id>]], or the legacy
// <kind>-<arch>-<vendor>-<os>-<target id>.
OffloadTarget parse_entry_id(std::string id, std::uint64_t size, std::uint64_t index, const Where& where) {
  const auto bad = [&](const std::string& why) {
    where.fail("entry " + std::to_string(index) + " has the id '" + id + "', which " + why);
  };
  if (!chars_in(id, "-_.:+")) bad("holds characters no bundle entry id has");
  const auto fields = split_n(id, '-', 5);
  if (fields.size() < 4) bad("is not <kind>-<arch>-<vendor>-<os>[-<env>][-<target id>]");
  if (fields[0].empty() || fields[1].empty()) bad("has an empty offload kind or architecture");
  if (!chars_in(fields[0], "_")) bad("has a malformed offload kind");
  std::string_view env, tid;
  if (fields.size() == 5 && starts_like_processor(fields[4])) {
    tid = fields[4];
  } else if (fields.size() == 5) {
    const auto rest = split_n(fields[4], '-', 2);
    env = rest[0];
    if (rest.size() == 2) tid = rest[1];
  }
  for (std::size_t i = 1; i < 4; ++i) {
    if (!chars_in(fields[i], "_.")) bad("has a malformed target triple");
  }
  if (!chars_in(env, "_.")) bad("has a malformed target triple");
  if (!tid.empty() && !valid_target_id(tid)) bad("has a target id that is not <processor>(:<feature>(+|-))*");

  OffloadTarget t;
  t.kind = std::string(fields[0]);
  t.triple = std::string(fields[1]) + "-" + std::string(fields[2]) + "-" + std::string(fields[3]);
  if (!env.empty()) t.triple += "-" + std::string(env);
  t.target_id = std::string(tid);
  t.processor = std::string(tid.substr(0, tid.find(':')));
  t.size = size;
  t.entry_id = std::move(id);
  return t;
}

struct Parsed {
  std::vector<OffloadTarget> targets;
  std::uint64_t extent = 0;  // bytes from the bundle's start to its end
};

struct RawEntry {
  std::uint64_t offset = 0, size = 0;
  std::string id;
};

// An uncompressed bundle's header and entry table, read from its bytes in
// order as they arrive: a section's bytes at once, or a compressed bundle's
// as they are decompressed, chunk by chunk. Only the table is kept (its ids
// charged to the section's budget), never the code objects after it, so a
// bundle that inflates to 1 GiB costs its table and one chunk, not 1 GiB.
// Each field is checked against the bundle's size (known up front: the
// section's rest, or the size the container declares) before it is read,
// in the order and with the words of a read from whole bytes.
class EntryTableReader {
 public:
  EntryTableReader(std::uint64_t size, const Where& where, Budget& budget)
      : size_(size), where_(where), budget_(budget) {
    need_ = kBundleMagic.size();
  }

  bool done() const { return phase_ == Phase::done; }

  // The bundle's next bytes; those past the table are skipped.
  void feed(std::span<const std::byte> bytes) {
    while (!bytes.empty() && phase_ != Phase::done) {
      const auto n = std::min<std::uint64_t>(bytes.size(), need_ - field_.size());
      field_.insert(field_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      bytes = bytes.subspan(n);
      while (phase_ != Phase::done && field_.size() == need_) complete_field();
    }
  }

  // Once all `size` bytes were fed: the entries, each checked against the
  // bundle's size and its table.
  Parsed finish() {
    if (phase_ == Phase::magic) where_.fail("does not start with the __CLANG_OFFLOAD_BUNDLE__ magic");
    if (phase_ != Phase::done) fail_cut_off(where_, size_, pos_, need_, "the entry table");
    Parsed p;
    p.extent = table_end_;
    for (std::uint64_t i = 0; i < entries_.size(); ++i) {
      RawEntry& e = entries_[i];
      const std::string what = "entry " + std::to_string(i) + " ('" + e.id + "')";
      if (!inside(size_, e.offset, e.size)) fail_cut_off(where_, size_, e.offset, e.size, what + "'s code object");
      if (e.size > 0 && e.offset < table_end_) {
        where_.fail("places " + what + "'s code object at " + hex_offset(e.offset) +
                    ", inside its entry table (which ends at " + hex_offset(table_end_) + ")");
      }
      p.extent = std::max(p.extent, e.offset + e.size);
      p.targets.push_back(parse_entry_id(std::move(e.id), e.size, i, where_));
    }
    return p;
  }

 private:
  enum class Phase { magic, count, fields, id, done };

  // The next field: `len` bytes at pos_, refused at once if the bundle
  // cannot hold them (they would never arrive).
  void expect(Phase phase, std::uint64_t len, std::string_view what) {
    if (!inside(size_, pos_, len)) fail_cut_off(where_, size_, pos_, len, what);
    phase_ = phase;
    need_ = len;
    field_.clear();
  }

  std::uint64_t u64(std::size_t at) const {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i) v |= std::uint64_t(std::to_integer<std::uint8_t>(field_[at + i])) << (8 * i);
    return v;
  }

  std::string entry_name() const { return "entry " + std::to_string(entries_.size()); }

  // Entry i's three fields, each refused with its own name when cut off.
  void expect_entry() {
    if (entries_.size() == count_) {
      table_end_ = pos_;
      phase_ = Phase::done;
      field_ = {};
      return;
    }
    const std::string what = entry_name();
    if (!inside(size_, pos_, 8)) fail_cut_off(where_, size_, pos_, 8, what + "'s offset");
    if (!inside(size_, pos_ + 8, 8)) fail_cut_off(where_, size_, pos_ + 8, 8, what + "'s size");
    if (!inside(size_, pos_ + 16, 8)) fail_cut_off(where_, size_, pos_ + 16, 8, what + "'s id length");
    expect(Phase::fields, kEntryFieldBytes, what + "'s fields");
  }

  void complete_field() {
    switch (phase_) {
      case Phase::magic:
        if (std::memcmp(field_.data(), kBundleMagic.data(), kBundleMagic.size()) != 0) {
          where_.fail("does not start with the __CLANG_OFFLOAD_BUNDLE__ magic");
        }
        pos_ = kBundleMagic.size();
        expect(Phase::count, 8, "the entry count");
        return;
      case Phase::count: {
        count_ = u64(0);
        const std::uint64_t room = (size_ - kBundleHeaderBytes) / kEntryFieldBytes;
        if (count_ > room) {
          where_.fail("declares " + std::to_string(count_) + " entries, but the " + std::to_string(size_) +
                      " bytes there are hold at most " + std::to_string(room));
        }
        pos_ = kBundleHeaderBytes;
        expect_entry();
        return;
      }
      case Phase::fields: {
        const std::string what = entry_name();
        current_.offset = u64(0);
        current_.size = u64(8);
        const std::uint64_t id_len = u64(16);
        if (id_len > kMaxEntryIdBytes) {
          where_.fail("says " + what + "'s id is " + std::to_string(id_len) + " bytes long; real ids are under " +
                      std::to_string(kMaxEntryIdBytes));
        }
        budget_.charge(sizeof(OffloadTarget) + 2 * id_len, where_);
        pos_ += kEntryFieldBytes;
        expect(Phase::id, id_len, what + "'s id");
        return;
      }
      case Phase::id:
        current_.id.assign(reinterpret_cast<const char*>(field_.data()), field_.size());
        pos_ += field_.size();
        entries_.push_back(std::move(current_));
        current_ = {};
        expect_entry();
        return;
      case Phase::done: return;
    }
  }

  const std::uint64_t size_;
  const Where& where_;  // outlives the reader: both live for one bundle's parse
  Budget& budget_;
  Phase phase_ = Phase::magic;
  std::uint64_t pos_ = 0;   // where the field being read starts
  std::uint64_t need_ = 0;  // its length
  std::vector<std::byte> field_;  // its bytes so far (at most 1 KiB: an id)
  std::uint64_t count_ = 0;
  RawEntry current_;
  std::vector<RawEntry> entries_;
  std::uint64_t table_end_ = 0;  // where code objects may start
};

// `bytes` runs from the magic to the end of the section; entry offsets
// count from the magic.
Parsed parse_uncompressed(std::span<const std::byte> bytes, const Where& where, Budget& budget) {
  EntryTableReader table(bytes.size(), where, budget);
  table.feed(bytes);
  return table.finish();
}

struct CompressedHeader {
  std::uint16_t version = 0;
  std::uint16_t method = 0;
  std::uint64_t header_bytes = 0;
  std::optional<std::uint64_t> total;  // header included; version 1 does not record it
  std::uint64_t uncompressed = 0;
};

CompressedHeader read_compressed_header(const Fields& f, const Where& where) {
  CompressedHeader h;
  h.version = f.get<std::uint16_t>(4, "the version");
  h.method = f.get<std::uint16_t>(6, "the compression method");
  switch (h.version) {
    case 1:
      h.header_bytes = 20;
      h.uncompressed = f.get<std::uint32_t>(8, "the uncompressed size");
      break;
    case 2:
      h.header_bytes = 24;
      h.total = f.get<std::uint32_t>(8, "the total size");
      h.uncompressed = f.get<std::uint32_t>(12, "the uncompressed size");
      break;
    case 3:
      h.header_bytes = 32;
      h.total = f.get<std::uint64_t>(8, "the total size");
      h.uncompressed = f.get<std::uint64_t>(16, "the uncompressed size");
      break;
    default:
      where.fail("has format version " + std::to_string(h.version) + "; clang writes versions 1 to 3");
  }
  f.check(0, h.header_bytes, "the version " + std::to_string(h.version) + " header");
  if (h.total && *h.total < h.header_bytes) {
    where.fail("declares a total size of " + std::to_string(*h.total) + " bytes, less than its own header");
  }
  if (h.total) f.check(0, *h.total, "the total size its header declares");
  if (h.method != kMethodZlib && h.method != kMethodZstd) {
    where.fail("uses compression method " + std::to_string(h.method) + "; clang writes 0 (zlib) or 1 (zstd)");
  }
  return h;
}

enum class StreamEnd { complete, truncated, corrupt, overlong, over_reservation };

// Where decompressed bytes go, in order, one chunk at a time.
using Sink = std::function<void(std::span<const std::byte>)>;

// What decompressing one bundle's payload gave, zlib's or zstd's alike.
struct Decompressed {
  std::uint64_t produced = 0;  // bytes the stream decompressed to (at most its limit and one)
  std::uint64_t consumed = 0;  // compressed bytes up to the stream's end
  StreamEnd end = StreamEnd::corrupt;
  std::string message;  // the library's, for a corrupt stream
};

// The one buffer decompressed bytes pass through. Left uninitialised: only
// what the decoder writes becomes resident.
class OutputChunk {
 public:
  OutputChunk() : bytes_(new std::byte[kOutputChunkBytes]) {}
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

// What decoding a frame may hold: zstd's own estimate from the frame's
// header (its context, one block in, the window out), never more than a
// frame with the largest window kwheel decodes. A header it cannot read, or
// a window over the cap, is refused by the decoder before it allocates.
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

// A zstd frame records its content size (clang's writer always does): one
// that disagrees with the container's is refused before decoding.
void check_zstd_content_size(std::span<const std::byte> frame, const CompressedHeader& h, const Where& where) {
  const unsigned long long n = ZSTD_getFrameContentSize(frame.data(), frame.size());
  // An unreadable header is left to the decoder, which says why.
  if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN || n == h.uncompressed) return;
  where.fail("holds a zstd frame of " + std::to_string(n) + " bytes, but its header declares " +
             std::to_string(h.uncompressed));
}

// Decompresses one bundle's payload into `sink`, holding the memory it
// decodes with (the decoder's state and window, the output chunk) reserved
// from the run's offload_decode_budget() meanwhile: however many threads
// decode at once, they hold at most its capacity together.
std::uint64_t decompress_payload(std::span<const std::byte> stream, const CompressedHeader& h, const Where& where,
                                 std::uint64_t& consumed, const Sink& sink) {
  const bool zstd = h.method == kMethodZstd;
  const char* const kind = zstd ? "zstd frame" : "zlib stream";
  const char* const library = zstd ? "zstd" : "zlib";
  if (zstd) check_zstd_content_size(stream, h, where);
  const std::uint64_t decoder = zstd ? zstd_decoder_bytes(stream) : kZlibStateBytes;
  std::optional<ByteBudget::Reservation> held;
  try {
    held.emplace(offload_decode_budget().reserve(decoder + kOutputChunkBytes, "decoding it"));
  } catch (const std::length_error& e) {
    where.fail(std::string("cannot be decoded within kwheel's memory budget: ") + e.what());
  }
  const Decompressed z = zstd ? decompress_zstd(stream, h.uncompressed, decoder, sink)
                              : inflate_zlib(stream, h.uncompressed, sink);
  const std::string declared = std::to_string(h.uncompressed);
  switch (z.end) {
    case StreamEnd::truncated: where.fail(std::string("is cut off inside its ") + kind);
    case StreamEnd::corrupt: where.fail(std::string("holds a corrupt ") + kind + " (" + library + ": " + z.message + ")");
    case StreamEnd::overlong: where.fail("decompresses to more than the " + declared + " bytes its header declares");
    case StreamEnd::over_reservation:
      where.fail("needs more memory to decode than its frame header declares (" + std::to_string(decoder) + " bytes)");
    case StreamEnd::complete: break;
  }
  if (z.produced != h.uncompressed) {
    where.fail("decompresses to " + std::to_string(z.produced) + " bytes, but its header declares " + declared);
  }
  // LLVM reads zstd payloads with ZSTD_decompress, which refuses bytes
  // after the frame that are no frame (zlib's uncompress ignores them); a
  // version 1 container has no end of its own, so what follows it is the
  // rest of the section.
  if (zstd && h.total && z.consumed != stream.size()) {
    where.fail("holds " + std::to_string(stream.size() - z.consumed) +
               " bytes after its zstd frame, inside the total size its header declares");
  }
  consumed = z.consumed;
  return z.produced;
}

Parsed parse_compressed(std::span<const std::byte> bytes, const Where& where, Budget& budget) {
  const Fields f(bytes, where);
  const CompressedHeader h = read_compressed_header(f, where);
  if (h.uncompressed > kMaxInflatedBytes) {
    where.fail("declares " + std::to_string(h.uncompressed) + " bytes uncompressed, over kwheel's limit of " +
               std::to_string(kMaxInflatedBytes));
  }
  budget.charge_inflated(h.uncompressed, where);
  // Version 1 records no total size: the stream's own end is the bundle's
  // end (clang's reader scans for the next magic instead).
  const std::uint64_t end = h.total.value_or(bytes.size());
  // The table is read as the payload decompresses. A defect in it is kept
  // until the stream has been checked, so that a bundle broken twice is
  // refused for its stream first, as when the payload was read whole.
  const Where inner{where.name, where.bundle + ", decompressed,"};
  EntryTableReader table(h.uncompressed, inner, budget);
  std::exception_ptr table_error;
  const Sink sink = [&](std::span<const std::byte> out) {
    if (table_error || table.done()) return;
    try {
      table.feed(out);
    } catch (const Error&) {
      table_error = std::current_exception();
    }
  };
  std::uint64_t consumed = 0;
  decompress_payload(bytes.subspan(h.header_bytes, end - h.header_bytes), h, where, consumed, sink);
  if (table_error) std::rethrow_exception(table_error);
  Parsed p = table.finish();
  p.extent = h.total.value_or(h.header_bytes + consumed);
  return p;
}

std::uint64_t skip_zero_padding(std::span<const std::byte> section, std::uint64_t pos) {
  const auto it = std::find_if(section.begin() + static_cast<std::ptrdiff_t>(pos), section.end(),
                               [](std::byte b) { return b != std::byte{0}; });
  return static_cast<std::uint64_t>(it - section.begin());
}

[[noreturn]] void fail_not_a_bundle(std::span<const std::byte> rest, std::uint64_t pos, std::string_view name) {
  const auto is_prefix_of = [rest](std::string_view magic) {
    return rest.size() < magic.size() && std::memcmp(rest.data(), magic.data(), rest.size()) == 0;
  };
  const std::string what = is_prefix_of(kBundleMagic) || is_prefix_of(kCompressedMagic)
                               ? "ends inside an offload bundle's magic"
                               : "is neither zero padding nor an offload bundle";
  throw Error(ErrorKind::input, std::string(name) + ": the offload bundle data at offset " + hex_offset(pos) + " " + what + kFix);
}

}  // namespace

ByteBudget& offload_decode_budget() {
  static ByteBudget budget(kOffloadDecodeBudgetBytes);
  return budget;
}

bool has_offload_bundle_magic(std::span<const std::byte> head) {
  return starts_with(head, kBundleMagic) || starts_with(head, kCompressedMagic);
}

std::vector<OffloadBundle> parse_offload_bundles(std::span<const std::byte> section, std::string_view name) {
  std::vector<OffloadBundle> bundles;
  Budget budget(section.size());
  for (std::uint64_t pos = skip_zero_padding(section, 0); pos < section.size();
       pos = skip_zero_padding(section, pos)) {
    const auto rest = section.subspan(pos);
    const Where where{name, "offload bundle at offset " + hex_offset(pos)};
    OffloadBundle bundle;
    Parsed p;
    if (starts_with(rest, kBundleMagic)) {
      p = parse_uncompressed(rest, where, budget);
    } else if (starts_with(rest, kCompressedMagic)) {
      bundle.compressed = true;
      p = parse_compressed(rest, where, budget);
    } else {
      fail_not_a_bundle(rest, pos, name);
    }
    bundle.targets = std::move(p.targets);
    bundles.push_back(std::move(bundle));
    pos += p.extent;  // never 0: at least a header
  }
  return bundles;
}

std::vector<std::string> gfx_targets(const std::vector<OffloadBundle>& bundles) {
  std::set<std::string> processors;
  for (const OffloadBundle& b : bundles) {
    for (const OffloadTarget& t : b.targets) {
      if (t.kind != "host" && !t.processor.empty()) processors.insert(t.processor);
    }
  }
  return {processors.begin(), processors.end()};
}

}  // namespace kwheel
