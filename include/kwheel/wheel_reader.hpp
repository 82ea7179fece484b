#pragma once
// Reading wheels we may not have written (validate, publish, index, pin):
// the archive is untrusted, so member sizes are bounded and RECORD is
// checked against the bytes actually present.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kwheel/wheel_filename.hpp"

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

class WheelArchive {
 public:
  // Throws Error(input) if the file is not a readable zip or not a wheel.
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
  // Reads a member whole; refuses members larger than max_bytes.
  std::string read(const std::string& member, uint64_t max_bytes = 16 << 20) const;
  // Streams a member into a file (bounded memory, whatever its size).
  void extract(const std::string& member, const std::filesystem::path& dest) const;
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
  void load();  // the checks and reads both constructors share, once open
  std::filesystem::path path_;
  WheelFilename filename_;
  std::string bytes_;  // the archive when opened from memory; outlives zip_
  std::unique_ptr<zip, ZipClose> zip_;
  std::string dist_info_;
  std::string metadata_;
  MetadataFields fields_;
};

}  // namespace kwheel
