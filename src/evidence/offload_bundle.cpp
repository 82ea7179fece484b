#include "kwheel/evidence/offload_bundle.hpp"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <set>

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

// One bundle's bytes, little-endian, with its "is cut off" error: every
// read is checked, so no offset or length from the input is used unchecked.
class Fields : public ByteReader {
 public:
  Fields(std::span<const std::byte> bytes, const Where& where)
      : ByteReader(bytes, ByteOrder::little, cut_off(where, bytes.size())) {}

  std::string text(std::uint64_t off, std::uint64_t len, const std::string& what) const {
    const auto chars = range(off, len, what);
    return std::string(reinterpret_cast<const char*>(chars.data()), chars.size());
  }

  void check(std::uint64_t off, std::uint64_t len, const std::string& what) const { range(off, len, what); }

 private:
  // `where` outlives the reader: both live for one bundle's parse.
  static Refusal cut_off(const Where& where, std::uint64_t size) {
    return [&where, size](std::uint64_t off, std::uint64_t len, std::string_view what) {
      where.fail("is cut off: " + std::string(what) + " (" + std::to_string(len) + " bytes at " + hex_offset(off) +
                 ") runs past the " + std::to_string(size) + " bytes there are");
    };
  }
};

// Strings copied out are capped relative to the input, as in elf.cpp: a
// compressed bundle can expand to many entries from a few bytes. So is
// the section's decompressed total: each bundle's own cap (1 GiB) would
// otherwise let many small zlib bundles cost minutes of inflating.
class Budget {
 public:
  explicit Budget(std::uint64_t input_bytes)
      : left_(64ull * 1024 * 1024 + 4 * input_bytes), inflate_left_(kMaxInflatedBytes + 64 * input_bytes) {}
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

struct EntryTable {
  std::vector<RawEntry> entries;
  std::uint64_t end = 0;  // where the table ends and code objects may start
};

EntryTable read_entry_table(const Fields& f, const Where& where, Budget& budget) {
  const auto count = f.get<std::uint64_t>(kBundleMagic.size(), "the entry count");
  const std::uint64_t room = (f.size() - kBundleHeaderBytes) / kEntryFieldBytes;
  if (count > room) {
    where.fail("declares " + std::to_string(count) + " entries, but the " + std::to_string(f.size()) +
               " bytes there are hold at most " + std::to_string(room));
  }
  EntryTable table;
  std::uint64_t pos = kBundleHeaderBytes;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string what = "entry " + std::to_string(i);
    RawEntry e;
    e.offset = f.get<std::uint64_t>(pos, what + "'s offset");
    e.size = f.get<std::uint64_t>(pos + 8, what + "'s size");
    const auto id_len = f.get<std::uint64_t>(pos + 16, what + "'s id length");
    if (id_len > kMaxEntryIdBytes) {
      where.fail("says " + what + "'s id is " + std::to_string(id_len) + " bytes long; real ids are under " +
                 std::to_string(kMaxEntryIdBytes));
    }
    budget.charge(sizeof(OffloadTarget) + 2 * id_len, where);
    e.id = f.text(pos + kEntryFieldBytes, id_len, what + "'s id");
    pos += kEntryFieldBytes + id_len;
    table.entries.push_back(std::move(e));
  }
  table.end = pos;
  return table;
}

