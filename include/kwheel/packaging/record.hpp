#pragma once
// The wheel RECORD file: one CSV row per member, "path,sha256=<b64>,size",
// written exactly as Python's csv module (excel dialect, "\n" line ends)
// writes it, so that installers and `wheel unpack` re-derive the same bytes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

struct RecordEntry {
  std::string path;
  std::string hash;              // "sha256=<urlsafe b64, no padding>", empty for RECORD itself
  std::optional<uint64_t> size;  // empty for RECORD itself
  bool operator==(const RecordEntry&) const = default;
};

// csv.QUOTE_MINIMAL: quote when the field holds ',', '"', '\r' or '\n'; double quotes.
std::string csv_field(std::string_view field);
std::string record_line(const RecordEntry& entry);  // with trailing "\n"
std::string format_record(const std::vector<RecordEntry>& entries);

// Parses RECORD text back into rows (for reading wheels we did not write).
// Throws Error(input) naming `source` on malformed CSV.
std::vector<RecordEntry> parse_record(std::string_view text, std::string_view source);

}  // namespace kwheel
