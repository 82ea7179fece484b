#pragma once
// PEP 751 lock files (pylock.toml): the file-name rule, the packages kwheel
// writes, and the packages read back from another tool's lock (uv's
// `--format pylock.toml`), so that one resolution can be written with
// kwheel's own kernel entries and the index each package came from.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

// One distribution file of a locked package: a URL (http(s), file) or a
// local path, and its sha256 (PEP 751 wants at least one hash; kwheel
// writes and reads sha256).
struct LockedFile {
  std::string name;  // the file name; "" when the lock gives none
  std::string url;   // "" when `path` is given
  std::string path;
  std::optional<uint64_t> size;
  std::string sha256;
};

struct LockedPackage {
  std::string name;
  std::string version;
  std::string marker;           // PEP 508 marker; "" for every environment
  std::string requires_python;  // "" when not given
  std::string index;            // the simple index it came from; "" when not known
  std::optional<LockedFile> sdist;
  std::vector<LockedFile> wheels;
};

// PEP 751: "pylock.toml", or "pylock.<name>.toml" where <name> holds no dot.
bool is_pylock_name(const std::string& filename);
// A file name that looks meant as a lock ("pylock" ... ".toml") but breaks
// the rule: the one-line reason and fix; nullopt when the name is fine or
// is not meant as a lock at all.
std::optional<std::string> pylock_name_problem(const std::string& filename);

// `s` as a TOML 1.0 basic string, quotes included: '"' and '\\' escaped,
// the control characters U+0000-U+001F and U+007F as \uXXXX, everything
// else as it is. Throws Error(input) naming `what` and the value (escaped)
// when `s` is not UTF-8, which no TOML string can hold.
std::string toml_basic_string(std::string_view s, const std::string& what);

// The lock's text: `comments` as "# " lines first (escaped by printable(),
// since a TOML comment holds no control character), then lock-version 1.0,
// created-by, requires-python (when not empty) and one [[packages]] table
// per package, in the order given.
std::string pylock_text(const std::vector<std::string>& comments, const std::string& created_by, const std::string& requires_python,
                        const std::vector<LockedPackage>& packages);

// The packages of a PEP 751 lock (`where` names it in errors). Throws
// Error(input) for text that is not TOML or not a lock of version 1.x, and
// for a package file without a sha256 of 64 hex digits (uppercase ones are
// lowered).
std::vector<LockedPackage> read_pylock_packages(const std::string& text, const std::string& where);

}  // namespace kwheel
