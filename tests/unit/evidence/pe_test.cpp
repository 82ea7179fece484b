#include "kwheel/evidence/pe.hpp"

#include <gtest/gtest.h>

#include <random>

#include "evidence/foreign_binary_fixture.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/macho.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

// IMAGE_FILE_MACHINE_* values the assertions compare with.
constexpr std::uint16_t kMachineI386 = 0x14c;
constexpr std::uint16_t kMachineArmNt = 0x1c4;
constexpr std::uint16_t kMachineAmd64 = 0x8664;
constexpr std::uint16_t kMachineArm64 = 0xaa64;

const char* kSource = "__declspec(dllexport) int kernel(int x) { return x + 1; }\n";

// Parse must throw Error(input) naming the buffer and saying `fragment`.
void expect_error_containing(const std::vector<std::byte>& bytes, const std::string& fragment) {
  expect_refusal(parse_pe, bytes, "patched.dll", fragment);
}

// Builds real PE images with clang and lld-link; -nostdlib and /noentry
// need no Windows SDK or CRT.
class PeTest : public ForeignBinaryTest {
 protected:
  void SetUp() override {
    skip_without_clang_and("lld-link", have_tool("lld-link"));
  }

  fs::path dll(const std::string& name, const std::string& target) {
    return clang(name, kSource, "--target=" + target + " -fuse-ld=lld -nostdlib -shared -Wl,/noentry");
  }

  std::vector<std::byte> amd64() { return read_bytes(dll("amd64.dll", "x86_64-pc-windows-msvc")); }
};

using PeReader = PeTest;
using PeMalformed = PeTest;

std::uint32_t lfanew(const std::vector<std::byte>& b) { return peek<std::uint32_t>(b, 0x3c); }

TEST_F(PeReader, Amd64Dll) {
  const auto lib = dll("k.dll", "x86_64-pc-windows-msvc");
  EXPECT_TRUE(is_pe_file(lib));
  const PeInfo p = read_pe(lib);
  EXPECT_EQ(p.name, lib.string());
  EXPECT_EQ(p.machine, kMachineAmd64);
  EXPECT_EQ(p.arch, "amd64");
  EXPECT_TRUE(p.dll);
  EXPECT_TRUE(p.pe32_plus);
}

TEST_F(PeReader, Arm64Dll) {
  const PeInfo p = read_pe(dll("k.dll", "aarch64-pc-windows-msvc"));
  EXPECT_EQ(p.machine, kMachineArm64);
  EXPECT_EQ(p.arch, "arm64");
  EXPECT_TRUE(p.dll);
  EXPECT_TRUE(p.pe32_plus);
}

TEST_F(PeReader, I386DllIsWin32) {
  const PeInfo p = read_pe(dll("k.dll", "i686-pc-windows-msvc"));
  EXPECT_EQ(p.machine, kMachineI386);
  EXPECT_EQ(p.arch, "win32");
  EXPECT_TRUE(p.dll);
  EXPECT_FALSE(p.pe32_plus);
}

// Machines without a wheel tag are named by number: ARMNT (32-bit ARM, a
// real image) and ARM64EC (0xa641, the machine of ARM64EC objects; clang 14
// links none, so a real image is relabelled).
TEST_F(PeReader, OtherMachinesByNumber) {
  const PeInfo arm = read_pe(dll("k.dll", "thumbv7-pc-windows-msvc"));
  EXPECT_EQ(arm.machine, kMachineArmNt);
  EXPECT_EQ(arm.arch, "machine_0x1c4");
  auto b = amd64();
  poke<std::uint16_t>(b, lfanew(b) + 4, 0xa641);
  const PeInfo ec = parse_pe(b, "ec.dll");
  EXPECT_EQ(ec.machine, 0xa641);
  EXPECT_EQ(ec.arch, "machine_0xa641");
}

TEST_F(PeReader, ExecutableIsNotADll) {
  write_file(d_ / "m.c", kSource);
  sh(d_.path(), "clang --target=x86_64-pc-windows-msvc -fuse-ld=lld -nostdlib -Wl,/entry:kernel -Wl,/subsystem:console "
                "m.c -o m.exe");
  const PeInfo p = read_pe(d_ / "m.exe");
  EXPECT_EQ(p.arch, "amd64");
  EXPECT_FALSE(p.dll);
  EXPECT_NE(load_refusal(p).value_or("").find("no IMAGE_FILE_DLL"), std::string::npos);
  EXPECT_EQ(load_refusal(read_pe(dll("k.dll", "x86_64-pc-windows-msvc"))), std::nullopt);
}