// `bytes` runs from the magic to the end of what holds the bundle (the
// section, or a decompressed payload); entry offsets count from the magic.
Parsed parse_uncompressed(std::span<const std::byte> bytes, const Where& where, Budget& budget) {
  const Fields f(bytes, where);
  EntryTable table = read_entry_table(f, where, budget);
  Parsed p;
  p.extent = table.end;
  for (std::uint64_t i = 0; i < table.entries.size(); ++i) {
    RawEntry& e = table.entries[i];
    const std::string what = "entry " + std::to_string(i) + " ('" + e.id + "')";
    f.check(e.offset, e.size, what + "'s code object");
    if (e.size > 0 && e.offset < table.end) {
      where.fail("places " + what + "'s code object at " + hex_offset(e.offset) + ", inside its entry table (which ends at " +
                 hex_offset(table.end) + ")");
    }
    p.extent = std::max(p.extent, e.offset + e.size);
    p.targets.push_back(parse_entry_id(std::move(e.id), e.size, i, where));
  }
  return p;
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

enum class StreamEnd { complete, truncated, corrupt, overlong };

// What decompressing one bundle's payload gave, zlib's or zstd's alike.
struct Decompressed {
  std::vector<std::byte> data;
  std::uint64_t consumed = 0;  // compressed bytes up to the stream's end
  StreamEnd end = StreamEnd::corrupt;
  std::string message;  // the library's, for a corrupt stream
};

// Output grows with what the stream yields, never with what a header
// claims, so a lying header cannot make kwheel allocate; past `limit`
// bytes the stream is overlong.
void grow(std::vector<std::byte>& out, std::uint64_t filled, std::uint64_t limit) {
  out.resize(std::min<std::uint64_t>(limit + 1, std::max<std::uint64_t>(64 * 1024, 2 * filled)));
}

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

Decompressed inflate_zlib(std::span<const std::byte> in, std::uint64_t limit) {
  Decompressed r;
  Inflater inflater;
  z_stream& z = inflater.z;
  std::uint64_t fed = 0;
  for (;;) {
    if (z.avail_in == 0 && fed < in.size()) {
      const auto n = std::min<std::uint64_t>(in.size() - fed, std::numeric_limits<uInt>::max());
      z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + fed));
      z.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    if (z.avail_out == 0) {
      const std::uint64_t have = r.data.size();
      if (have > limit) {
        r.end = StreamEnd::overlong;
        break;
      }
      grow(r.data, have, limit);
      z.next_out = reinterpret_cast<Bytef*>(r.data.data() + have);
      z.avail_out = static_cast<uInt>(r.data.size() - have);
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
  r.data.resize(z.total_out);
  r.consumed = fed - z.avail_in;
  return r;
}

struct FreeDctx {
  void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};

// zstd's decoding buffer is the smaller of the frame's window and its
// declared content size. The window stays at zstd's default cap (2^27,
// which LLVM's long-distance-matching writer never exceeds), so a frame
// that records no content size still costs at most that much.
Decompressed decompress_zstd(std::span<const std::byte> in, std::uint64_t limit) {
  const std::unique_ptr<ZSTD_DCtx, FreeDctx> dctx(ZSTD_createDCtx());
  if (!dctx) throw std::bad_alloc();
  Decompressed r;
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  ZSTD_outBuffer dst{nullptr, 0, 0};
  for (;;) {
    if (dst.pos == dst.size) {
      if (dst.pos > limit) {
        r.end = StreamEnd::overlong;
        break;
      }
      grow(r.data, dst.pos, limit);
      dst.dst = r.data.data();
      dst.size = r.data.size();
    }
    const std::size_t src_before = src.pos, dst_before = dst.pos;
    const std::size_t ret = ZSTD_decompressStream(dctx.get(), &dst, &src);
    if (ZSTD_isError(ret)) {
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
  r.data.resize(dst.pos);
  r.consumed = src.pos;
  return r;
}

struct Method {
  const char* stream;  // "zlib stream"
  const char* library;
  Decompressed (*run)(std::span<const std::byte>, std::uint64_t);
};

constexpr Method kZlib{"zlib stream", "zlib", inflate_zlib};
constexpr Method kZstd{"zstd frame", "zstd", decompress_zstd};

// A zstd frame records its content size (clang's writer always does): one
// that disagrees with the container's is refused before decoding.
void check_zstd_content_size(std::span<const std::byte> frame, const CompressedHeader& h, const Where& where) {
  const unsigned long long n = ZSTD_getFrameContentSize(frame.data(), frame.size());
  // An unreadable header is left to the decoder, which says why.
  if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN || n == h.uncompressed) return;
  where.fail("holds a zstd frame of " + std::to_string(n) + " bytes, but its header declares " +
             std::to_string(h.uncompressed));
}

std::vector<std::byte> decompress_payload(std::span<const std::byte> stream, const CompressedHeader& h,
                                          const Where& where, std::uint64_t& consumed) {
  const Method& m = h.method == kMethodZstd ? kZstd : kZlib;
  if (h.method == kMethodZstd) check_zstd_content_size(stream, h, where);
  Decompressed z = m.run(stream, h.uncompressed);
  const std::string declared = std::to_string(h.uncompressed);
  switch (z.end) {
    case StreamEnd::truncated: where.fail(std::string("is cut off inside its ") + m.stream);
    case StreamEnd::corrupt: where.fail(std::string("holds a corrupt ") + m.stream + " (" + m.library + ": " + z.message + ")");
    case StreamEnd::overlong: where.fail("decompresses to more than the " + declared + " bytes its header declares");
    case StreamEnd::complete: break;
  }
  if (z.data.size() != h.uncompressed) {
    where.fail("decompresses to " + std::to_string(z.data.size()) + " bytes, but its header declares " + declared);
  }
  // LLVM reads zstd payloads with ZSTD_decompress, which refuses bytes
  // after the frame that are no frame (zlib's uncompress ignores them); a
  // version 1 container has no end of its own, so what follows it is the
  // rest of the section.
  if (h.method == kMethodZstd && h.total && z.consumed != stream.size()) {
    where.fail("holds " + std::to_string(stream.size() - z.consumed) +
               " bytes after its zstd frame, inside the total size its header declares");
  }
  consumed = z.consumed;
  return std::move(z.data);
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
  std::uint64_t consumed = 0;
  const std::vector<std::byte> payload =
      decompress_payload(bytes.subspan(h.header_bytes, end - h.header_bytes), h, where, consumed);
  const Where inner{where.name, where.bundle + ", decompressed,"};
  if (!starts_with(payload, kBundleMagic)) inner.fail("does not start with the __CLANG_OFFLOAD_BUNDLE__ magic");
  Parsed p = parse_uncompressed(payload, inner, budget);
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
