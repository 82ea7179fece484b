#include "kwheel/hub/netrc.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

// CPython's netrc._netrclex, character for character. `lineno` counts the
// newlines read through read_char() only, as Python's does: readline()
// (a comment's or a macro's rest) does not move it, and the parser's
// comment rule compares it before and after a token.
class Lexer {
 public:
  explicit Lexer(std::string text) : text_(std::move(text)) {}

  std::string get_token() {
    if (pushback_) {
      std::string t = std::move(*pushback_);
      pushback_.reset();
      token_start_ = pushback_start_;
      return t;
    }
    std::string token;
    for (int ch = read_char(); ch != kEnd; ch = read_char()) {
      if (space(ch)) continue;
      token_start_ = pos_ - 1;
      if (ch == '"') {
        // A quote opens a token only at its start, and its close ends it
        // (the next character is not read).
        for (ch = read_char(); ch != kEnd; ch = read_char()) {
          if (ch == '"') return token;
          append(token, ch == '\\' ? read_char() : ch);
        }
        return token;
      }
      append(token, ch == '\\' ? read_char() : ch);
      for (ch = read_char(); ch != kEnd; ch = read_char()) {
        if (space(ch)) return token;  // the whitespace that ends a token is read
        append(token, ch == '\\' ? read_char() : ch);
      }
      return token;
    }
    return token;
  }

  void push_token(std::string token) {
    pushback_ = std::move(token);
    pushback_start_ = token_start_;
  }

  // Python's fp.readline(): to the next newline, inclusive; "" at the end.
  std::string readline() {
    const size_t end = text_.find('\n', pos_);
    const size_t stop = end == std::string::npos ? text_.size() : end + 1;
    std::string line = text_.substr(pos_, stop - pos_);
    pos_ = stop;
    return line;
  }

  size_t lineno() const { return lineno_; }
  // The physical line of the last token's first character, for messages.
  size_t token_line() const { return 1 + std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(token_start_), '\n'); }

 private:
  static constexpr int kEnd = -1;
  static bool space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  static void append(std::string& token, int ch) {
    if (ch != kEnd) token += static_cast<char>(ch);
  }
  int read_char() {
    if (pos_ >= text_.size()) return kEnd;
    const char c = text_[pos_++];
    if (c == '\n') ++lineno_;
    return static_cast<unsigned char>(c);
  }

  std::string text_;
  size_t pos_ = 0;
  size_t lineno_ = 1;
  size_t token_start_ = 0;
  std::optional<std::string> pushback_;
  size_t pushback_start_ = 0;
};

// Python opens the file in text mode: "\r\n" and a lone "\r" are read as "\n".
std::string universal_newlines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') out += text[i];
    else {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    }
  }
  return out;
}

// CPython's netrc._parse: the same branches in the same order, each
// NetrcParseError an Error(input) that names the line and not the token.
class Parser {
 public:
  Parser(std::string_view text, const std::string& where) : lex_(universal_newlines(text)), where_(where) {}

  NetrcHosts parse() {
    for (;;) {
      const size_t saved = lex_.lineno();
      const std::string tt = lex_.get_token();
      if (tt.empty()) break;  // the end, or a quoted "" (Python stops there too)
      if (tt[0] == '#') {
        // Only a lone "#" read without crossing a newline skips its line.
        if (lex_.lineno() == saved && tt.size() == 1) lex_.readline();
        continue;
      }
      std::string name;
      if (tt == "machine") name = lex_.get_token();
      else if (tt == "default") name = "default";
      else if (tt == "macdef") {
        skip_macro();
        continue;
      } else {
        fail("a word that is not 'machine', 'default' or 'macdef' where an entry must start");
      }
      if (name.empty()) fail("'machine' is not followed by a host name");
      hosts_[name] = entry();
    }
    return std::move(hosts_);
  }

 private:
  NetrcHost entry() {
    NetrcHost e;
    std::string password;
    for (;;) {
      const size_t prev = lex_.lineno();
      std::string tt = lex_.get_token();
      if (tt.starts_with("#")) {
        // Any token starting with '#', but its line is skipped only when
        // no newline was read for it.
        if (lex_.lineno() == prev) lex_.readline();
        continue;
      }
      if (tt.empty() || tt == "machine" || tt == "default" || tt == "macdef") {
        lex_.push_token(std::move(tt));
        break;
      }
      if (tt == "login" || tt == "user") e.login = lex_.get_token();
      else if (tt == "account") e.account = lex_.get_token();
      else if (tt == "password") password = lex_.get_token();  // taken as it is: "#x" is a password
      else fail("a word other than 'login', 'account' or 'password' inside an entry");
    }
    e.password = Secret(std::move(password));
    return e;
  }

