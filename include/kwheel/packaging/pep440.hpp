#pragma once
// PEP 440 versions and specifiers: enough to validate what we write into
// wheel names, order local labels the way pip does, and resolve
// `--version ">=0.1,<0.2"` against a repo's vX.Y.Z tags.
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kwheel {

// Longer specifier sets are refused before parsing; real ones are a few
// dozen bytes.
inline constexpr size_t kMaxSpecifierBytes = 1024;

// Longer text is not a version: no wheel filename (255 bytes) holds it.
constexpr size_t kMaxVersionLength = 255;

class Version {
 public:
  // Throws kwheel::Error(input) when `text` is not a PEP 440 version.
  static Version parse(std::string_view text);
  static std::optional<Version> try_parse(std::string_view text);

  std::string str() const;          // normalised form, e.g. "1.0rc1+torch2.10.cu130"
  std::string public_str() const;   // without the local label
  const std::vector<long long>& release() const { return release_; }
  const std::string& local() const { return local_str_; }
  bool is_prerelease() const { return pre_.has_value() || dev_.has_value(); }
  bool is_postrelease() const { return post_.has_value(); }
  long long epoch() const { return epoch_; }

  std::strong_ordering operator<=>(const Version& o) const;
  bool operator==(const Version& o) const { return (*this <=> o) == 0; }

 private:
  long long epoch_ = 0;
  std::vector<long long> release_;
  std::optional<std::pair<char, long long>> pre_;  // 'a', 'b', 'c' (rc)
  std::optional<long long> post_;
  std::optional<long long> dev_;
  std::string local_str_;
  std::vector<std::variant<long long, std::string>> local_;
};

// A comma-separated specifier set (">=0.1,<0.2", "==1.*", "~=1.2").
class SpecifierSet {
 public:
  static SpecifierSet parse(std::string_view text);  // throws Error(usage)
  // A pre-release matches only if allow_prereleases, as pip does by default.
  bool contains(const Version& v, bool allow_prereleases = false) const;
  const std::string& str() const { return text_; }

 private:
  struct Spec {
    std::string op;
    std::string version;  // kept as text: "==1.*" needs the prefix form
  };
  std::vector<Spec> specs_;
  std::string text_;
};

// PEP 503 normalisation: lowercase, runs of -_. become '-'.
std::string normalize_name(std::string_view name);
// True for a name PEP 508 accepts (letters, digits, -_. inside).
bool is_valid_name(std::string_view name);
// The escaped form used in wheel filenames and .dist-info: normalised, '-' -> '_'.
std::string wheel_name_component(std::string_view name);

}  // namespace kwheel
