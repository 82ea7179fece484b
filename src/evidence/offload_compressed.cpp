#include "kwheel/evidence/offload_compressed.hpp"

#include <exception>
#include <optional>
#include <stdexcept>

#include "kwheel/base/byte_budget.hpp"
#include "kwheel/base/byte_reader.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/offload_bundle.hpp"
#include "kwheel/evidence/offload_decompress.hpp"
#include "kwheel/evidence/offload_entry_table.hpp"

namespace kwheel::offload {
namespace {

// The method field stores llvm::compression::Format.
constexpr std::uint16_t kMethodZlib = 0;
constexpr std::uint16_t kMethodZstd = 1;

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

// A zstd frame records its content size (clang's writer always does): one
// that disagrees with the container's is refused before decoding.
void check_zstd_content_size(std::span<const std::byte> frame, const CompressedHeader& h, const Where& where) {
  // An unreadable header is left to the decoder, which says why.
  const auto n = zstd_content_size(frame);
  if (!n || *n == h.uncompressed) return;
  where.fail("holds a zstd frame of " + std::to_string(*n) + " bytes, but its header declares " +
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

}  // namespace

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

}  // namespace kwheel::offload