  // The macro's name, then lines to the first empty one; the rest of the
  // name's line counts as the first line.
  void skip_macro() {
    (void)lex_.get_token();
    for (;;) {
      const std::string l = lex_.readline();
      if (l.empty()) fail("a 'macdef' is not ended by an empty line");
      if (l == "\n") return;
    }
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw Error(ErrorKind::input, where_ + " line " + std::to_string(lex_.token_line()) + ": " + why);
  }

  Lexer lex_;
  std::string where_;
  NetrcHosts hosts_;
};

// os.path.expanduser: "~" and "~/..." from HOME (the password database
// when it is unset), "~name/..." from the password database; a name it
// does not know leaves the path as it is.
std::string expand_user(const std::string& path) {
  if (!path.starts_with("~")) return path;
  const size_t slash = std::min(path.find('/', 1), path.size());
  std::string home;
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  const char* home_variable = std::getenv("HOME");  // set but empty counts, as in Python
  if (slash == 1 && home_variable) home = home_variable;
  else if (slash == 1 ? getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found
                      : getpwnam_r(path.substr(1, slash - 1).c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found)
    home = pw.pw_dir;
  else
    return path;
  while (home.ends_with("/")) home.pop_back();
  const std::string out = home + path.substr(slash);
  return out.empty() ? "/" : out;
}

// Said once per file and process: pin reads the file for its index and
// again for the children it starts.
bool first_warning_for(const fs::path& path) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  const std::lock_guard<std::mutex> lock(mutex);
  return warned.insert(path.string()).second;
}

}  // namespace

NetrcHosts parse_netrc(std::string_view text, const std::string& where) {
  if (!valid_utf8(text)) throw Error(ErrorKind::input, where + ": not UTF-8, which Python's netrc cannot read");
  return Parser(text, where).parse();
}

std::optional<NetrcEntry> netrc_credentials(const NetrcHosts& hosts, const std::string& host) {
  auto it = hosts.find(host);
  if (it == hosts.end()) it = hosts.find("default");
  if (it == hosts.end()) return std::nullopt;
  const NetrcHost& e = it->second;
  // requests: `if _netrc and any(_netrc)`; an empty entry is no credentials
  // (and the default entry is not asked instead).
  if (e.login.empty() && e.account.empty() && e.password.empty()) return std::nullopt;
  return NetrcEntry{e.login.empty() ? e.account : e.login, e.password};
}

std::optional<NetrcEntry> netrc_lookup(const std::string& text, const std::string& host, const std::string& where) {
  return netrc_credentials(parse_netrc(text, where), host);
}

std::optional<fs::path> netrc_file() {
  // Set but empty names no file (requests then reads none, not ~/.netrc).
  if (const char* named = std::getenv("NETRC")) return fs::path(expand_user(named));
  for (const char* name : {"~/.netrc", "~/_netrc"}) {
    const fs::path p = expand_user(name);
    std::error_code ec;
    if (fs::exists(p, ec)) return p;
  }
  return std::nullopt;
}

std::optional<NetrcEntry> netrc_lookup_file(const fs::path& path, const std::string& host, const std::function<void(const std::string&)>& warn) {
  std::error_code ec;
  // requests skips a NETRC that names no file; so does pip at install time.
  if (!fs::exists(path, ec)) return std::nullopt;
  const std::string named = "netrc file '" + path.string() + "'";
  try {
    if (::access(path.c_str(), R_OK) != 0) throw Error(ErrorKind::io, named + " cannot be read");
    return netrc_lookup(read_small_file(path, 1 << 20, "netrc file"), host, named);
  } catch (const Error& e) {
    // requests' get_netrc_auth catches NetrcParseError and OSError and
    // goes on without the file: an open index still pins.
    if (warn && first_warning_for(path))
      warn(std::string(e.what()) + "; no credentials are taken from it, as pip takes none: fix it (man 5 netrc) or point NETRC at another file");
    return std::nullopt;
  }
}

}  // namespace kwheel
