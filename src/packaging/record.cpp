#include "kwheel/packaging/record.hpp"

#include <charconv>

#include "kwheel/base/error.hpp"

namespace kwheel {

std::string csv_field(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string record_line(const RecordEntry& e) {
  return csv_field(e.path) + "," + csv_field(e.hash) + "," + (e.size ? std::to_string(*e.size) : std::string()) + "\n";
}

std::string format_record(const std::vector<RecordEntry>& entries) {
  std::string out;
  for (const auto& e : entries) out += record_line(e);
  return out;
}

std::vector<RecordEntry> parse_record(std::string_view text, std::string_view source) {
  auto fail = [&](size_t line, const std::string& why) {
    return Error(ErrorKind::input, std::string(source) + ": RECORD line " + std::to_string(line) + ": " + why);
  };
  std::vector<RecordEntry> rows;
  size_t i = 0, line = 1;
  while (i < text.size()) {
    std::vector<std::string> fields(1);
    bool quoted = false, end = false;
    while (i < text.size() && !end) {
      char c = text[i++];
      if (quoted) {
        if (c == '"') {
          if (i < text.size() && text[i] == '"') fields.back() += text[i++];
          else quoted = false;
        } else {
          fields.back() += c;
        }
      } else if (c == '"' && fields.back().empty()) {
        quoted = true;
      } else if (c == ',') {
        fields.emplace_back();
      } else if (c == '\n' || c == '\r') {
        if (c == '\r' && i < text.size() && text[i] == '\n') ++i;
        end = true;
      } else {
        fields.back() += c;
      }
    }
    if (quoted) throw fail(line, "unterminated quoted field");
    if (fields.size() == 1 && fields[0].empty()) {
      ++line;
      continue;  // blank line
    }
    if (fields.size() != 3) throw fail(line, "expected 3 fields, got " + std::to_string(fields.size()));
    RecordEntry e{fields[0], fields[1], std::nullopt};
    if (!fields[2].empty()) {
      uint64_t v = 0;
      auto [p, ec] = std::from_chars(fields[2].data(), fields[2].data() + fields[2].size(), v);
      if (ec != std::errc() || p != fields[2].data() + fields[2].size()) throw fail(line, "size '" + fields[2] + "' is not a number");
      e.size = v;
    }
    rows.push_back(std::move(e));
    ++line;
  }
  return rows;
}

}  // namespace kwheel
