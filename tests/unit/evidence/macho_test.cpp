#include "kwheel/evidence/macho.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>
#include <tuple>

#include "evidence/foreign_binary_fixture.hpp"
#include "kwheel/base/error.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

// <mach-o/loader.h> values the assertions compare with.
constexpr std::uint32_t kCpuArm64 = 0x0100000c;
constexpr std::uint32_t kCpuX86_64 = 0x01000007;
constexpr std::uint32_t kMhObject = 1;
constexpr std::uint32_t kMhDylib = 6;
constexpr std::uint32_t kLcUuid = 0x1b;
constexpr std::uint32_t kLcVersionMinMacosx = 0x24;
constexpr std::uint32_t kLcBuildVersion = 0x32;

const char* kSource = "int kernel(int x) { return x + 1; }\n";

MacosVersion v(unsigned major, unsigned minor, unsigned patch = 0) { return {major, minor, patch}; }

std::uint32_t be32(const std::vector<std::byte>& b, std::size_t off) {
  std::uint32_t x = 0;
  for (std::size_t i = 0; i < 4; ++i) x = (x << 8) | std::to_integer<std::uint32_t>(b[off + i]);
  return x;
}

void put_be(std::vector<std::byte>& b, std::size_t off, std::uint64_t x, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) b[off + i] = static_cast<std::byte>(x >> (8 * (len - 1 - i)));
}

struct LoadCommand {
  std::size_t off;
  std::uint32_t cmd, cmdsize;
};

// The commands of a thin little-endian 64-bit file this suite built.
std::vector<LoadCommand> load_commands(const std::vector<std::byte>& b) {
  std::vector<LoadCommand> out;
  std::size_t off = 32;
  for (std::uint32_t i = 0; i < peek<std::uint32_t>(b, 16); ++i) {
    out.push_back({off, peek<std::uint32_t>(b, off), peek<std::uint32_t>(b, off + 4)});
    off += out.back().cmdsize;
  }
  return out;
}

LoadCommand command(const std::vector<std::byte>& b, std::uint32_t cmd) {
  for (const auto& c : load_commands(b)) {
    if (c.cmd == cmd) return c;
  }
  throw std::runtime_error("load command not found");
}

const MachOSlice* slice_for(const MachOInfo& info, const std::string& arch) {
  for (const auto& s : info.slices) {
    if (s.arch == arch) return &s;
  }
  return nullptr;
}

// Parse must throw Error(input) naming the buffer and saying `fragment`.
void expect_error_containing(const std::vector<std::byte>& bytes, const std::string& fragment) {
  expect_refusal(parse_macho, bytes, "patched.dylib", fragment);
}

// read_macho must throw Error(input); its message.
std::string error_of_read(const fs::path& path) {
  return error_of([&] { read_macho(path); });
}

// Builds real Mach-O files with clang and ld64.lld (no SDK needed: the
// sources call nothing), recording exactly the platform_version asked for.
class MachOTest : public ForeignBinaryTest {
 protected:
  void SetUp() override {
    ld64_ = llvm_tool("ld64.lld");
    skip_without_clang_and("ld64.lld", !ld64_.empty());
  }

  fs::path object(const std::string& name, const std::string& arch, const std::string& min) {
    return clang(name, kSource, "--target=" + arch + "-apple-macos" + min + " -c");
  }

  fs::path dylib(const std::string& name, const std::string& arch, const std::string& min, const std::string& sdk) {
    object(name + ".o", arch, min);
    sh(d_.path(), ld64_ + " -dylib -arch " + arch + " -platform_version macos " + min + " " + sdk +
                      " -install_name @rpath/" + name + " " + name + ".o -o " + name);
    return d_ / name;
  }

