// The reader is iterative (an explicit stack of open containers), so
// nesting costs memory, not native stack; the events' handler bounds it.
// Strings are copied in runs between the bytes that need a look (a quote,
// a backslash, a control byte, a byte above 0x7f), not byte by byte.
#include "kwheel/base/json_events.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "kwheel/base/text.hpp"

namespace kwheel {
namespace {

class Reader {
 public:
  Reader(std::string_view text, JsonEvents& events) : t_(text), ev_(events) {}
  bool run();

 private:
  char peek() const { return pos_ < t_.size() ? t_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= t_.size(); }
  void whitespace() {
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r')) ++pos_;
  }
  bool value();   // a scalar, or the opening of a container (pushed)
  bool key();     // "name" then ':'
  bool string(std::string& out);
  bool escape(std::string& out);
  bool hex4(uint32_t& cp);
  bool literal(std::string_view word);
  bool number();

  std::string_view t_;
  JsonEvents& ev_;
  size_t pos_ = 0;
  std::vector<char> open_;  // '{' or '[' for each container not yet closed
  std::string buffer_;
};

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

bool Reader::hex4(uint32_t& cp) {
  if (t_.size() - pos_ < 4) return false;
  cp = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = t_[pos_++];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return false;
    cp = cp << 4 | static_cast<uint32_t>(d);
  }
  return true;
}

// After a backslash. A surrogate must come as a pair, as nlohmann wants.
bool Reader::escape(std::string& out) {
  if (at_end()) return false;
  switch (t_[pos_++]) {
    case '"': out += '"'; return true;
    case '\\': out += '\\'; return true;
    case '/': out += '/'; return true;
    case 'b': out += '\b'; return true;
    case 'f': out += '\f'; return true;
    case 'n': out += '\n'; return true;
    case 'r': out += '\r'; return true;
    case 't': out += '\t'; return true;
    case 'u': break;
    default: return false;
  }
  uint32_t cp = 0;
  if (!hex4(cp)) return false;
  if (cp >= 0xdc00 && cp <= 0xdfff) return false;
  if (cp >= 0xd800 && cp <= 0xdbff) {
    uint32_t low = 0;
    if (t_.substr(pos_, 2) != "\\u") return false;
    pos_ += 2;
    if (!hex4(low) || low < 0xdc00 || low > 0xdfff) return false;
    cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
  }
  append_utf8(out, cp);
  return true;
}

bool Reader::string(std::string& out) {
  ++pos_;  // the opening quote
  out.clear();
  while (true) {
    const size_t start = pos_;
    while (pos_ < t_.size()) {
      const auto c = static_cast<unsigned char>(t_[pos_]);
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
      ++pos_;
    }
    out.append(t_.substr(start, pos_ - start));
    if (at_end()) return false;
    const auto c = static_cast<unsigned char>(t_[pos_]);
    if (c == '"') {
      ++pos_;
      return true;
    }
    if (c < 0x20) return false;  // a control byte must be escaped
    if (c == '\\') {
      ++pos_;
      if (!escape(out)) return false;
      continue;
    }
    const size_t n = utf8_length_at(t_, pos_);  // well-formed UTF-8 only
    if (n == 0) return false;
    out.append(t_.substr(pos_, n));
    pos_ += n;
  }
}

bool Reader::literal(std::string_view word) {
  if (t_.substr(pos_, word.size()) != word) return false;
  pos_ += word.size();
  return true;
}

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, typed as nlohmann types it:
// an integer that fits is unsigned (or, with '-', signed); any other is a
// double, refused when it is not finite ("1e400").
bool Reader::number() {
  const size_t start = pos_;
  const auto digits = [&] {
    const size_t from = pos_;
    while (pos_ < t_.size() && t_[pos_] >= '0' && t_[pos_] <= '9') ++pos_;
    return pos_ > from;
  };
  const bool negative = peek() == '-';
  if (negative) ++pos_;
  if (peek() == '0') ++pos_;
  else if (!digits()) return false;
  bool integer = true;
  if (peek() == '.') {
    ++pos_;
    if (!digits()) return false;
    integer = false;
  }
  if (peek() == 'e' || peek() == 'E') {
    ++pos_;
    if (peek() == '+' || peek() == '-') ++pos_;
    if (!digits()) return false;
    integer = false;
  }
  const std::string_view text = t_.substr(start, pos_ - start);
  if (integer && !negative) {
    uint64_t n = 0;
    if (std::from_chars(text.data(), text.data() + text.size(), n).ec == std::errc()) return ev_.number_unsigned(n);
  } else if (integer) {
    int64_t n = 0;
    if (std::from_chars(text.data(), text.data() + text.size(), n).ec == std::errc()) return ev_.number_integer(n);
  }
  const double d = std::strtod(std::string(text).c_str(), nullptr);
  return std::isfinite(d) && ev_.number_float(d, text);
}

bool Reader::value() {
  switch (peek()) {
    case '{':
      ++pos_;
      open_.push_back('{');
      return ev_.start_object();
    case '[':
      ++pos_;
      open_.push_back('[');
      return ev_.start_array();
    case '"': return string(buffer_) && ev_.string(buffer_);
    case 't': return literal("true") && ev_.boolean(true);
    case 'f': return literal("false") && ev_.boolean(false);
    case 'n': return literal("null") && ev_.null();
    default: return (peek() == '-' || (peek() >= '0' && peek() <= '9')) && number();
  }
}

bool Reader::key() {
  whitespace();
  if (peek() != '"' || !string(buffer_) || !ev_.key(buffer_)) return false;
  whitespace();
  if (peek() != ':') return false;
  ++pos_;
  return true;
}

bool Reader::run() {
  if (t_.starts_with("\xef\xbb\xbf")) pos_ = 3;
  whitespace();
  size_t depth = 0;
  if (!value()) return false;
  while (true) {
    // Just opened (the stack grew) or after a member: a close, or a comma
    // (not right after the opening) and the next member.
    const bool opened = open_.size() > depth;
    depth = open_.size();
    whitespace();
    if (open_.empty()) return at_end();
    const char closing = open_.back() == '{' ? '}' : ']';
    if (peek() == closing) {
      ++pos_;
      open_.pop_back();
      depth = open_.size();
      if (!(closing == '}' ? ev_.end_object() : ev_.end_array())) return false;
      continue;
    }
    if (!opened) {
      if (peek() != ',') return false;
      ++pos_;
    }
    if (open_.back() == '{' && !key()) return false;
    whitespace();
    if (!value()) return false;
  }
}

}  // namespace

bool read_json_events(std::string_view text, JsonEvents& events) { return Reader(text, events).run(); }

}  // namespace kwheel
