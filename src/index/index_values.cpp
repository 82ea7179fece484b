// What an index may put into the files `kwheel pin` writes, held to what
// each value must be.
#include "kwheel/index/index_values.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/validate/compat.hpp"

namespace kwheel {

namespace {

bool ascii_alnum(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool ascii_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool one_of(char c, std::string_view set) { return set.find(c) != std::string_view::npos; }

// A byte no distribution's file name holds (the bytes of a wheel filename:
// letters, digits and . _ - + !).
bool has_foreign_byte(std::string_view name) {
  return std::any_of(name.begin(), name.end(), [](char c) { return !ascii_alnum(c) && !one_of(c, "._-+!"); });
}

// What pip reads as one line, whatever encoding it decodes the file with:
// printable ASCII (a UTF-8 character may hold the byte 0x85, which is NEL,
// a line end, to a Latin-1 reader).
bool is_printable_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

std::optional<std::string> wheel_name_problem(const IndexFile& f, const std::string& project, const std::string& on) {
  WheelFilename w;
  try {
    w = parse_wheel_filename(f.filename, VariantLabels::accept);
  } catch (const Error& e) {
    return on + " a file that is not a wheel of " + project + ": " + e.what();
  }
  if (normalize_name(w.name) != project)
    return on + " '" + f.filename + "', a wheel of the project " + normalize_name(w.name) + ", not of " + project;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> listed_file_problem(const IndexFile& f, const std::string& project, const std::string& where) {
  // An sdist or a variants.json is never a candidate, and nothing of it is written.
  if (!f.filename.ends_with(".whl") && !has_foreign_byte(f.filename)) return std::nullopt;
  const std::string on = "the index page " + where + " lists";
  if (auto problem = wheel_name_problem(f, project, on)) return problem;
  const std::string of = " for " + printable(f.filename);
  if (!f.sha256.empty() && !is_sha256_hex(f.sha256))
    return "the index page " + where + " gives the sha256 '" + printable(f.sha256) + "'" + of + ", which is not 64 hex digits";
  if (f.metadata_sha256 && !f.metadata_sha256->empty() && !is_sha256_hex(*f.metadata_sha256))
    return "the index page " + where + " gives the PEP 658 metadata sha256 '" + printable(*f.metadata_sha256) + "'" + of + ", which is not 64 hex digits";
  // A URL goes into pylock.toml and --json as it is: one line of UTF-8.
  if (unprintable_at(f.url) != std::string::npos)
    return on + " " + printable(f.filename) + " at a URL with a control byte or a byte that is not UTF-8 ('" + printable(f.url) + "')";
  if (f.size && *f.size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return "the index page " + where + " gives a size of " + std::to_string(*f.size) + " bytes" + of + ", more than any file has";
  return std::nullopt;
}

void refuse_unsound_files(std::vector<IndexFile>& files, const std::string& project, const std::string& where, std::vector<PinCandidate>& refused) {
  std::vector<IndexFile> sound;
  for (auto& f : files) {
    auto problem = listed_file_problem(f, project, where);
    if (!problem) {
      sound.push_back(std::move(f));
      continue;
    }
    PinCandidate c;
    c.file = f;
    // Shown in messages and --json: escaped, so that neither can break.
    c.file.filename = printable(f.filename);
    c.file.url = printable(f.url);
    c.file.sha256 = printable(f.sha256);
    if (!f.version.empty()) c.label = read_label(f.version);
    c.problem = std::move(problem);
    refused.push_back(std::move(c));
  }
  files = std::move(sound);
}

bool is_pin_version(std::string_view version) {
  if (version.empty() || has_foreign_byte(version)) return false;
  return Version::try_parse(version).has_value();
}

bool is_plain_marker(std::string_view marker) {
  if (marker.empty() || marker.front() == ' ' || marker.back() == ' ') return false;
  char quote = 0;
  for (char c : marker) {
    if (quote) {
      if (c == quote) quote = 0;
      else if (!ascii_alnum(c) && !one_of(c, "._-+!*")) return false;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (!ascii_alpha(c) && !one_of(c, "_ ()<>=!~")) {
      return false;
    }
  }
  return quote == 0;
}

bool is_pinned_requirement(std::string_view line) {
  constexpr std::string_view kHash = " --hash=sha256:";
  const size_t eq = line.find("==");
  if (eq == std::string_view::npos || !is_valid_name(line.substr(0, eq))) return false;
  const std::string_view rest = line.substr(eq + 2);
  const size_t hashes = rest.find(kHash);
  if (hashes == std::string_view::npos) return false;
  const std::string_view head = rest.substr(0, hashes);
  const size_t semi = head.find(" ; ");
  if (!is_pin_version(head.substr(0, semi))) return false;
  if (semi != std::string_view::npos && !is_plain_marker(head.substr(semi + 3))) return false;
  for (std::string_view tail = rest.substr(hashes); !tail.empty(); tail.remove_prefix(kHash.size() + 64))
    if (!tail.starts_with(kHash) || tail.size() < kHash.size() + 64 || !is_sha256_hex(tail.substr(kHash.size(), 64))) return false;
  return true;
}

std::string requirements_comment(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "# ";
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out + "\n";
}

namespace {

// "--index-url URL" or "--extra-index-url URL", the URL one word of
// printable ASCII.
bool is_index_option(std::string_view line) {
  for (std::string_view option : {"--index-url ", "--extra-index-url "}) {
    if (!line.starts_with(option)) continue;
    const std::string_view url = line.substr(option.size());
    return !url.empty() && std::all_of(url.begin(), url.end(), [](char c) { return c > 0x20 && c < 0x7f; });
  }
  return false;
}

}  // namespace

void check_requirements_text(std::string_view text, const std::vector<std::string>& options, const std::string& what) {
  const auto refuse = [&](std::string_view line, const std::string& why) {
    return Error(ErrorKind::input, what + " would hold the line '" + printable(line) + "', " + why + "; nothing is written");
  };
  if (!text.empty() && text.back() != '\n') throw refuse(text.substr(text.rfind('\n') + 1), "which does not end in a newline");
  const std::vector<std::string> lines = split(text, '\n');
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.starts_with("#")) {
      if (!is_printable_ascii(line)) throw refuse(line, "a comment with a byte pip might read as a line end");
    } else if (line.starts_with("-")) {
      if (std::find(options.begin(), options.end(), line) == options.end())
        throw refuse(line, "an option kwheel did not choose");
      if (!is_index_option(line))
        throw refuse(line, "whose index URL holds a space or a control byte, which requirements.txt cannot hold; percent-encode it");
    } else if (!is_pinned_requirement(line)) {
      throw refuse(line, "which is neither a comment, the index line kwheel chose, nor a pinned requirement (NAME==VERSION --hash=sha256:HEX)");
    }
  }
}

}  // namespace kwheel
