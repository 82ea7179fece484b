#include "kwheel/evidence/elf.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include "elf_fixtures.hpp"
#include "kwheel/base/error.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

const ElfSymbol* find_symbol(const ElfInfo& e, const std::string& name) {
  for (const auto& s : e.dynamic_symbols) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ElfVersionNeed* find_need(const ElfInfo& e, const std::string& file) {
  for (const auto& n : e.version_needs) {
    if (n.file == file) return &n;
  }
  return nullptr;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Parse must return or throw kwheel::Error; anything else fails the test.
void expect_error_containing(const std::vector<std::byte>& bytes, const std::string& fragment) {
  try {
    parse_elf(bytes, "patched.so");
    ADD_FAILURE() << "parsed without error; expected: " << fragment;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("patched.so"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

const char* kVersioned = R"(
#define _GNU_SOURCE
#include <sys/stat.h>
#include <time.h>
#include <math.h>
long uses_clock(void) { struct timespec t; return clock_gettime(0, &t); }
int uses_statx(void) { struct statx st; return statx(0, "x", 0, 0, &st); }
double uses_pow(double x) { return pow(x, 1.5); }
)";

TEST(ElfReader, NeededSonameAndRunpath) {
  TempDir d;
  build_c(d, "libdep.so", "int dep(void) { return 1; }\n", "-Wl,-soname,libdep.so.1");
  const auto lib = build_c(d, "libmain.so", "int dep(void); int f(void) { return dep(); }\n",
                           "-Wl,-soname,libmain.so.2 -L. -ldep -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/lib:/opt/x'");
  const ElfInfo e = read_elf(lib);
  EXPECT_EQ(e.name, lib.string());
  EXPECT_EQ(e.elf_class, ElfClass::elf64);
  EXPECT_EQ(e.endian, ElfEndian::little);
  EXPECT_EQ(e.machine, "x86_64");
  EXPECT_EQ(e.e_type, 3);  // ET_DYN
  EXPECT_EQ(e.soname, "libmain.so.2");
  EXPECT_TRUE(has(e.needed, "libdep.so.1"));
  EXPECT_EQ(e.runpath, (std::vector<std::string>{"$ORIGIN/lib", "/opt/x"}));
  EXPECT_TRUE(e.rpath.empty());
  const ElfSymbol* dep = find_symbol(e, "dep");
  ASSERT_NE(dep, nullptr);
  EXPECT_FALSE(dep->defined);
  const ElfSymbol* f = find_symbol(e, "f");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->defined);
  EXPECT_EQ(f->binding, SymbolBinding::global);
  EXPECT_EQ(f->type, SymbolType::func);

  const auto old = build_c(d, "libold.so", "int f(void) { return 0; }\n", "-Wl,--disable-new-dtags -Wl,-rpath,/a:/b");
  const ElfInfo o = read_elf(old);
  EXPECT_EQ(o.rpath, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_TRUE(o.runpath.empty());
  EXPECT_FALSE(o.soname.has_value());
}

TEST(ElfReader, VersionNeedsAndPerSymbolVersions) {
  TempDir d;
  const ElfInfo e = read_elf(build_c(d, "libv.so", kVersioned, "-lm"));
  const ElfVersionNeed* libc = find_need(e, "libc.so.6");
  ASSERT_NE(libc, nullptr);
  EXPECT_TRUE(has(libc->versions, "GLIBC_2.17"));
  EXPECT_TRUE(has(libc->versions, "GLIBC_2.28"));
  const ElfVersionNeed* libm = find_need(e, "libm.so.6");
  ASSERT_NE(libm, nullptr);
  EXPECT_TRUE(has(libm->versions, "GLIBC_2.29"));  // pow's 2.29 symbol version

  const ElfSymbol* clock = find_symbol(e, "clock_gettime");
  ASSERT_NE(clock, nullptr);
  EXPECT_FALSE(clock->defined);
  EXPECT_EQ(clock->version, "GLIBC_2.17");
  EXPECT_EQ(clock->version_file, "libc.so.6");
  EXPECT_EQ(clock->type, SymbolType::func);
  const ElfSymbol* pw = find_symbol(e, "pow");
  ASSERT_NE(pw, nullptr);
  EXPECT_EQ(pw->version, "GLIBC_2.29");
  EXPECT_EQ(pw->version_file, "libm.so.6");
  const ElfSymbol* weak = find_symbol(e, "__cxa_finalize");
  ASSERT_NE(weak, nullptr);
  EXPECT_EQ(weak->binding, SymbolBinding::weak);
}

TEST(ElfReader, CxxVersionNeeds) {
  TempDir d;
  const ElfInfo e = read_elf(build_c(d, "libcxx.so", "#include <istream>\nvoid f(std::istream& in) { char b[16]; in >> b; }\n",
                                     "-std=c++20", "c++"));
  const ElfVersionNeed* cxx = find_need(e, "libstdc++.so.6");
  ASSERT_NE(cxx, nullptr);
  EXPECT_TRUE(has(cxx->versions, "GLIBCXX_3.4.29"));
  const ElfSymbol* extract = find_symbol(e, "_ZSt17__istream_extractRSiPcl");
  ASSERT_NE(extract, nullptr);
  EXPECT_EQ(extract->version, "GLIBCXX_3.4.29");
}

TEST(ElfReader, VersionDefinitions) {
  TempDir d;
  write_file(d / "v.map", "FOO_1.0 { global: foo; local: *; };\nFOO_2.0 { global: bar; } FOO_1.0;\n");
  const ElfInfo e = read_elf(build_c(d, "libdef.so", "int foo(void) { return 1; }\nint bar(void) { return 2; }\n",
                                     "-Wl,-soname,libdef.so.1 -Wl,--version-script=v.map"));
  EXPECT_EQ(e.version_definitions, (std::vector<std::string>{"FOO_1.0", "FOO_2.0"}));
  const ElfSymbol* foo = find_symbol(e, "foo");
  ASSERT_NE(foo, nullptr);
  EXPECT_TRUE(foo->defined);
  EXPECT_EQ(foo->version, "FOO_1.0");
  EXPECT_TRUE(foo->version_file.empty());
  EXPECT_EQ(find_symbol(e, "bar")->version, "FOO_2.0");
}

TEST(ElfReader, BufferAndFileAgree) {
  TempDir d;
  const auto lib = build_c(d, "libv.so", kVersioned, "-lm");
  const ElfInfo a = read_elf(lib);
  const ElfInfo b = parse_elf(read_bytes(lib), "buffer.so");
  EXPECT_EQ(b.name, "buffer.so");
  EXPECT_EQ(a.needed, b.needed);
  ASSERT_EQ(a.dynamic_symbols.size(), b.dynamic_symbols.size());
  for (std::size_t i = 0; i < a.dynamic_symbols.size(); ++i) {
    EXPECT_EQ(a.dynamic_symbols[i].name, b.dynamic_symbols[i].name);
    EXPECT_EQ(a.dynamic_symbols[i].version, b.dynamic_symbols[i].version);
  }
  EXPECT_TRUE(is_elf_file(lib));
  EXPECT_FALSE(is_elf_file(d / "libv.so.c"));
}

// Without section headers (sstrip-style) the reader must find the same facts
// through PT_DYNAMIC, sizing .dynsym from DT_GNU_HASH or DT_HASH.
void expect_sectionless_matches(const std::string& hash_style) {
  TempDir d;
  const auto lib = build_c(d, "libv.so", kVersioned, "-lm -Wl,-soname,libv.so.1 -Wl,--hash-style=" + hash_style);
  const ElfInfo full = read_elf(lib);
  auto bytes = read_bytes(lib);
  poke<std::uint64_t>(bytes, 40, 0);  // e_shoff
  poke<std::uint16_t>(bytes, 60, 0);  // e_shnum
  poke<std::uint16_t>(bytes, 62, 0);  // e_shstrndx
  const ElfInfo bare = parse_elf(bytes, "bare.so");
  EXPECT_EQ(bare.needed, full.needed);
  EXPECT_EQ(bare.soname, full.soname);
  ASSERT_EQ(bare.version_needs.size(), full.version_needs.size());
  for (std::size_t i = 0; i < full.version_needs.size(); ++i) {
    EXPECT_EQ(bare.version_needs[i].file, full.version_needs[i].file);
    EXPECT_EQ(bare.version_needs[i].versions, full.version_needs[i].versions);
  }
  ASSERT_EQ(bare.dynamic_symbols.size(), full.dynamic_symbols.size()) << hash_style;
  for (std::size_t i = 0; i < full.dynamic_symbols.size(); ++i) {
    EXPECT_EQ(bare.dynamic_symbols[i].name, full.dynamic_symbols[i].name);
    EXPECT_EQ(bare.dynamic_symbols[i].version, full.dynamic_symbols[i].version);
  }
}

TEST(ElfReader, SectionlessFallbackGnuHash) { expect_sectionless_matches("gnu"); }
TEST(ElfReader, SectionlessFallbackSysvHash) { expect_sectionless_matches("sysv"); }

TEST(ElfReader, ThirtyTwoBitWithVersionNeeds) {
  if (!can_cross_link("i686-linux-gnu")) GTEST_SKIP() << "clang/lld cannot link i686 objects here";
  TempDir d;
  const auto libc = build_stub(d, "libc.so.6", {{"GLIBC_2.0", {"puts"}}, {"GLIBC_2.34", {"pthread_create"}}}, "i686-linux-gnu");
  const auto lib = build_against(d, "lib32.so", "void puts(void); void pthread_create(void);\nvoid f(void) { puts(); pthread_create(); }\n",
                                 {libc}, "i686-linux-gnu");
  const ElfInfo e = read_elf(lib);
  EXPECT_EQ(e.elf_class, ElfClass::elf32);
  EXPECT_EQ(e.machine, "i686");
  EXPECT_EQ(e.needed, std::vector<std::string>{"libc.so.6"});
  const ElfVersionNeed* need = find_need(e, "libc.so.6");
  ASSERT_NE(need, nullptr);
  EXPECT_TRUE(has(need->versions, "GLIBC_2.34"));
  EXPECT_EQ(find_symbol(e, "pthread_create")->version, "GLIBC_2.34");
}

TEST(ElfReader, Aarch64Machine) {
  if (!can_cross_link("aarch64-linux-gnu")) GTEST_SKIP() << "clang/lld cannot link aarch64 objects here";
  TempDir d;
  const auto libc = build_stub(d, "libc.so.6", {{"GLIBC_2.17", {"memcpy"}}}, "aarch64-linux-gnu");
  const ElfInfo e = read_elf(build_against(d, "liba64.so", "void memcpy(void);\nvoid f(void) { memcpy(); }\n", {libc},
                                           "aarch64-linux-gnu"));
  EXPECT_EQ(e.machine, "aarch64");
  EXPECT_EQ(e.e_machine, 183);
  EXPECT_EQ(find_symbol(e, "memcpy")->version, "GLIBC_2.17");
}

TEST(ElfReader, BigEndian) {
  if (!can_cross_link("powerpc64-linux-gnu")) GTEST_SKIP() << "clang/lld cannot link big-endian ppc64 objects here";
  TempDir d;
  const auto libc = build_stub(d, "libc.so.6", {{"GLIBC_2.3", {"puts"}}}, "powerpc64-linux-gnu");
  const ElfInfo e = read_elf(build_against(d, "libbe.so", "void puts(void);\nvoid f(void) { puts(); }\n", {libc},
                                           "powerpc64-linux-gnu", "-Wl,-soname,libbe.so"));
  EXPECT_EQ(e.endian, ElfEndian::big);
  EXPECT_EQ(e.machine, "ppc64");
  EXPECT_EQ(e.soname, "libbe.so");
  EXPECT_EQ(find_symbol(e, "puts")->version, "GLIBC_2.3");
}

TEST(ElfReader, MachineNames) {
  EXPECT_EQ(machine_name(62, ElfClass::elf64, ElfEndian::little), "x86_64");
  EXPECT_EQ(machine_name(183, ElfClass::elf64, ElfEndian::little), "aarch64");
  EXPECT_EQ(machine_name(21, ElfClass::elf64, ElfEndian::little), "ppc64le");
  EXPECT_EQ(machine_name(21, ElfClass::elf64, ElfEndian::big), "ppc64");
  EXPECT_EQ(machine_name(22, ElfClass::elf64, ElfEndian::big), "s390x");
  EXPECT_EQ(machine_name(190, ElfClass::elf64, ElfEndian::little), "cuda");
  EXPECT_EQ(machine_name(4242, ElfClass::elf64, ElfEndian::little), "em_4242");
}

TEST(ElfMalformed, NotElfEmptyMissingAndDirectory) {
  TempDir d;
  write_file(d / "text.so", "INPUT(libc.so.6)\n");  // a linker script named like a library
  try {
    read_elf(d / "text.so");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("text.so: not an ELF file"), std::string::npos) << e.what();
  }
  write_file(d / "empty.so", "");
  EXPECT_THROW(read_elf(d / "empty.so"), Error);
  try {
    read_elf(d / "missing.so");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
  }
  try {
    read_elf(d.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
  }
  ASSERT_EQ(::mkfifo((d / "fifo.so").c_str(), 0600), 0);
  EXPECT_THROW(read_elf(d / "fifo.so"), Error);  // must not block waiting for a writer
  EXPECT_FALSE(is_elf_file(d / "fifo.so"));
}

TEST(ElfMalformed, EveryTruncationIsAnErrorNotACrash) {
  TempDir d;
  const auto full = read_bytes(build_c(d, "libv.so", kVersioned, "-lm"));
  // Section headers sit at the end of the file, so every proper prefix is
  // malformed; each must be reported, never read past.
  for (std::size_t len = 0; len < full.size(); len += (len < 256 ? 1 : 61)) {
    std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_THROW(parse_elf(cut, "cut.so"), Error) << "prefix of " << len << " bytes";
  }
  std::vector<std::byte> header_only(full.begin(), full.begin() + 40);
  expect_error_containing(header_only, "too short");
}

TEST(ElfMalformed, BadOffsetsAndCounts) {
  TempDir d;
  const auto good = read_bytes(build_c(d, "libv.so", kVersioned, "-lm"));

  auto b = good;
  poke<std::uint64_t>(b, 40, 0xfffffffffffff000ull);  // e_shoff near 2^64
  expect_error_containing(b, "section header");

  b = good;
  poke<std::uint16_t>(b, 58, 12);  // e_shentsize
  expect_error_containing(b, "e_shentsize");

  b = good;  // extended numbering: e_shnum 0, real count in section 0
  poke<std::uint16_t>(b, 60, 0);
  poke<std::uint64_t>(b, peek<std::uint64_t>(b, 40) + 32, 0x7fffffffull);
  expect_error_containing(b, "section count");

  b = good;
  const Shdr64 dynsym = section64(b, kShtDynsym);
  poke<std::uint64_t>(b, dynsym.header_off + 32, 0x10000000000ull);  // sh_size
  expect_error_containing(b, "dynamic symbol table");

  b = good;
  poke<std::uint64_t>(b, dynsym.header_off + 56, 7);  // sh_entsize
  expect_error_containing(b, "entry size");

  b = good;
  poke<std::uint32_t>(b, dynsym.header_off + 40, 999);  // sh_link
  expect_error_containing(b, "does not exist");

  b = good;  // DT_NEEDED pointing past the string table
  const Shdr64 dyn = section64(b, kShtDynamic);
  for (std::uint64_t off = dyn.offset; off < dyn.offset + dyn.size; off += 16) {
    if (peek<std::int64_t>(b, off) == 1) {
      poke<std::uint64_t>(b, off + 8, 0xffffffffull);
      break;
    }
  }
  expect_error_containing(b, "outside its string table");

  b = good;  // a symbol naming a version index nobody declares
  const Shdr64 versym = section64(b, kShtVersym);
  poke<std::uint16_t>(b, versym.offset + 2, 0x7ff0);
  expect_error_containing(b, "version index");
}

TEST(ElfMalformed, VerneedChainsCannotLoopOrOverrun) {
  TempDir d;
  const auto good = read_bytes(build_c(d, "libv.so", kVersioned, "-lm"));  // needs from libc and libm
  const Shdr64 vn = section64(good, kShtVerneed);
  ASSERT_GE(vn.info, 2u);

  auto b = good;  // vn_next that would wrap backwards in 32-bit arithmetic
  poke<std::uint32_t>(b, vn.offset + 12, 0xfffffff0u);
  expect_error_containing(b, "outside its section");

  b = good;  // chain ends before the declared count
  poke<std::uint32_t>(b, vn.offset + 12, 0);
  expect_error_containing(b, "end after 1 of");

  b = good;  // huge declared count, consistently in the section and DT_VERNEEDNUM
  poke<std::uint32_t>(b, vn.header_off + 44, 0x7fffffffu);  // sh_info
  const Shdr64 dyn = section64(b, kShtDynamic);
  for (std::uint64_t off = dyn.offset; off < dyn.offset + dyn.size; off += 16) {
    if (peek<std::int64_t>(b, off) == 0x6fffffff) poke<std::uint64_t>(b, off + 8, 0x7fffffffu);
  }
  expect_error_containing(b, "claim");

  b = good;  // huge vn_cnt
  poke<std::uint16_t>(b, vn.offset + 2, 0xffff);
  expect_error_containing(b, "auxiliary entries");

  b = good;  // aux chain pointing backwards (wraps in 32-bit readers)
  const auto aux = vn.offset + peek<std::uint32_t>(b, vn.offset + 8);
  poke<std::uint32_t>(b, aux + 12, 0xfffffff0u);
  poke<std::uint16_t>(b, vn.offset + 2, 3);
  expect_error_containing(b, "outside its section");

  b = good;
  poke<std::uint16_t>(b, vn.offset, 7);  // vn_version
  expect_error_containing(b, "vn_version");

  b = good;  // section header under-states the count the loader will use
  poke<std::uint32_t>(b, vn.header_off + 44, vn.info - 1);
  expect_error_containing(b, "DT_VERNEEDNUM");
}

TEST(ElfMalformed, SectionHeadersMustAgreeWithTheLoadersView) {
  TempDir d;
  auto b = read_bytes(build_c(d, "libv.so", kVersioned, "-lm"));
  const Shdr64 dyn = section64(b, kShtDynamic);
  poke<std::uint64_t>(b, dyn.header_off + 24, dyn.offset + 16);  // sh_offset
  expect_error_containing(b, "is not the PT_DYNAMIC segment");
}

// A deterministic mini-fuzz in the unit suite: random byte edits of a real
// object must only ever parse or raise kwheel::Error. (`scripts/fuzz 600 elf`
// runs the real libFuzzer target under ASan/UBSan.)
TEST(ElfMalformed, RandomMutationsNeverEscape) {
  TempDir d;
  const auto good = read_bytes(build_c(d, "libv.so", kVersioned, "-lm"));
  std::mt19937_64 rng(20240611);
  int errors = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    auto b = good;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % b.size();
      switch (rng() % 3) {
        case 0: b[at] = static_cast<std::byte>(rng()); break;
        case 1: b[at] = std::byte{0xff}; break;
        default: b[at] = std::byte{0}; break;
      }
    }
    try {
      parse_elf(b, "mutant.so");
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

// What glibc's dlopen says of `file`: its error, or "" when it loads.
std::string dlopen_error(const fs::path& file) {
  void* h = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h != nullptr) {
    ::dlclose(h);
    return "";
  }
  return ::dlerror();
}

// The loader is the oracle: load_refusal names a file exactly when this
// glibc's dlopen refuses it, and quotes the loader's own words.
TEST(ElfLoadRefusal, RefusesWhatDlopenRefusesInItsWords) {
  TempDir d;
  const std::string src = "int kernel(int x) { return 2 * x + 1; }\nint main(void) { return kernel(0); }\n";
  write_file(d / "k.c", src);
  ASSERT_TRUE(sh(d.path(), "cc -shared -fPIC k.c -o lib.so && cc -no-pie k.c -o exe.so && cc -fPIE -pie k.c -o pie.so && "
                           "cc -c -fPIC k.c -o object.so && cc -shared -fPIC -Wl,-z,nodlopen k.c -o noopen.so"));
  // An ET_DYN whose PT_DYNAMIC is blanked (PT_NULL): sections still describe it.
  auto bytes = read_bytes(d / "lib.so");
  const auto phoff = peek<std::uint64_t>(bytes, 32);
  const auto phnum = peek<std::uint16_t>(bytes, 56);
  for (std::size_t i = 0; i < phnum; ++i)
    if (peek<std::uint32_t>(bytes, phoff + i * 56) == 2) poke<std::uint32_t>(bytes, phoff + i * 56, 0);
  write_bytes(d / "nodynamic.so", bytes);

  for (const char* name : {"lib.so", "exe.so", "pie.so", "object.so", "noopen.so", "nodynamic.so"}) {
    SCOPED_TRACE(name);
    const std::string loader = dlopen_error(d / name);
    const auto refusal = load_refusal(read_elf(d / name), LoadedAs::dlopen);
    ASSERT_EQ(refusal.has_value(), !loader.empty()) << loader;
    if (!refusal) continue;
    // "<path>: cannot dynamically load executable" -> the words after the path.
    const std::string words = loader.substr(loader.rfind(": ") + 2);
    EXPECT_NE(refusal->find("\"" + words + "\""), std::string::npos) << *refusal << " vs " << loader;
  }
  EXPECT_NE(load_refusal(read_elf(d / "exe.so"), LoadedAs::dlopen)->find("an executable (ET_EXEC)"), std::string::npos);
  EXPECT_NE(load_refusal(read_elf(d / "pie.so"), LoadedAs::dlopen)->find("(DF_1_PIE)"), std::string::npos);
  // -z nodlopen stops dlopen only: the same library loads as another's DT_NEEDED.
  EXPECT_EQ(load_refusal(read_elf(d / "noopen.so"), LoadedAs::needed), std::nullopt);
  EXPECT_NE(load_refusal(read_elf(d / "pie.so"), LoadedAs::needed), std::nullopt);
}

}  // namespace
}  // namespace kwheel
