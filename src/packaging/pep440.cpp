#include "kwheel/packaging/pep440.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <regex>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
namespace {

long long num(std::string_view s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) throw Error(ErrorKind::input, "version number '" + std::string(s) + "' is too large");
  return v;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_sep(char c) { return c == '-' || c == '_' || c == '.'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z'); }
// What \s is to std::regex in the "C" locale, as packaging's \s is for ASCII.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// A cursor over the lowercased text, read as the regex of PEP 440 appendix
// B (packaging.version.VERSION_PATTERN) reads it:
//   \s* v? (N!)? N(.N)* ([-_.]? (a|b|c|rc|alpha|beta|pre|preview) [-_.]? N?)?
//   (-N | [-_.]? (post|rev|r) [-_.]? N?)? ([-_.]? dev [-_.]? N?)?
//   (+ L([-_.]L)*)? \s*
// by hand, not with std::regex: a site's run parses every wheel's version
// more than once, and the regex was a twentieth of a run that adds 8 wheels.
// Where the regex's alternation could backtrack, the longest word is taken
// first: a shorter one ("a" of "alpha", "r" of "rev") leaves letters that
// no later part can start with, so the regex takes the longer one too. A
// separator after a word with no number is taken with it: each later part's
// own separator is optional, so it matches the rest either way.
struct Scan {
  std::string_view s;
  size_t i = 0;

  char peek(size_t k = 0) const { return i + k < s.size() ? s[i + k] : '\0'; }
  std::optional<long long> number() {
    const size_t start = i;
    while (is_digit(peek())) ++i;
    if (i == start) return std::nullopt;
    return num(s.substr(start, i - start));
  }
  bool word(std::initializer_list<std::string_view> words, std::string_view& found) {
    for (std::string_view w : words)
      if (s.substr(i).starts_with(w)) {
        i += w.size();
        found = w;
        return true;
      }
    return false;
  }
  // [-_.]? WORD: the word, or nothing (and the cursor where it was).
  bool separated_word(std::initializer_list<std::string_view> words, std::string_view& found) {
    const size_t at = i;
    if (is_sep(peek())) ++i;
    if (word(words, found)) return true;
    i = at;
    return false;
  }
  // [-_.]? N? after a word; no number is 0.
  long long word_number() {
    if (is_sep(peek())) ++i;
    return number().value_or(0);
  }
};

// "+L([-_.]L)*" into `v`: normalised as packaging writes it (separators as
// ".", numeric parts without leading zeros: "+01" is "+1").
bool read_local(Scan& in, std::string& text, std::vector<std::variant<long long, std::string>>& parts) {
  while (true) {
    const size_t start = in.i;
    while (is_alnum(in.peek())) ++in.i;
    if (in.i == start) return false;
    const std::string_view part = in.s.substr(start, in.i - start);
    if (!text.empty()) text += '.';
    if (std::all_of(part.begin(), part.end(), is_digit)) {
      parts.emplace_back(num(part));
      text += std::to_string(std::get<long long>(parts.back()));
    } else {
      parts.emplace_back(std::string(part));
      text += part;
    }
    if (!is_sep(in.peek()) || !is_alnum(in.peek(1))) return true;
    ++in.i;
  }
}

}  // namespace

std::optional<Version> Version::try_parse(std::string_view text) {
  // No file name, so no distribution, carries a version this long.
  if (text.size() > kMaxVersionLength) return std::nullopt;
  const std::string lowered = ascii_lower(text);
  Scan in{lowered};
  Version v;
  try {
    while (is_space(in.peek())) ++in.i;
    if (in.peek() == 'v') ++in.i;
    size_t end = in.i;
    while (end < lowered.size() && is_digit(lowered[end])) ++end;
    if (end > in.i && end < lowered.size() && lowered[end] == '!') {
      v.epoch_ = *in.number();
      ++in.i;
    }
    auto first = in.number();
    if (!first) return std::nullopt;
    v.release_.push_back(*first);
    while (in.peek() == '.' && is_digit(in.peek(1))) {
      ++in.i;
      v.release_.push_back(*in.number());
    }
    std::string_view w;
    if (in.separated_word({"preview", "alpha", "beta", "pre", "rc", "a", "b", "c"}, w))
      v.pre_ = std::make_pair(w[0] == 'a' ? 'a' : w[0] == 'b' ? 'b' : 'c', in.word_number());
    if (in.peek() == '-' && is_digit(in.peek(1))) {
      ++in.i;
      v.post_ = *in.number();
    } else if (in.separated_word({"post", "rev", "r"}, w)) {
      v.post_ = in.word_number();
    }
    if (in.separated_word({"dev"}, w)) v.dev_ = in.word_number();
    if (in.peek() == '+') {
      ++in.i;
      if (!read_local(in, v.local_str_, v.local_)) return std::nullopt;
    }
    while (is_space(in.peek())) ++in.i;
    if (in.i != lowered.size()) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;  // a number too large for a long long
  }
  // The normal form can be longer than the text ("c1" is "rc1", "1-1" is
  // "1.post1"): bound it too, so that every version read here can be
  // written and read back (found by the specifier fuzz target).
  if (v.str().size() > kMaxVersionLength) return std::nullopt;
  return v;
}

Version Version::parse(std::string_view text) {
  auto v = try_parse(text);
  if (!v)
    throw Error(ErrorKind::input, "'" + std::string(text) + "' is not a valid PEP 440 version (e.g. 1.2.0, 0.1.0rc1)");
  return *v;
}

std::string Version::public_str() const {
  std::string s;
  if (epoch_) s += std::to_string(epoch_) + "!";
  for (size_t i = 0; i < release_.size(); ++i) s += (i ? "." : "") + std::to_string(release_[i]);
  if (pre_) s += (pre_->first == 'c' ? std::string("rc") : std::string(1, pre_->first)) + std::to_string(pre_->second);
  if (post_) s += ".post" + std::to_string(*post_);
  if (dev_) s += ".dev" + std::to_string(*dev_);
  return s;
}

std::string Version::str() const { return local_str_.empty() ? public_str() : public_str() + "+" + local_str_; }

std::strong_ordering Version::operator<=>(const Version& o) const {
  if (auto c = epoch_ <=> o.epoch_; c != 0) return c;
  // Trailing zeros do not count: 1.0 == 1.0.0.
  size_t n = std::max(release_.size(), o.release_.size());
  for (size_t i = 0; i < n; ++i) {
    long long a = i < release_.size() ? release_[i] : 0;
    long long b = i < o.release_.size() ? o.release_[i] : 0;
    if (auto c = a <=> b; c != 0) return c;
  }
  // packaging's _cmpkey: a dev-only release sorts before its pre-releases;
  // no pre-release sorts after any pre-release.
  auto pre_key = [](const Version& v) -> std::tuple<int, int, long long> {
    if (!v.pre_ && !v.post_ && v.dev_) return {-1, 0, 0};
    if (!v.pre_) return {1, 0, 0};
    return {0, v.pre_->first, v.pre_->second};
  };
  if (auto c = pre_key(*this) <=> pre_key(o); c != 0) return c;
  auto post_key = [](const Version& v) { return v.post_ ? std::make_pair(1, *v.post_) : std::make_pair(0, 0LL); };
  if (auto c = post_key(*this) <=> post_key(o); c != 0) return c;
  auto dev_key = [](const Version& v) { return v.dev_ ? std::make_pair(0, *v.dev_) : std::make_pair(1, 0LL); };
  if (auto c = dev_key(*this) <=> dev_key(o); c != 0) return c;
  // Local labels: numeric segments compare as numbers and above strings;
  // with a shared prefix the longer label wins (PEP 440).
  size_t m = std::min(local_.size(), o.local_.size());
  for (size_t i = 0; i < m; ++i) {
    const auto& a = local_[i];
    const auto& b = o.local_[i];
    if (a.index() != b.index()) return a.index() == 0 ? std::strong_ordering::greater : std::strong_ordering::less;
    if (a.index() == 0) {
      if (auto c = std::get<0>(a) <=> std::get<0>(b); c != 0) return c;
    } else if (auto c = std::get<1>(a).compare(std::get<1>(b)); c != 0) {
      return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
    }
  }
  return local_.size() <=> o.local_.size();
}

SpecifierSet SpecifierSet::parse(std::string_view text) {
  // libstdc++'s std::regex recurses once per character: bound the input
  // before any regex sees it (a 40 KB --version overflowed the stack).
  if (text.size() > kMaxSpecifierBytes)
    throw Error(ErrorKind::usage, "version spec of " + std::to_string(text.size()) + " bytes is over the " + std::to_string(kMaxSpecifierBytes) +
                                      "-byte limit; use e.g. \">=0.1,<0.2\"");
  SpecifierSet set;
  set.text_ = std::string(text);
  static const std::regex one(R"(^\s*(~=|==|!=|<=|>=|<|>|===)\s*([^\s,]+)\s*$)");
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    std::smatch m;
    if (!std::regex_match(item, m, one))
      throw Error(ErrorKind::usage, "version spec '" + std::string(text) + "': '" + item +
                                        "' is not a specifier (use e.g. \">=0.1,<0.2\" or \"==0.1.*\")");
    std::string ver = m[2];
    bool prefix = ver.size() > 2 && ver.ends_with(".*");
    if (prefix && m[1] != "==" && m[1] != "!=")
      throw Error(ErrorKind::usage, "version spec '" + std::string(text) + "': '.*' is only allowed with == and !=");
    const auto parsed = Version::try_parse(prefix ? ver.substr(0, ver.size() - 2) : ver);
    if (!parsed) throw Error(ErrorKind::usage, "version spec '" + std::string(text) + "': '" + ver + "' is not a PEP 440 version");
    if (m[1] == "~=" && parsed->release().size() < 2)
      throw Error(ErrorKind::usage, "version spec '" + std::string(text) + "': '~=" + ver + "' needs at least two release numbers");
    set.specs_.push_back({m[1], ver});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return set;
}

namespace {
// Same epoch and release (packaging's base_version), trailing zeros ignored.
bool same_base(const Version& a, const Version& b) {
  if (a.epoch() != b.epoch()) return false;
  size_t n = std::max(a.release().size(), b.release().size());
  for (size_t i = 0; i < n; ++i)
    if ((i < a.release().size() ? a.release()[i] : 0) != (i < b.release().size() ? b.release()[i] : 0)) return false;
  return true;
}
}  // namespace

bool SpecifierSet::contains(const Version& v, bool allow_prereleases) const {
  if (v.is_prerelease() && !allow_prereleases) return false;
  const Version pub = Version::parse(v.public_str());
  for (const auto& s : specs_) {
    bool prefix = s.version.ends_with(".*");
    if (prefix) {
      // A copy: release() refers into the temporary Version.
      const std::vector<long long> want = Version::parse(s.version.substr(0, s.version.size() - 2)).release();
      const auto& have = pub.release();
      // The candidate is zero-padded: 1 matches ==1.0.*.
      bool match = true;
      for (size_t i = 0; i < want.size(); ++i) match = match && (i < have.size() ? have[i] : 0) == want[i];
      if ((s.op == "==") != match) return false;
      continue;
    }
    const Version sv = Version::parse(s.version);
    const auto c = pub <=> sv;
    // PEP 440: a local label in an ==/!= specifier is matched too; without
    // one, the candidate's label is ignored.
    const bool equal = sv.local().empty() ? c == 0 : v == sv;
    bool ok = true;
    if (s.op == "==" || s.op == "===") ok = equal;
    else if (s.op == "!=") ok = !equal;
    // PEP 440 exclusive ordered comparisons: <V excludes pre-releases of V
    // (unless V is one), >V excludes post-releases (unless V is one) and
    // local versions of V.
    else if (s.op == "<") ok = c < 0 && (sv.is_prerelease() || !v.is_prerelease() || !same_base(pub, sv));
    else if (s.op == "<=") ok = c <= 0;
    else if (s.op == ">")
      ok = c > 0 && (sv.is_postrelease() || !v.is_postrelease() || !same_base(pub, sv)) &&
           (v.local().empty() || !same_base(pub, sv));
    else if (s.op == ">=") ok = c >= 0;
    else if (s.op == "~=") {
      // ~=X.Y.Z means >=X.Y.Z, ==X.Y.*
      auto rel = sv.release();  // two or more: parse checked
      rel.pop_back();
      ok = c >= 0;
      for (size_t i = 0; i < rel.size(); ++i) ok = ok && (i < pub.release().size() ? pub.release()[i] : 0) == rel[i];
    }
    if (!ok) return false;
  }
  return true;
}

std::string normalize_name(std::string_view name) {
  std::string out;
  bool sep = false;
  for (unsigned char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep && !out.empty()) out += '-';
    sep = false;
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

bool is_valid_name(std::string_view name) {
  // ^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$ (PEP 508, case-insensitive),
  // by hand: std::regex would recurse once per character of an untrusted name.
  auto alnum = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (name.empty() || !alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

std::string wheel_name_component(std::string_view name) {
  std::string n = normalize_name(name);
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

}  // namespace kwheel
