#pragma once
// Small string helpers shared by the parsers of names, tags and labels.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/base/filter_streambuf.hpp"

namespace kwheel {

// Every field between separators, empty ones included: split("a..b", '.')
// is {"a", "", "b"}; split("", '.') is {""}.
std::vector<std::string> split(std::string_view text, char separator);

// The items with `separator` between them: join({"a", "b"}, ", ") is "a, b".
std::string join(const std::vector<std::string>& items, std::string_view separator);

// "0x1f40": how the binary readers name a file offset or a raw field in
// their errors.
std::string hex_offset(std::uint64_t value);

// ASCII case folding, whatever the locale: header names, hosts, project
// names and PEP 440 text are ASCII by their specs.
std::string ascii_lower(std::string_view text);

// `text` without leading and trailing ASCII whitespace (space, \t, \n, \v,
// \f, \r).
std::string trim(std::string_view text);

// The last non-empty line of `text` (without its line break): where a
// child process prints its one-line JSON report.
std::string last_line(std::string_view text);

// The last `lines` non-empty lines of `text`, trailing blanks trimmed,
// joined by " | ": a child's stderr quoted in a one-line error.
std::string last_lines(std::string_view text, size_t lines);

// URL percent-decoding (RFC 3986): "%2F" becomes "/"; a '%' not followed by
// two hex digits stays as it is.
std::string percent_decode(std::string_view text);

// `text` safe to print on one line and to put in JSON: control bytes
// (newline, NUL, ESC, DEL, the C1 controls) and bytes that are not valid UTF-8 become \xNN.
// Error messages quote names from repos, wheels and servers; a hostile name
// must not split the one-line error, drive the terminal, or make the
// --json encoder throw on invalid UTF-8.
std::string printable(std::string_view text);

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF), as Python's strict decoder wants it.
bool valid_utf8(std::string_view text);

// The length of the well-formed UTF-8 sequence at text[i] (i < size), or 0
// where it is not one: what valid_utf8 checks, one sequence at a time.
size_t utf8_length_at(std::string_view text, size_t i);

// Where printable() would first escape a byte of `text` (a C0 or C1
// control, DEL, or a byte that is not valid UTF-8), or npos: the rule for
// text that must go out as it is, such as a METADATA header value. Other
// Unicode passes, as packaging accepts it.
size_t unprintable_at(std::string_view text);

// A stream filter for what kwheel prints: control bytes other than newline
// and tab (ESC, CR, BEL, DEL, and the C1 controls U+0080..U+009F, which some
// terminals obey as CSI) become \xNN, whatever the caller forgot to pass
// through printable(). A name from an ELF file or a zip member cannot move
// the cursor, retitle the window or hide a line. JSON is unaffected: its
// encoder escapes control characters itself.
class ControlEscapingStreambuf : public FilterStreambuf {
 public:
  explicit ControlEscapingStreambuf(std::streambuf* target);
};

}  // namespace kwheel
