#include "kwheel/hub/netrc.hpp"

#include <cstdlib>
#include <map>
#include <string_view>
#include <utility>

#include "kwheel/base/environment.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

// Python's netrc._netrclex: whitespace separates tokens, "..." quotes one,
// a backslash takes the next character as it is.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  // The next token; nullopt at the end. `comment` is set when the token
  // was an unquoted one starting with '#'.
  std::optional<std::string> next(bool& comment) {
    comment = false;
    while (pos_ < text_.size() && space(text_[pos_])) advance();
    if (pos_ >= text_.size()) return std::nullopt;
    line_of_token_ = line_;
    std::string token;
    if (text_[pos_] == '"') {
      advance();
      while (pos_ < text_.size() && text_[pos_] != '"') token += take_char();
      if (pos_ < text_.size()) advance();  // the closing quote
      return token;
    }
    comment = text_[pos_] == '#';
    while (pos_ < text_.size() && !space(text_[pos_])) token += take_char();
    return token;
  }

  void skip_line() {
    while (pos_ < text_.size() && text_[pos_] != '\n') advance();
  }

  // The rest of the current line, and the line after it; nullopt at the end.
  std::optional<std::string_view> read_line() {
    if (pos_ >= text_.size()) return std::nullopt;
    const size_t start = pos_;
    skip_line();
    if (pos_ < text_.size()) advance();
    return text_.substr(start, pos_ - start);
  }

  size_t line() const { return line_of_token_; }

 private:
  static bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  void advance() {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }
  char take_char() {
    if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) advance();
    const char c = text_[pos_];
    advance();
    return c;
  }

  std::string_view text_;
  size_t pos_ = 0;
  size_t line_ = 1;
  size_t line_of_token_ = 1;
};

struct Entry {
  std::string login, account, password;
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& where) : lex_(text), where_(where) {}

  std::map<std::string, Entry> entries() {
    std::map<std::string, Entry> hosts;
    while (auto token = next_token()) {
      std::string name;
      if (*token == "machine") name = required_value("machine");
      else if (*token == "default") name = "default";
      else if (*token == "macdef") {
        skip_macro();
        continue;
      } else {
        fail("a netrc entry starts with 'machine HOST', 'default' or 'macdef NAME'");
      }
      hosts[name] = entry_body();
    }
    return hosts;
  }

 private:
  std::optional<std::string> next_token() {
    if (pending_) return std::exchange(pending_, std::nullopt);
    bool comment = false;
    for (auto t = lex_.next(comment); t; t = lex_.next(comment)) {
      if (!comment) return t;
      lex_.skip_line();
    }
    return std::nullopt;
  }

  std::string required_value(const std::string& keyword) {
    auto v = next_token();
    if (!v || v->empty()) fail("'" + keyword + "' is not followed by its value");
    return *v;
  }

  Entry entry_body() {
    Entry e;
    while (auto t = next_token()) {
      if (*t == "machine" || *t == "default" || *t == "macdef") {
        pending_ = std::move(t);
        break;
      }
      if (*t == "login" || *t == "user") e.login = value_or_empty();
      else if (*t == "account") e.account = value_or_empty();
      else if (*t == "password") e.password = value_or_empty();
      else fail("expected login, account or password in an entry");
    }
    return e;
  }

  std::string value_or_empty() { return next_token().value_or(""); }

  // A macro runs to the first empty line; Python refuses one that does not end.
  void skip_macro() {
    required_value("macdef");
    lex_.skip_line();
    (void)lex_.read_line();
    for (;;) {
      auto line = lex_.read_line();
      if (!line) fail("a 'macdef' has no empty line after it");
      if (*line == "\n" || *line == "\r\n") return;
    }
  }

  [[noreturn]] void fail(const std::string& why) {
    throw Error(ErrorKind::input, where_ + " line " + std::to_string(lex_.line()) + ": " + why +
                                      "; fix the file (man 5 netrc), or point NETRC at another one");
  }

  Lexer lex_;
  std::string where_;
  std::optional<std::string> pending_;
};

}  // namespace

std::optional<fs::path> netrc_file() {
  if (auto named = env_value("NETRC")) return fs::path(*named);
  const fs::path home = env_value("HOME").value_or("/");
  for (const char* name : {".netrc", "_netrc"}) {
    std::error_code ec;
    if (fs::exists(home / name, ec)) return home / name;
  }
  return std::nullopt;
}

std::optional<NetrcEntry> netrc_lookup(const std::string& text, const std::string& host, const std::string& where) {
  const auto hosts = Parser(text, where).entries();
  auto it = hosts.find(host);
  if (it == hosts.end()) it = hosts.find("default");
  if (it == hosts.end()) return std::nullopt;
  const Entry& e = it->second;
  return NetrcEntry{e.login.empty() ? e.account : e.login, Secret(e.password)};
}

std::optional<NetrcEntry> netrc_lookup_file(const fs::path& path, const std::string& host) {
  std::error_code ec;
  // requests skips a NETRC that names no file; so does pip at install time.
  if (!fs::exists(path, ec)) return std::nullopt;
  const std::string text = read_small_file(path, 1 << 20, "netrc file", "point NETRC at a readable netrc file");
  return netrc_lookup(text, host, path.string());
}

}  // namespace kwheel
