#pragma once
// Writes a wheel archive with libzip, reproducibly: members in sorted order
// with .dist-info last, normalised permissions, one fixed timestamp, no
// extra fields. Each member is read once, in 1 MiB chunks: hashed for RECORD
// and CRC'd as it is read, and each chunk deflated by libdeflate on a
// worker of a DeflatePool (kwheel/wheel/deflate_pool.hpp) from that same
// buffer; libzip gets the compressed pieces in order and writes them as they
// are. RECORD is produced after the last member was read.
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kwheel/packaging/record.hpp"

namespace kwheel {

class DeflatePool;

struct WheelMember {
  std::string archive_path;         // "img2gray/__init__.py"
  std::filesystem::path source;     // file on disk, read at write time
  std::optional<uint64_t> size;     // expected size; checked while reading
  bool executable = false;          // mode 0755 (also for .so), else 0644
};

struct WheelContents {
  std::string dist_info;            // "img2gray-1.0+torch2.7.cu126.dist-info"
  std::vector<WheelMember> members;
  std::string metadata;             // METADATA text
  std::string wheel;                // WHEEL text
  // Files of the .dist-info written from memory, by their name inside it
  // ("hub_kernel.json"): after the members, before METADATA, each listed in
  // RECORD. Members may hold .dist-info files too (a variant.json read from
  // disk); a name may be given once, by one of the two.
  std::vector<std::pair<std::string, std::string>> dist_info_texts;
};

struct WriteOptions {
  int compression_level = 6;              // deflate level 1..9 (libdeflate); 0 stores
  std::optional<std::time_t> source_date_epoch;  // default 1980-01-01T00:00:00
  // The run's deflate workers, shared by every wheel written at once; null:
  // the writer makes one of one worker for this wheel. Not part of the
  // bytes: any pool gives the same archive.
  DeflatePool* pool = nullptr;
  // Hash the finished .whl into WrittenWheel::sha256 (else left empty). It
  // cannot overlap the packing: the hash begins with the first member's
  // local header, whose CRC and sizes are known only after its last chunk.
  // So a 390 MB wheel's hash is 0.35 s after everything else, on one core;
  // a caller that reports no digest should not pay it.
  bool digest = true;
};

struct WrittenWheel {
  std::filesystem::path path;
  std::string sha256;   // hex, of the .whl file; empty unless WriteOptions::digest
  uint64_t size = 0;
  std::vector<RecordEntry> record;
};

// A wheel written under a temp name beside `out`, not yet visible. Several
// can be staged and committed together, so a build that fails half-way
// leaves the output directory as it was.
class TempPath;
struct StagedWheel {
  std::unique_ptr<TempPath> temp;
  WrittenWheel info;
  StagedWheel();
  StagedWheel(StagedWheel&&) noexcept;
  StagedWheel& operator=(StagedWheel&&) noexcept;
  ~StagedWheel();  // removes the temp file unless committed
  void commit();   // renames to info.path
};

// Throws Error(input|io) naming the wheel and the member at fault. Members
// are sorted here, callers need not.
StagedWheel stage_wheel(const WheelContents& contents, const std::filesystem::path& out, const WriteOptions& options);
// stage_wheel + commit.
WrittenWheel write_wheel(const WheelContents& contents, const std::filesystem::path& out, const WriteOptions& options);

// SOURCE_DATE_EPOCH from the environment, if set and valid; throws
// Error(usage) for a malformed value rather than silently ignoring it.
std::optional<std::time_t> source_date_epoch_from_env();

}  // namespace kwheel