  // arm64 for macOS 11.0 and x86_64 for 10.9, joined by llvm-lipo.
  fs::path universal2() {
    const std::string lipo = llvm_tool("llvm-lipo");
    if (lipo.empty()) return {};
    const auto arm = dylib("libarm.dylib", "arm64", "11.0", "11.3");
    const auto x86 = dylib("libx86.dylib", "x86_64", "10.9", "10.13");
    sh(d_.path(), lipo + " -create " + arm.string() + " " + x86.string() + " -output libu.dylib");
    return d_ / "libu.dylib";
  }

  std::string ld64_;
};

using MachOReader = MachOTest;
using MachOMalformed = MachOTest;

TEST(MachOVersion, ParseAndPrint) {
  EXPECT_EQ(parse_macos_version("11"), v(11, 0));
  EXPECT_EQ(parse_macos_version("11.0"), v(11, 0));
  EXPECT_EQ(parse_macos_version("10.15"), v(10, 15));
  EXPECT_EQ(parse_macos_version("10.15.4"), v(10, 15, 4));
  EXPECT_EQ(parse_macos_version("999.255.255"), v(999, 255, 255));
  for (const char* bad : {"", "11.", ".1", "1..2", "10.15.4.1", "1000", "10.256", "10.1.256", "v11", "11.0 ", "-1", "+1",
                          "11.x", "99999999999999999999"}) {
    EXPECT_EQ(parse_macos_version(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(v(11, 0).str(), "11.0");
  EXPECT_EQ(v(10, 15, 1).str(), "10.15.1");
  EXPECT_LT(v(10, 15, 7), v(11, 0));
  EXPECT_LT(v(10, 9), v(10, 15));
}

TEST_F(MachOReader, Arm64DylibFromTheClangDriver) {
  write_file(d_ / "k.c", kSource);
  // The driver calls ld64.lld itself, as a kernel build does.
  sh(d_.path(), "clang --target=arm64-apple-macos11 -fuse-ld=lld -nostdlib -shared k.c -o libk.dylib");
  const MachOInfo m = read_macho(d_ / "libk.dylib");
  EXPECT_EQ(m.name, (d_ / "libk.dylib").string());
  EXPECT_FALSE(m.universal);
  ASSERT_EQ(m.slices.size(), 1u);
  const MachOSlice& s = m.slices[0];
  EXPECT_EQ(s.arch, "arm64");
  EXPECT_EQ(s.cputype, kCpuArm64);
  EXPECT_EQ(s.filetype, kMhDylib);
  EXPECT_EQ(s.min_macos, v(11, 0));
  EXPECT_EQ(s.min_macos_source, "LC_BUILD_VERSION");
  EXPECT_EQ(s.platform, 1u);
}

TEST_F(MachOReader, MinimumAndSdkAsLinked) {
  const MachOInfo m = read_macho(dylib("lib14.dylib", "arm64", "14.2", "15.0"));
  ASSERT_EQ(m.slices.size(), 1u);
  EXPECT_EQ(m.slices[0].min_macos, v(14, 2));
  EXPECT_EQ(m.slices[0].min_macos->str(), "14.2");
  EXPECT_EQ(m.slices[0].sdk, v(15, 0));
  EXPECT_EQ(m.slices[0].min_macos_source, "LC_BUILD_VERSION");

  const MachOInfo p = read_macho(dylib("libp.dylib", "x86_64", "10.15.4", "11.1"));
  EXPECT_EQ(p.slices[0].arch, "x86_64");
  EXPECT_EQ(p.slices[0].min_macos, v(10, 15, 4));
  EXPECT_EQ(p.slices[0].min_macos->str(), "10.15.4");
  EXPECT_EQ(p.slices[0].sdk, v(11, 1));
}

// lld, like Apple's ld, writes LC_VERSION_MIN_MACOSX for targets before
// 10.14, which have no LC_BUILD_VERSION.
TEST_F(MachOReader, OldTargetRecordsVersionMin) {
  const auto lib = dylib("libold.dylib", "x86_64", "10.9", "10.13");
  const auto b = read_bytes(lib);
  EXPECT_NO_THROW(command(b, kLcVersionMinMacosx));  // what the linker wrote, not what we parse
  const MachOInfo m = read_macho(lib);
  const MachOSlice& s = m.slices.at(0);
  EXPECT_EQ(s.arch, "x86_64");
  EXPECT_EQ(s.cputype, kCpuX86_64);
  EXPECT_EQ(s.min_macos, v(10, 9));
  EXPECT_EQ(s.min_macos_source, "LC_VERSION_MIN_MACOSX");
  EXPECT_EQ(s.sdk, v(10, 13));
  EXPECT_EQ(s.platform, std::nullopt);
}

// Objects record no SDK (otool prints "n/a"): an absent sdk, not 0.0.
TEST_F(MachOReader, ObjectFilesHaveNoSdk) {
  const MachOInfo a = read_macho(object("a.o", "arm64", "12.0"));
  EXPECT_EQ(a.slices.at(0).filetype, kMhObject);
  EXPECT_EQ(a.slices[0].min_macos, v(12, 0));
  EXPECT_EQ(a.slices[0].sdk, std::nullopt);
  const MachOInfo x = read_macho(object("x.o", "x86_64", "10.13"));
  EXPECT_EQ(x.slices.at(0).min_macos, v(10, 13));
  EXPECT_EQ(x.slices[0].min_macos_source, "LC_VERSION_MIN_MACOSX");
  EXPECT_EQ(x.slices[0].sdk, std::nullopt);
}

// dyld loads a dylib or a bundle (what Python extensions are), not an
// executable or an object file.
TEST_F(MachOReader, OnlyDylibsAndBundlesLoad) {
  object("k.o", "arm64", "11.0");
  ASSERT_TRUE(sh(d_.path(), ld64_ + " -bundle -arch arm64 -platform_version macos 11.0 11.0 k.o -o k.bundle && " + ld64_ +
                                " -execute -arch arm64 -platform_version macos 11.0 11.0 -e _kernel k.o -o k.exe"));
  EXPECT_EQ(load_refusal(read_macho(dylib("libk.dylib", "arm64", "11.0", "11.0"))), std::nullopt);
  const MachOInfo bundle = read_macho(d_ / "k.bundle");
  EXPECT_EQ(bundle.slices.at(0).filetype, 8u);  // MH_BUNDLE
  EXPECT_EQ(load_refusal(bundle), std::nullopt);
  const MachOInfo exe = read_macho(d_ / "k.exe");
  EXPECT_EQ(exe.slices.at(0).filetype, 2u);  // MH_EXECUTE
  EXPECT_EQ(load_refusal(exe), "an executable (MH_EXECUTE), not a dylib or bundle; dyld loads only MH_DYLIB and MH_BUNDLE");
  EXPECT_NE(load_refusal(read_macho(d_ / "k.o")).value_or("").find("an object file (MH_OBJECT)"), std::string::npos);
}

TEST_F(MachOReader, Universal2HasBothSlices) {
  const auto lib = universal2();
  if (lib.empty()) GTEST_SKIP() << "llvm-lipo is not installed";
  EXPECT_TRUE(is_macho_file(lib));
  const MachOInfo m = read_macho(lib);
  EXPECT_TRUE(m.universal);
  ASSERT_EQ(m.slices.size(), 2u);
  const MachOSlice* arm = slice_for(m, "arm64");
  const MachOSlice* x86 = slice_for(m, "x86_64");
  ASSERT_NE(arm, nullptr);
  ASSERT_NE(x86, nullptr);
  EXPECT_EQ(arm->min_macos, v(11, 0));
  EXPECT_EQ(arm->sdk, v(11, 3));
  EXPECT_EQ(arm->min_macos_source, "LC_BUILD_VERSION");
  EXPECT_EQ(x86->min_macos, v(10, 9));
  EXPECT_EQ(x86->sdk, v(10, 13));
  EXPECT_EQ(x86->min_macos_source, "LC_VERSION_MIN_MACOSX");
  const MachOInfo buffer = parse_macho(read_bytes(lib), "buffer.dylib");
  EXPECT_EQ(buffer.name, "buffer.dylib");
  ASSERT_EQ(buffer.slices.size(), 2u);
  EXPECT_EQ(buffer.slices[0].arch, m.slices[0].arch);
}

// llvm-lipo 14 cannot write FAT_MAGIC_64 (no -fat64); the 64-bit table is
// rewritten in place, where it fits: the first slice starts a page later.
TEST_F(MachOReader, Universal2Fat64) {
  const auto lib = universal2();
  if (lib.empty()) GTEST_SKIP() << "llvm-lipo is not installed";
  auto b = read_bytes(lib);
  const std::uint32_t n = be32(b, 4);
  std::vector<std::vector<std::uint32_t>> arches;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::vector<std::uint32_t> a;
    for (std::size_t f = 0; f < 5; ++f) a.push_back(be32(b, 8 + 20 * i + 4 * f));
    arches.push_back(a);
  }
  put_be(b, 0, 0xcafebabf, 4);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::size_t at = 8 + 32 * i;
    put_be(b, at, arches[i][0], 4);       // cputype
    put_be(b, at + 4, arches[i][1], 4);   // cpusubtype
    put_be(b, at + 8, arches[i][2], 8);   // offset
    put_be(b, at + 16, arches[i][3], 8);  // size
    put_be(b, at + 24, arches[i][4], 4);  // align
    put_be(b, at + 28, 0, 4);             // reserved
  }
  const MachOInfo m = parse_macho(b, "fat64.dylib");
  EXPECT_TRUE(m.universal);
  ASSERT_EQ(m.slices.size(), 2u);
  EXPECT_EQ(slice_for(m, "arm64")->min_macos, v(11, 0));
  EXPECT_EQ(slice_for(m, "x86_64")->min_macos, v(10, 9));
}

// lld links no big-endian or 32-bit Mach-O, so these are made from a real
// file: its header and the fields the reader uses, byte-swapped (as a PowerPC
// file stores them), or put behind the 28-byte 32-bit header.
TEST_F(MachOReader, ByteSwappedAnd32BitHeaders) {
  const auto good = read_bytes(dylib("libs.dylib", "arm64", "12.3", "13.1"));
  auto b = good;
  auto swap32 = [&](std::size_t off) { put_be(b, off, peek<std::uint32_t>(good, off), 4); };
  for (std::size_t off = 0; off < 32; off += 4) swap32(off);
  for (const auto& c : load_commands(good)) {
    swap32(c.off);
    swap32(c.off + 4);
    if (c.cmd == kLcBuildVersion) {
      for (std::size_t f = 8; f < 24; f += 4) swap32(c.off + f);
    }
  }
  put_be(b, 4, 0x01000012, 4);  // CPU_TYPE_POWERPC64
  const MachOSlice s = parse_macho(b, "swapped.dylib").slices.at(0);
  EXPECT_EQ(s.arch, "ppc64");
  EXPECT_EQ(s.min_macos, v(12, 3));
  EXPECT_EQ(s.sdk, v(13, 1));

  const LoadCommand bv = command(good, kLcBuildVersion);
  std::vector<std::byte> thin(28);
  poke<std::uint32_t>(thin, 0, 0xfeedface);  // MH_MAGIC
  poke<std::uint32_t>(thin, 4, 7);           // CPU_TYPE_I386
  poke<std::uint32_t>(thin, 8, 3);           // CPU_SUBTYPE_I386_ALL
  poke<std::uint32_t>(thin, 12, kMhDylib);
  poke<std::uint32_t>(thin, 16, 1);
  poke<std::uint32_t>(thin, 20, bv.cmdsize);
  const auto from = good.begin() + static_cast<std::ptrdiff_t>(bv.off);
  thin.insert(thin.end(), from, from + bv.cmdsize);
  const MachOSlice t = parse_macho(thin, "i386.dylib").slices.at(0);
  EXPECT_EQ(t.arch, "i386");
  EXPECT_EQ(t.min_macos, v(12, 3));
}

// Names from <mach/machine.h>'s CPU types and subtypes, as lipo prints them.
TEST_F(MachOReader, ArchNames) {
  const auto good = read_bytes(dylib("liba.dylib", "arm64", "11.0", "11.0"));
  const std::vector<std::tuple<std::uint32_t, std::uint32_t, std::string>> cases = {
      {0x0100000c, 0, "arm64"},        {0x0100000c, 2, "arm64e"},    {0x0100000c, 0x80000002, "arm64e"},
      {0x01000007, 3, "x86_64"},       {0x01000007, 8, "x86_64h"},   {7, 3, "i386"},
      {0x0200000c, 1, "arm64_32"},     {12, 9, "armv7"},             {18, 0, "ppc"},
      {0x01000012, 0, "ppc64"},        {42, 0, "cputype_42"},
  };
  for (const auto& [cputype, subtype, name] : cases) {
    auto b = good;
    poke<std::uint32_t>(b, 4, cputype);
    poke<std::uint32_t>(b, 8, subtype);
    const MachOSlice s = parse_macho(b, "arch.dylib").slices.at(0);
    EXPECT_EQ(s.arch, name);
    EXPECT_EQ(s.cputype, cputype);
    EXPECT_EQ(s.cpusubtype, subtype);
  }
}

// A zippered binary carries one LC_BUILD_VERSION per platform; the macOS
// one decides, wherever it sits. A Catalyst-only one gives no macOS minimum.
TEST_F(MachOReader, BuildVersionPlatforms) {
  const auto good = read_bytes(dylib("libz.dylib", "arm64", "13.0", "14.0"));
  const LoadCommand bv = command(good, kLcBuildVersion);
  auto b = good;
  poke<std::uint32_t>(b, bv.off + 8, 6);  // PLATFORM_MACCATALYST
  MachOSlice s = parse_macho(b, "catalyst.dylib").slices.at(0);
  EXPECT_EQ(s.platform, 6u);
  EXPECT_EQ(s.min_macos, std::nullopt);
  EXPECT_EQ(s.sdk, v(14, 0));

  // Retag LC_UUID (24 bytes, the size of a tool-less LC_BUILD_VERSION) as a
  // Catalyst build version ahead of the macOS one.
  b = good;
  const LoadCommand uuid = command(b, kLcUuid);
  ASSERT_LT(uuid.off, bv.off);
  ASSERT_EQ(uuid.cmdsize, 24u);
  poke<std::uint32_t>(b, uuid.off, kLcBuildVersion);
  poke<std::uint32_t>(b, uuid.off + 8, 6);
  poke<std::uint32_t>(b, uuid.off + 12, 0x000e0000);  // 14.0
  poke<std::uint32_t>(b, uuid.off + 16, 0);
  poke<std::uint32_t>(b, uuid.off + 20, 0);
  s = parse_macho(b, "zippered.dylib").slices.at(0);
  EXPECT_EQ(s.platform, 1u);
  EXPECT_EQ(s.min_macos, v(13, 0));
  EXPECT_EQ(s.sdk, v(14, 0));
}

TEST_F(MachOMalformed, NotMachO) {
  write_file(d_ / "text.dylib", "not a library\n");
  const std::string text = error_of_read(d_ / "text.dylib");
  EXPECT_NE(text.find("text.dylib: not a Mach-O file"), std::string::npos) << text;
  EXPECT_FALSE(is_macho_file(d_ / "text.dylib"));

  const auto so = build_c(d_, "libelf.so", kSource);
  EXPECT_FALSE(is_macho_file(so));
  EXPECT_NE(error_of_read(so).find("not a Mach-O file"), std::string::npos);

  write_file(d_ / "empty.dylib", "");
  EXPECT_NE(error_of_read(d_ / "empty.dylib").find("not a Mach-O file"), std::string::npos);
  try {
    read_macho(d_ / "missing.dylib");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
  }
  error_of_read(d_.path());
  ASSERT_EQ(::mkfifo((d_ / "fifo.dylib").c_str(), 0600), 0);
  error_of_read(d_ / "fifo.dylib");  // must not block waiting for a writer
  EXPECT_FALSE(is_macho_file(d_ / "fifo.dylib"));

  // A universal header with no architectures is not one.
  std::vector<std::byte> empty_fat(64);
  put_be(empty_fat, 0, 0xcafebabe, 4);
  expect_error_containing(empty_fat, "not a Mach-O file");
}

// Java class files share 0xcafebabe; their version sits where nfat_arch would.
TEST_F(MachOMalformed, JavaClassIsNotUniversal) {
  if (!have_tool("javac")) GTEST_SKIP() << "javac is not installed";
  write_file(d_ / "K.java", "public class K { public static int f() { return 1; } }\n");
  sh(d_.path(), "javac --release 8 K.java");
  const auto b = read_bytes(d_ / "K.class");
  ASSERT_EQ(be32(b, 0), 0xcafebabeu);
  EXPECT_FALSE(has_macho_magic(b));
  EXPECT_FALSE(is_macho_file(d_ / "K.class"));
  const std::string what = error_of_read(d_ / "K.class");
  EXPECT_NE(what.find("K.class: not a Mach-O file"), std::string::npos) << what;
  EXPECT_NE(what.find("Java class file"), std::string::npos) << what;
}

TEST_F(MachOMalformed, EveryTruncationOfTheHeadersIsAnError) {
  const auto full = read_bytes(dylib("libt.dylib", "arm64", "11.0", "11.0"));
  // The reader needs the header and the load commands, nothing after.
  const std::size_t needed = 32 + peek<std::uint32_t>(full, 20);
  for (std::size_t len = 0; len < needed; ++len) {
    std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_THROW(parse_macho(cut, "cut.dylib"), Error) << "prefix of " << len << " bytes";
  }
  expect_error_containing(std::vector<std::byte>(full.begin(), full.begin() + 20), "too short");
}

TEST_F(MachOMalformed, LoadCommandBounds) {
  const auto good = read_bytes(dylib("libm.dylib", "arm64", "11.0", "11.0"));
  const auto cmds = load_commands(good);
  const std::uint32_t ncmds = peek<std::uint32_t>(good, 16);

  auto b = good;
  poke<std::uint32_t>(b, 16, 0xffffffff);  // ncmds
  expect_error_containing(b, "cannot fit in sizeofcmds");

  b = good;  // one more command than the bytes hold
  poke<std::uint32_t>(b, 16, ncmds + 1);
  expect_error_containing(b, "starts past the end of the load commands");

  b = good;
  poke<std::uint32_t>(b, 20, static_cast<std::uint32_t>(good.size()));  // sizeofcmds
  expect_error_containing(b, "sizeofcmds");

  b = good;
  poke<std::uint32_t>(b, cmds[0].off + 4, 0);  // cmdsize 0 would loop forever
  expect_error_containing(b, "cmdsize 0");

  b = good;
  poke<std::uint32_t>(b, cmds[0].off + 4, 30);
  expect_error_containing(b, "not a multiple of 4");

  b = good;
  poke<std::uint32_t>(b, cmds.back().off + 4, cmds.back().cmdsize + 8);
  expect_error_containing(b, "runs past the end of the load commands");

  b = good;
  poke<std::uint32_t>(b, cmds[0].off + 4, 0xfffffff8);
  expect_error_containing(b, "runs past the end of the load commands");

  const LoadCommand bv = command(good, kLcBuildVersion);
  b = good;
  poke<std::uint32_t>(b, bv.off + 20, 0x20000000);  // ntools
  expect_error_containing(b, "tools that do not fit");

  b = good;
  poke<std::uint32_t>(b, bv.off + 4, 16);
  expect_error_containing(b, "LC_BUILD_VERSION of 16 bytes is too short");

  b = good;  // an LC_VERSION_MIN_MACOSX besides the LC_BUILD_VERSION
  poke<std::uint32_t>(b, command(b, kLcUuid).off, kLcVersionMinMacosx);
  expect_error_containing(b, "give a minimum macOS version");
}

TEST_F(MachOMalformed, UniversalSlicesMustLieInTheFile) {
  const auto lib = universal2();
  if (lib.empty()) GTEST_SKIP() << "llvm-lipo is not installed";
  const auto good = read_bytes(lib);
  auto offset = [&](std::size_t i) { return be32(good, 8 + 20 * i + 8); };
  auto size = [&](std::size_t i) { return be32(good, 8 + 20 * i + 12); };

  auto b = good;
  put_be(b, 8 + 20 + 12, 0xfffffff0, 4);  // slice 2 size
  expect_error_containing(b, "lies outside the file");

  b = good;
  put_be(b, 8 + 8, 0xfffff000, 4);  // slice 1 offset
  expect_error_containing(b, "lies outside the file");

  // The file cut short inside its last slice.
  const std::size_t last = offset(0) > offset(1) ? 0 : 1;
  b.assign(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(offset(last) + size(last) - 1));
  expect_error_containing(b, "lies outside the file");

  b = good;
  put_be(b, 8 + 20 + 8, offset(0), 4);
  put_be(b, 8 + 20 + 16, be32(good, 8 + 16), 4);  // same alignment as slice 1
  expect_error_containing(b, "overlaps");

  b = good;
  put_be(b, 8 + 8, 0, 4);
  put_be(b, 8 + 16, 0, 4);
  expect_error_containing(b, "overlaps the universal header");

  b = good;
  put_be(b, 8 + 8, offset(0) + 4, 4);
  expect_error_containing(b, "is not aligned");

  b = good;
  put_be(b, 8 + 20, be32(good, 8), 4);
  put_be(b, 8 + 24, be32(good, 12), 4);
  expect_error_containing(b, "two slices are for");

  b = good;
  put_be(b, 8, 0x0200000c, 4);  // the table says arm64_32 for a slice that is not
  expect_error_containing(b, "the universal header says arm64_32");

  b = good;  // a slice's own header damaged: the message says which slice
  b[offset(0) + 16] = std::byte{0xff};
  b[offset(0) + 17] = std::byte{0xff};
  expect_error_containing(b, "slice 1 of 2");

  b = good;  // more architectures than the table has room for before slice 1
  put_be(b, 4, 19, 4);
  expect_error_containing(b, "slice 3");
}

// A deterministic mini-fuzz over the bytes the reader looks at: the
// universal header and each slice's header and load commands. (`scripts/fuzz
// 600 macho` runs the real libFuzzer target under ASan/UBSan.)
TEST_F(MachOMalformed, RandomMutationsNeverEscape) {
  const auto lib = universal2();
  if (lib.empty()) GTEST_SKIP() << "llvm-lipo is not installed";
  const auto good = read_bytes(lib);
  const std::vector<std::size_t> regions = {0, be32(good, 16), be32(good, 36)};
  std::mt19937_64 rng(20250611);
  int errors = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    auto b = good;
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = regions[rng() % regions.size()] + rng() % 700;
      switch (rng() % 3) {
        case 0: b[at] = static_cast<std::byte>(rng()); break;
        case 1: b[at] = std::byte{0xff}; break;
        default: b[at] = std::byte{0}; break;
      }
    }
    try {
      parse_macho(b, "mutant.dylib");
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace kwheel
