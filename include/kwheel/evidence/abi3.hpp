#pragma once
// The abi3 check: which CPython C-API symbols a set of extension modules
// imports, and whether all of them are in the stable ABI of the oldest
// Python the wheel targets (3.9, from CPython's Misc/stable_abi.toml via
// scripts/update-stable-abi into manylinux/stable_abi.json).
#include <cstddef>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/evidence/elf.hpp"

namespace kwheel {

class StableAbi {
 public:
  static const StableAbi& builtin();  // manylinux/stable_abi.json
  // Throws Error(input) naming `origin` when the JSON is not a stable-ABI list.
  static StableAbi parse(std::string_view json_text, std::string_view origin);

  bool contains(std::string_view symbol) const { return names_.find(symbol) != names_.end(); }
  const std::string& python() const { return python_; }  // "3.9"
  const std::string& source() const { return source_; }
  std::size_t size() const { return names_.size(); }

 private:
  std::set<std::string, std::less<>> names_;
  std::string python_;
  std::string source_;
};

enum class Abi3Status {
  no_python_api,    // imports no Py*/_Py* symbol (e.g. a pure TORCH_LIBRARY op library)
  stable_abi_only,  // every Py*/_Py* import is in the stable ABI
  non_stable,       // imports at least one symbol outside the stable ABI
};
std::string_view to_string(Abi3Status status);

struct Abi3Violation {
  std::string symbol;
  std::string file;  // the importing object, by its path in the wheel
};

struct Abi3Report {
  Abi3Status status = Abi3Status::no_python_api;
  std::string python;                   // the stable ABI version checked against, "3.9"
  std::size_t python_symbols = 0;       // distinct Py*/_Py* imports across the files
  std::vector<Abi3Violation> non_stable;  // sorted by symbol, then file
};

// An extension module named for one CPython ("_C.cpython-310-x86_64-linux-gnu.so",
// "_C.cpython-313t-darwin.so", "_C.cp310-win_amd64.pyd"): CPython imports it
// only when the name is one of its own EXTENSION_SUFFIXES, so only on that
// version (and build: "t" is free-threaded) and platform.
struct CpythonSuffix {
  unsigned minor = 0;      // 10 for cpython-310
  bool free_threaded = false;
  std::string platform;    // "x86_64-linux-gnu", "darwin", "win_amd64"
  std::string python_tag() const;  // "cp310"
  std::string abi_tag() const;     // "cp310", "cp313t"
};
std::optional<CpythonSuffix> cpython_suffix(std::string_view path);

// Undefined dynamic symbols named Py* or _Py* are C-API imports; anything
// else (THP*, torch's own symbols) is not the interpreter's ABI.
Abi3Report check_abi3(std::span<const ElfInfo> files, const StableAbi& abi = StableAbi::builtin());

}  // namespace kwheel