TEST_F(PeReader, MagicPrefilter) {
  const auto b = amd64();
  EXPECT_TRUE(has_pe_magic(b));
  // A head that stops before the signature is still plausible...
  EXPECT_TRUE(has_pe_magic(std::span<const std::byte>(b).first(64)));
  // ... one that reaches a wrong signature is not.
  auto wrong = b;
  wrong[lfanew(b)] = std::byte{'X'};
  EXPECT_FALSE(has_pe_magic(wrong));
  auto far = b;
  poke<std::uint32_t>(far, 0x3c, 0x10000000);  // 256 MiB: the Windows loader's limit
  EXPECT_FALSE(has_pe_magic(far));
  EXPECT_FALSE(has_pe_magic(std::span<const std::byte>(b).first(63)));
}

TEST_F(PeMalformed, NotPe) {
  write_file(d_ / "text.dll", "MZ but only text\n");
  const std::string what = error_of([&] { read_pe(d_ / "text.dll"); });
  EXPECT_NE(what.find("text.dll: not a PE image"), std::string::npos) << what;
  EXPECT_FALSE(is_pe_file(d_ / "text.dll"));

  const auto so = build_c(d_, "libelf.so", "int f(void) { return 1; }\n");
  EXPECT_FALSE(is_pe_file(so));
  EXPECT_NE(error_of([&] { read_pe(so); }).find("not a PE image"), std::string::npos);

  // Neither reader takes the other's files.
  const auto lib = dll("k.dll", "x86_64-pc-windows-msvc");
  EXPECT_FALSE(is_macho_file(lib));
  EXPECT_NE(error_of([&] { read_macho(lib); }).find("not a Mach-O file"), std::string::npos);

  error_of([&] { read_pe(d_ / "missing.dll"); }, ErrorKind::io);
  error_of([&] { read_pe(d_.path()); });
}

TEST_F(PeMalformed, HeadersOutOfPlace) {
  const auto good = amd64();
  const std::uint32_t pe = lfanew(good);
  const std::size_t optional = pe + 24;

  auto b = good;
  poke<std::uint32_t>(b, 0x3c, static_cast<std::uint32_t>(good.size() - 2));  // e_lfanew at the very end
  expect_error_containing(b, "runs past the end of the file");

  b = good;
  b[pe + 1] = std::byte{'X'};
  expect_error_containing(b, "not a PE image");  // the prefilter sees the signature

  b = good;
  poke<std::uint16_t>(b, pe + 4 + 16, 0);  // SizeOfOptionalHeader
  expect_error_containing(b, "an object file, not an image");

  b = good;
  poke<std::uint16_t>(b, pe + 4 + 16, 100);
  expect_error_containing(b, "less than the 112 it needs");

  b = good;
  poke<std::uint16_t>(b, pe + 4 + 16, 0xffff);
  expect_error_containing(b, "optional header");

  b = good;
  poke<std::uint16_t>(b, optional, 0x107);  // ROM image
  expect_error_containing(b, "neither PE32");

  b = good;
  poke<std::uint16_t>(b, pe + 4 + 2, 0xffff);  // NumberOfSections
  expect_error_containing(b, "section headers run past the end");
}

TEST_F(PeMalformed, EveryTruncationOfTheHeadersIsAnError) {
  const auto full = amd64();
  const std::size_t sections = peek<std::uint16_t>(full, lfanew(full) + 6);
  const std::size_t needed = lfanew(full) + 24 + peek<std::uint16_t>(full, lfanew(full) + 20) + 40 * sections;
  for (std::size_t len = 0; len < needed; ++len) {
    std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_THROW(parse_pe(cut, "cut.dll"), Error) << "prefix of " << len << " bytes";
  }
}

TEST_F(PeMalformed, RandomMutationsNeverEscape) {
  const auto good = amd64();
  std::mt19937_64 rng(20250612);
  int errors = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    auto b = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % 512;  // the headers
      b[at] = rng() % 2 ? static_cast<std::byte>(rng()) : std::byte{0xff};
    }
    try {
      parse_pe(b, "mutant.dll");
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace kwheel
