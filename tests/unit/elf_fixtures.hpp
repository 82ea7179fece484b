#pragma once
// Test helpers shared by elf_test.cpp, manylinux_test.cpp and abi3_test.cpp:
// compile real shared objects at test time (so the evidence is what today's
// toolchain emits, not checked-in binaries), and patch ELF64 images in
// memory to make them malformed in precise ways.
#include "file_support.hpp"
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kwheel::testing {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kwheel-elf-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};


inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::byte> read_bytes(const fs::path& p) {
  const std::string s = read_text(p);
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

inline void write_bytes(const fs::path& p, const std::vector<std::byte>& b) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Runs a shell command in `dir`; on failure the test fails with the output.
inline bool sh(const fs::path& dir, const std::string& cmd) {
  const fs::path log = dir / "cmd.log";
  const std::string full = "cd '" + dir.string() + "' && (" + cmd + ") >'" + log.string() + "' 2>&1";
  const int rc = std::system(full.c_str());
  if (rc != 0) ADD_FAILURE() << "command failed (" << rc << "): " << cmd << "\n" << read_text(log);
  return rc == 0;
}

inline bool have_tool(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// clang + lld can link shared objects for other targets without a sysroot
// when nothing from a libc is linked (-nostdlib).
inline bool can_cross_link(const std::string& target) {
  if (!have_tool("clang") || !have_tool("ld.lld")) return false;
  TempDir d;
  write_file(d / "t.c", "int f(void) { return 1; }\n");
  const std::string cmd = "cd '" + d.path().string() + "' && clang --target=" + target +
                          " -fuse-ld=lld -nostdlib -shared -fPIC t.c -o t.so >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// Builds `name` (a .so) from C source with the host compiler.
inline fs::path build_c(const TempDir& d, const std::string& name, const std::string& source,
                        const std::string& flags = "", const std::string& compiler = "cc") {
  const std::string src = name + (compiler == "c++" ? ".cpp" : ".c");
  write_file(d / src, source);
  sh(d.path(), compiler + " -shared -fPIC -O1 " + src + " -o " + name + " " + flags);
  return d / name;
}

// A stand-in library named `soname` that defines `symbols` under the given
// version nodes ("GLIBC_2.38" -> {"strlcpy"}), so linking against it records
// version needs this machine's real libraries cannot produce (a newer glibc,
// another architecture's glibc). `target` empty = host cc, else clang target.
inline fs::path build_stub(const TempDir& d, const std::string& soname,
                           const std::vector<std::pair<std::string, std::vector<std::string>>>& versions,
                           const std::string& target = "") {
  const fs::path dir = d / ("stub-" + (target.empty() ? std::string("host") : target));
  fs::create_directories(dir);
  std::string src, map;
  std::string prev;
  for (const auto& [node, syms] : versions) {
    map += node + " { global: ";
    for (const auto& s : syms) {
      src += "void " + s + "(void) {}\n";
      map += s + "; ";
    }
    map += "}" + (prev.empty() ? std::string() : " " + prev) + ";\n";
    prev = node;
  }
  write_file(dir / (soname + ".c"), src);
  write_file(dir / (soname + ".map"), map);
  const std::string cc = target.empty() ? "cc" : "clang --target=" + target + " -fuse-ld=lld";
  sh(dir, cc + " -shared -fPIC -nostdlib -Wl,-soname," + soname + " -Wl,--version-script=" + soname + ".map " +
              soname + ".c -o " + soname);
  return dir / soname;
}

// Links `source` against the given stub libraries only (no real libc).
inline fs::path build_against(const TempDir& d, const std::string& name, const std::string& source,
                              const std::vector<fs::path>& libs, const std::string& target = "",
                              const std::string& flags = "") {
  write_file(d / (name + ".c"), source);
  std::string cmd = (target.empty() ? std::string("cc") : "clang --target=" + target + " -fuse-ld=lld") +
                    " -shared -fPIC -nostdlib " + name + ".c -o " + name + " " + flags;
  for (const auto& l : libs) cmd += " '" + l.string() + "'";
  sh(d.path(), cmd);
  return d / name;
}

// --- ELF64 little-endian patching (only for objects this suite built) ---

template <typename T>
T peek(const std::vector<std::byte>& b, std::size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

template <typename T>
void poke(std::vector<std::byte>& b, std::size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof v);
}

struct Shdr64 {
  std::size_t header_off;  // where this section header lives
  std::uint32_t type;
  std::uint64_t offset, size;
  std::uint32_t link, info;
};

inline std::vector<Shdr64> sections64(const std::vector<std::byte>& b) {
  const auto shoff = peek<std::uint64_t>(b, 40);
  const auto shnum = peek<std::uint16_t>(b, 60);
  std::vector<Shdr64> out;
  for (std::size_t i = 0; i < shnum; ++i) {
    const std::size_t h = shoff + i * 64;
    out.push_back({h, peek<std::uint32_t>(b, h + 4), peek<std::uint64_t>(b, h + 24), peek<std::uint64_t>(b, h + 32),
                   peek<std::uint32_t>(b, h + 40), peek<std::uint32_t>(b, h + 44)});
  }
  return out;
}

inline Shdr64 section64(const std::vector<std::byte>& b, std::uint32_t type) {
  for (const auto& s : sections64(b)) {
    if (s.type == type) return s;
  }
  throw std::runtime_error("section type not found");
}

constexpr std::uint32_t kShtDynamic = 6;
constexpr std::uint32_t kShtDynsym = 11;
constexpr std::uint32_t kShtVerneed = 0x6ffffffe;
constexpr std::uint32_t kShtVersym = 0x6fffffff;

}  // namespace kwheel::testing
