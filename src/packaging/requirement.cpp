#include "kwheel/packaging/requirement.hpp"

#include <array>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/packaging/pep440.hpp"

namespace kwheel {

namespace {

// The marker variables packaging 26's tokenizer knows (its VARIABLE rule),
// the legacy dotted spellings included.
constexpr std::array<std::string_view, 20> kMarkerVariables = {
    "python_version",  "python_full_version", "os_name",          "os.name",
    "sys_platform",    "sys.platform",        "platform_release", "platform_system",
    "platform_version", "platform.version",   "platform_machine", "platform.machine",
    "platform_python_implementation", "platform.python_implementation", "python_implementation",
    "implementation_name", "implementation_version", "extra", "extras", "dependency_groups"};

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool word_char(char c) { return alnum(c) || c == '_' || c == '.'; }

// A cursor over the requirement, by packaging's grammar (_parser.py):
// WS is spaces and tabs, each rule a method.
class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  Requirement requirement() {
    Requirement r;
    ws();
    r.name = identifier("a requirement starts with a project name (a letter or digit)");
    ws();
    if (eat('[')) r.extras = extras();
    ws();
    if (peek() == '@')
      refuse("a direct URL (name @ URL) would have the installer fetch from wherever the wheel names, not from the indexes and directories it was given");
    if (eat('(')) {
      ws();
      if (peek() != ')') r.specifiers = specifiers();
      if (!eat(')')) fail("a '(' around the version specifiers is not closed");
    } else if (op_start(peek())) {
      r.specifiers = specifiers();
    }
    ws();
    if (eat(';')) {
      ws();
      const size_t start = i_;
      marker_expr();
      if (i_ != s_.size()) fail("the marker goes on after its end");
      r.marker = std::string(s_.substr(start));
      if (r.marker.empty()) fail("';' is not followed by a marker");
    } else if (i_ != s_.size()) {
      fail("expected version specifiers, '; marker' or the end");
    }
    return r;
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool eat(char c) {
    if (peek() != c || i_ >= s_.size()) return false;
    ++i_;
    return true;
  }
  bool eat(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  void ws() {
    while (peek() == ' ' || peek() == '\t') ++i_;
  }
  static bool op_start(char c) { return c == '<' || c == '>' || c == '=' || c == '!' || c == '~'; }

  [[noreturn]] void fail(const std::string& why) const {
    throw Error(ErrorKind::input, "not a PEP 508 requirement: " + why + " (at character " + std::to_string(i_ + 1) + ")");
  }
  // PEP 508 allows it; kwheel does not hand it on.
  [[noreturn]] void refuse(const std::string& why) const { throw Error(ErrorKind::input, "a requirement kwheel does not hand on: " + why); }

  // PEP 508's identifier: letters, digits and -_. inside, a letter or digit at each end.
  std::string identifier(const std::string& what) {
    const size_t start = i_;
    if (!alnum(peek())) fail(what);
    while (alnum(peek()) || peek() == '-' || peek() == '_' || peek() == '.') ++i_;
    if (!alnum(s_[i_ - 1])) fail("a name ends with a letter or digit");
    return std::string(s_.substr(start, i_ - start));
  }

  std::vector<std::string> extras() {
    std::vector<std::string> out;
    ws();
    if (eat(']')) return out;
    do {
      ws();
      out.push_back(identifier("an extra is a name (a letter or digit first)"));
      ws();
    } while (eat(','));
    if (!eat(']')) fail("the extras' '[' is not closed by ']'");
    return out;
  }

  // packaging takes a trailing comma ("foo>=1,"), so kwheel does.
  std::vector<std::string> specifiers() {
    std::vector<std::string> out;
    do {
      ws();
      if (!out.empty() && !op_start(peek())) break;
      out.push_back(specifier());
      ws();
    } while (eat(','));
    return out;
  }

  std::string comparison() {
    for (std::string_view op : {"===", "==", "~=", "!=", "<=", ">=", "<", ">"})
      if (eat(op)) return std::string(op);
    fail("a version specifier starts with ==, !=, <=, >=, <, > or ~=");
  }

  std::string specifier() {
    const std::string op = comparison();
    // packaging reads anything after === as the version, and pip then may
    // take "name===x.whl" for a file to install.
    if (op == "===") refuse("the arbitrary-equality operator '===' takes a version that is not PEP 440; use ==");
    ws();
    const size_t start = i_;
    while (alnum(peek()) || std::string_view(".!+_-*").find(peek()) != std::string_view::npos) ++i_;
    std::string version(s_.substr(start, i_ - start));
    const bool wildcard = version.ends_with(".*");
    const std::string base = wildcard ? version.substr(0, version.size() - 2) : version;
    const auto v = Version::try_parse(base);
    if (!v || base.find('*') != std::string::npos) fail("'" + op + "' is not followed by a PEP 440 version");
    if (wildcard && (op != "==" && op != "!=")) fail("'.*' goes only with == and !=");
    if (wildcard && (v->is_prerelease() || v->is_postrelease() || !v->local().empty())) fail("'.*' follows a release number only");
    if (!v->local().empty() && op != "==" && op != "!=") fail("a local version label goes only with == and !=");
    if (op == "~=" && v->release().size() < 2) fail("'~=' needs a version with at least two release numbers");
    return op + version;
  }

  // marker_expr = marker_atom (BOOLOP marker_atom)*
  void marker_expr() {
    marker_atom();
    for (;;) {
      const size_t before = i_;
      if (!keyword("and") && !keyword("or")) {
        i_ = before;
        return;
      }
      marker_atom();
    }
  }

  void marker_atom() {
    ws();
    if (eat('(')) {
      marker_expr();
      ws();
      if (!eat(')')) fail("a '(' in the marker is not closed");
    } else {
      marker_value();
      ws();
      marker_op();
      ws();
      marker_value();
    }
    ws();
  }

  // A whole word (packaging's \b...\b) equal to `word`.
  bool keyword(std::string_view word) {
    if (s_.substr(i_, word.size()) != word || word_char(i_ + word.size() < s_.size() ? s_[i_ + word.size()] : ' ')) return false;
    i_ += word.size();
    return true;
  }

  void marker_op() {
    for (std::string_view op : {"===", "==", "~=", "!=", "<=", ">=", "<", ">"})
      if (eat(op)) return;
    if (keyword("in")) return;
    if (keyword("not")) {
      const size_t gap = i_;
      ws();
      if (i_ > gap && keyword("in")) return;
    }
    fail("a marker compares with ==, !=, <=, >=, <, >, ~=, ===, in or not in");
  }

  void marker_value() {
    const char q = peek();
    if (q == '"' || q == '\'') {
      const size_t close = s_.find(q, i_ + 1);
      if (close == std::string_view::npos) fail("a quoted string in the marker is not closed");
      i_ = close + 1;
      return;
    }
    const size_t start = i_;
    while (word_char(peek())) ++i_;
    const std::string_view word = s_.substr(start, i_ - start);
    for (std::string_view v : kMarkerVariables)
      if (word == v) return;
    i_ = start;
    fail("a marker compares a quoted string or one of PEP 508's variables (python_version, sys_platform, extra, ...)");
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

std::string Requirement::for_pip() const {
  std::string out = normalize_name(name);
  if (!extras.empty()) {
    out += "[";
    for (size_t i = 0; i < extras.size(); ++i) out += (i ? "," : "") + extras[i];
    out += "]";
  }
  if (!specifiers.empty()) {
    out += " (";
    for (size_t i = 0; i < specifiers.size(); ++i) out += (i ? "," : "") + specifiers[i];
    out += ")";
  }
  if (!marker.empty()) out += " ; " + marker;
  return out;
}

Requirement parse_requirement(std::string_view text) {
  if (text.size() > kMaxRequirementBytes)
    throw Error(ErrorKind::input, "not a PEP 508 requirement: " + std::to_string(text.size()) + " bytes, over the " + std::to_string(kMaxRequirementBytes) + "-byte limit");
  // Tabs are PEP 508 whitespace; any other control character, or bytes that
  // are not UTF-8, belong in no requirement.
  std::string visible(text);
  for (char& c : visible)
    if (c == '\t') c = ' ';
  if (const size_t at = unprintable_at(visible); at != std::string::npos)
    throw Error(ErrorKind::input, "not a PEP 508 requirement: a control character or a byte that is not UTF-8 (at character " + std::to_string(at + 1) + ")");
  const std::string trimmed = trim(std::string(text));
  return Reader(trimmed).requirement();
}

}  // namespace kwheel
