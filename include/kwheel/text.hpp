#pragma once
// Small string helpers shared by the parsers of names, tags and labels.
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

// Every field between separators, empty ones included: split("a..b", '.')
// is {"a", "", "b"}; split("", '.') is {""}.
std::vector<std::string> split(std::string_view text, char separator);

// The items with `separator` between them: join({"a", "b"}, ", ") is "a, b".
std::string join(const std::vector<std::string>& items, std::string_view separator);

// URL percent-decoding (RFC 3986): "%2F" becomes "/"; a '%' not followed by
// two hex digits stays as it is.
std::string percent_decode(std::string_view text);

// `text` safe to print on one line and to put in JSON: control bytes
// (newline, NUL, ESC, DEL) and bytes that are not valid UTF-8 become \xNN.
// Error messages quote names from repos, wheels and servers; a hostile name
// must not split the one-line error, drive the terminal, or make the
// --json encoder throw on invalid UTF-8.
std::string printable(std::string_view text);

}  // namespace kwheel
