#pragma once
// The payload decoders of a compressed offload bundle (offload_compressed.hpp),
// inside the reader (namespace kwheel::offload): one zlib stream or one zstd
// frame, streamed through one fixed chunk into a sink, stopped one byte past
// the size the container declares, and (zstd) held to the memory reserved
// for it. They report how the stream ended; the container says what that
// means for the bundle.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace kwheel::offload {

// Decompressed bytes pass through one buffer of this size on their way to
// the entry-table reader; only the table is kept, never the payload.
inline constexpr std::size_t kOutputChunkBytes = 128 * 1024;
// zlib's inflate state (about 7 KiB) and its 32 KiB window.
inline constexpr std::uint64_t kZlibStateBytes = 48 * 1024;
// zstd frames are decoded with windows up to 2^27 (zstd's default cap, and
// more than LLVM's long-distance-matching writer uses).
inline constexpr int kZstdWindowLogMax = 27;

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

// The zlib stream at the start of `in`, decompressed into `sink` until it
// ends or passes `limit` bytes (then StreamEnd::overlong).
Decompressed inflate_zlib(std::span<const std::byte> in, std::uint64_t limit, const Sink& sink);

// The zstd frame at the start of `in`, as inflate_zlib, its decoder
// allocating at most `heap_limit` bytes (past them: StreamEnd::over_reservation).
Decompressed decompress_zstd(std::span<const std::byte> in, std::uint64_t limit, std::uint64_t heap_limit, const Sink& sink);

// What decoding the zstd frame at the start of `frame` may hold: zstd's own
// estimate from the frame's header (its context, one block in, the window
// out), never more than a frame with the largest window kwheel decodes. A
// header it cannot read, or a window over the cap, is refused by the
// decoder before it allocates.
std::uint64_t zstd_decoder_bytes(std::span<const std::byte> frame);

// The content size the zstd frame at the start of `frame` records; none
// when it records none or its header cannot be read (the decoder says why).
std::optional<std::uint64_t> zstd_content_size(std::span<const std::byte> frame);

}  // namespace kwheel::offload
