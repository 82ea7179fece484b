#pragma once
// Reading wheels we may not have written (validate, publish, index, pin):
// the archive is untrusted, so member sizes are bounded and RECORD is
// checked against the bytes actually present.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/packaging/wheel_filename.hpp"

struct zip;

namespace kwheel {

// Core metadata headers: name -> values, in file order (Requires-Dist repeats).
using MetadataFields = std::multimap<std::string, std::string>;
// Parses RFC 822-style METADATA (continuation lines folded); the body, if
// any, is returned under the pseudo-field "Description".
MetadataFields parse_metadata_fields(const std::string& text);
// The Hub revision (repo id, commit) kwheel recorded in METADATA (its
// "Hub revision" Project-URL), if any.
std::optional<std::pair<std::string, std::string>> recorded_revision(const MetadataFields& fields);

// What a wheel may inflate to (docs/wheel-naming.md, "Limits on wheels
// read"). A kernel wheel is a few hundred MB inflated and compresses 2-5x;
// deflate can reach 1032:1, and members that share bytes (David Fifield's
// overlapping zip bomb) multiply that without bound.
inline constexpr uint64_t kMaxWheelInflatedBytes = 8ull << 30;  // sum of declared sizes
inline constexpr uint64_t kMaxInflateRatio = 100;               // inflated : compressed
// Ratios are not judged below these sizes: small files (and small wheels)
// may compress extremely well, and they cost nothing to inflate.
inline constexpr uint64_t kRatioFloorMemberBytes = 1 << 20;
inline constexpr uint64_t kRatioFloorWheelBytes = 64 << 20;

// Where one member's bytes lie in the archive: from its local header to the
// end of its compressed data, as the central directory and the local header
// say.
struct ZipSpan {
  std::string name;  // raw, as the central directory has it
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t compressed = 0;
  uint64_t size = 0;  // declared inflated size
};
// Up to `n` bytes of the archive from `offset` (fewer at its end).
using ReadAt = std::function<std::string(uint64_t offset, size_t n)>;
// The members' spans in central directory order. Reads the end record, the
// central directory (at most 64 MiB) and one local header per member.
// Throws Error(input) naming `where` when the structure is unreadable.
std::vector<ZipSpan> read_zip_spans(uint64_t archive_size, const ReadAt& read_at, const std::string& where);
// Why these members must not be inflated (two share bytes, one inflates
// past kMaxInflateRatio, all together past kMaxWheelInflatedBytes or
// kMaxInflateRatio times the archive), or "".
std::string zip_bomb_reason(const std::vector<ZipSpan>& spans, uint64_t archive_size);

class WheelArchive {
 public:
  // Throws Error(input) if the file is not a readable zip or not a wheel,
  // if it is a zip bomb (zip_bomb_reason), or if its METADATA Name or
  // Version is not the filename's.
  explicit WheelArchive(const std::filesystem::path& path);
  // The same for a wheel held in memory; `name` stands for its path (the
  // filename gives the tags; messages quote it).
  WheelArchive(const std::filesystem::path& name, std::string bytes);
  ~WheelArchive();
  WheelArchive(const WheelArchive&) = delete;
  WheelArchive& operator=(const WheelArchive&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const WheelFilename& filename() const { return filename_; }
  const std::string& dist_info() const { return dist_info_; }  // "img2gray-0.1.0.dist-info"
  std::vector<std::string> members() const;
  // A member's declared inflated size (the central directory's), or
  // nullopt when there is no such member.
  std::optional<uint64_t> member_size(const std::string& member) const;
  // Reads a member whole; refuses members larger than max_bytes.
  std::string read(const std::string& member, uint64_t max_bytes = 16 << 20) const;
  // Streams a member into a file (bounded memory); refuses members larger
  // than max_bytes.
  void extract(const std::string& member, const std::filesystem::path& dest, uint64_t max_bytes = kMaxWheelInflatedBytes) const;
  // Whether the member's Unix mode (zip external attributes) has an
  // execute bit, as installers read it.
  bool executable(const std::string& member) const;
  const std::string& metadata_text() const { return metadata_; }
  const MetadataFields& metadata() const { return fields_; }
  std::string field(const std::string& name) const;  // first value or ""

  // Every mismatch between RECORD and the archive (missing rows, wrong
  // hashes or sizes, members RECORD does not list) and every member or row
  // whose path is unsafe to install (absolute, '..', backslashes, control
  // characters: repo_layout's unsafe_path_reason); empty when consistent.
  std::vector<std::string> verify_record() const;

 private:
  struct ZipClose {
    void operator()(zip* z) const noexcept;
  };
  struct Precheck {
    std::vector<ZipSpan> spans;
    std::optional<Error> unreadable;  // why read_zip_spans could not read it
  };
  // Refuses bombs (zip_bomb_reason) before libzip opens the archive.
  Precheck precheck(const ReadAt& read_at, uint64_t archive_size) const;
  void load(const Precheck& pre);  // what both constructors share, once libzip has it open
  void check_same_entries(const std::vector<ZipSpan>& spans) const;
  // Feeds a member to `sink` in chunks; never more than its declared size,
  // whatever its deflate stream holds. Throws Error(input).
  void stream(const std::string& member, uint64_t max_bytes, const std::function<void(std::string_view)>& sink) const;
  std::filesystem::path path_;
  WheelFilename filename_;
  std::string bytes_;  // the archive when opened from memory; outlives zip_
  std::unique_ptr<zip, ZipClose> zip_;
  std::string dist_info_;
  std::string metadata_;
  MetadataFields fields_;
};

}  // namespace kwheel
