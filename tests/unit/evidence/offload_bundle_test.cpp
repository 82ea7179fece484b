// Offload bundles as clang-offload-bundler writes them at test time (real
// AMD GPU code objects where this clang can build them), embedded in ELF
// objects the way a HIP link embeds them, compressed by clang 18+'s bundler
// (-compress: zstd) and the way LLVM's CCOB writer lays them out (zlib and
// zstd, versions 1-3), and broken in each way the reader must refuse.
// Expected targets are what the bundler was asked to bundle.
#include "kwheel/evidence/offload_bundle.hpp"

#include "kwheel/evidence/gpu_code.hpp"
#include "kwheel/base/byte_budget.hpp"
#include "kwheel/base/mapped_file.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <limits>
#include <thread>

#include "elf_fixtures.hpp"
#include "error_support.hpp"
#include "kwheel/base/error.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

using Bytes = std::vector<std::byte>;

// One bundle entry: its id and the file (or contents) bundled under it.
struct Entry {
  std::string id;
  std::string contents;
};

// The oldest installed (Debian's LLVM 14 beside clang-19): LLVM 19 rewrites
// the ids it is given (a legacy "hip-amdgcn-amd-amdhsa-gfx906" gains "--",
// a host id ending in '-' is written twice over), and these tests hold the
// bundler to the ids they asked for.
std::string find_bundler() {
  if (have_tool("clang-offload-bundler")) return "clang-offload-bundler";
  for (int v = 10; v <= 30; ++v) {
    const std::string p = "/usr/lib/llvm-" + std::to_string(v) + "/bin/clang-offload-bundler";
    if (fs::exists(p)) return p;
  }
  return "";
}

std::string find_objcopy() {
  if (have_tool("llvm-objcopy")) return "llvm-objcopy";
  const fs::path bundler = find_bundler();
  if (bundler.has_parent_path() && fs::exists(bundler.parent_path() / "llvm-objcopy")) {
    return (bundler.parent_path() / "llvm-objcopy").string();
  }
  return "";
}

// clang-offload-bundler -compress (LLVM 18+; Debian's clang-19). It
// compresses with zstd where LLVM was built with it, as Debian's is.
std::string find_compressing_bundler() {
  for (int v = 30; v >= 18; --v) {
    const std::string p = "/usr/lib/llvm-" + std::to_string(v) + "/bin/clang-offload-bundler";
    if (fs::exists(p)) return p;
  }
  return "";
}

#define REQUIRE_TOOL(path, what) \
  if ((path).empty()) GTEST_SKIP() << what << " is not installed"

Bytes as_bytes(std::string_view s) {
  Bytes b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());  // an empty vector's data() may be null
  return b;
}

template <typename T>
void put(Bytes& b, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) b.push_back(static_cast<std::byte>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff));
}

void append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

void pad_to(Bytes& b, std::size_t align) { b.resize((b.size() + align - 1) / align * align); }

// A real AMD GPU code object (HIP's are shared objects) when this clang can
// build one for `target_id`, else a stand-in: the bundler stores entries as
// opaque bytes either way.
std::string code_object(const TempDir& d, const std::string& target_id) {
  std::string stem = "co-" + target_id;
  std::replace_if(stem.begin(), stem.end(), [](char c) { return c == ':' || c == '+'; }, '_');
  write_file(d / "kernel.c", "__attribute__((visibility(\"default\"))) int kernel_entry(int x) { return 3 * x + 1; }\n");
  const std::string cmd = "cd '" + d.path().string() + "' && (clang --target=amdgcn-amd-amdhsa -mcpu=" + target_id +
                          " -nogpulib -O1 -c kernel.c -o " + stem + ".o && ld.lld -shared " + stem + ".o -o " + stem +
                          ".co) >/dev/null 2>&1";
  if (std::system(cmd.c_str()) == 0) return read_text(d / (stem + ".co"));
  return "stand-in code object for " + target_id;
}

// Runs the real bundler as HIP's link step does (-type=o, an empty host
// input, -bundle-align=4096) and returns the bundle's bytes.
Bytes bundle_with_tool(const TempDir& d, const std::string& out, const std::vector<Entry>& entries,
                       const std::string& type = "o", const std::string& bundler = find_bundler(),
                       const std::string& flags = "") {
  std::string targets, inputs;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string in = out + ".in" + std::to_string(i);
    write_file(d / in, entries[i].contents);
    targets += (i ? "," : "") + entries[i].id;
    inputs += (i ? "," : "") + in;
  }
  sh(d.path(), bundler + " -type=" + type + " -bundle-align=4096 -targets=" + targets + " -inputs=" + inputs +
                   " -outputs=" + out + flags);
  return read_bytes(d / out);
}

// The uncompressed layout of ClangOffloadBundler.html, with the offsets
// clang's BinaryFileHandler::WriteHeader gives: each code object aligned
// to `align` from the bundle's start. The ByteForByteLikeTheBundler test
// holds it to the real tool.
Bytes write_bundle(const std::vector<Entry>& entries, std::size_t align = 4096) {
  std::uint64_t at = 24 + 8;
  for (const Entry& e : entries) at += 24 + e.id.size();
  Bytes b = as_bytes("__CLANG_OFFLOAD_BUNDLE__");
  put<std::uint64_t>(b, entries.size());
  std::vector<std::uint64_t> offsets;
  for (const Entry& e : entries) {
    at = (at + align - 1) / align * align;
    offsets.push_back(at);
    put<std::uint64_t>(b, at);
    put<std::uint64_t>(b, e.contents.size());
    put<std::uint64_t>(b, e.id.size());
    append(b, as_bytes(e.id));
    at += e.contents.size();
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    b.resize(offsets[i]);
    append(b, as_bytes(entries[i].contents));
  }
  return b;
}

// LLVM's truncated hash: the first 8 bytes of the MD5, little-endian
// (MD5Result::low()).
std::uint64_t truncated_md5(const Bytes& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EXPECT_EQ(EVP_Digest(data.data(), data.size(), md, &len, EVP_md5(), nullptr), 1);
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | md[i];
  return v;
}

Bytes zlib_compress(const Bytes& data) {
  uLongf len = compressBound(static_cast<uLong>(data.size()));
  Bytes out(len);
  EXPECT_EQ(compress2(reinterpret_cast<Bytef*>(out.data()), &len, reinterpret_cast<const Bytef*>(data.data()),
                      static_cast<uLong>(data.size()), 6),  // llvm::compression::zlib::DefaultCompression
            Z_OK);
  out.resize(len);
  return out;
}

// A CCOB container (CompressedOffloadBundle::compress's layout, versions
// 1-3) around `compressed`, which decompresses to `uncompressed`.
Bytes ccob(std::uint16_t version, std::uint16_t method, const Bytes& compressed, const Bytes& uncompressed) {
  Bytes b = as_bytes("CCOB");
  put(b, version);
  put(b, method);
  const std::uint64_t header = version == 1 ? 20 : version == 2 ? 24 : 32;
  if (version == 2) put<std::uint32_t>(b, static_cast<std::uint32_t>(header + compressed.size()));
  if (version == 3) put<std::uint64_t>(b, header + compressed.size());
  if (version == 3) {
    put<std::uint64_t>(b, uncompressed.size());
  } else {
    put<std::uint32_t>(b, static_cast<std::uint32_t>(uncompressed.size()));
  }
  put(b, truncated_md5(uncompressed));
  append(b, compressed);
  return b;
}

Bytes zlib_ccob(std::uint16_t version, const Bytes& bundle) { return ccob(version, 0, zlib_compress(bundle), bundle); }

// As llvm::compression::zstd::compress with long-distance matching, the
// bundler's setting: one frame that records its content size.
Bytes zstd_compress(const Bytes& data) {
  const std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_enableLongDistanceMatching, 1);
  Bytes out(ZSTD_compressBound(data.size()));
  const std::size_t n = ZSTD_compress2(cctx.get(), out.data(), out.size(), data.data(), data.size());
  EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  out.resize(n);
  return out;
}

// A frame that does not record its content size (a streaming writer that
// was not told it), holding `zeros` zero bytes: a zstd bomb when large.
Bytes zstd_stream_of_zeros(std::size_t zeros) {
  const std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, 1);
  const Bytes chunk(1 << 20);
  Bytes out(1 << 20);
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  for (std::size_t left = zeros; left > 0;) {
    const std::size_t n = std::min(left, chunk.size());
    ZSTD_inBuffer i{chunk.data(), n, 0};
    while (i.pos < i.size) EXPECT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx.get(), &o, &i, ZSTD_e_continue)));
    left -= n;
  }
  ZSTD_inBuffer none{nullptr, 0, 0};
  while (ZSTD_compressStream2(cctx.get(), &o, &none, ZSTD_e_end) != 0) {
  }
  out.resize(o.pos);
  return out;
}

Bytes zstd_ccob(std::uint16_t version, const Bytes& bundle) { return ccob(version, 1, zstd_compress(bundle), bundle); }

// The bytes of section `name` in an ELF64 little-endian object this suite built.
Bytes section_named(const Bytes& elf, const std::string& name) {
  const auto shoff = peek<std::uint64_t>(elf, 40);
  const auto shnum = peek<std::uint16_t>(elf, 60);
  const auto names = peek<std::uint64_t>(elf, shoff + peek<std::uint16_t>(elf, 62) * 64 + 24);
  for (std::size_t i = 0; i < shnum; ++i) {
    const std::size_t h = shoff + i * 64;
    if (name == reinterpret_cast<const char*>(elf.data()) + names + peek<std::uint32_t>(elf, h)) {
      const auto off = peek<std::uint64_t>(elf, h + 24);
      return Bytes(elf.begin() + static_cast<std::ptrdiff_t>(off),
                   elf.begin() + static_cast<std::ptrdiff_t>(off + peek<std::uint64_t>(elf, h + 32)));
    }
  }
  ADD_FAILURE() << "no section " << name;
  return {};
}

const OffloadTarget* find_target(const OffloadBundle& b, const std::string& id) {
  for (const auto& t : b.targets) {
    if (t.entry_id == id) return &t;
  }
  ADD_FAILURE() << "no entry " << id;
  return nullptr;
}

void expect_target(const OffloadBundle& b, const Entry& e, const std::string& kind, const std::string& triple,
                   const std::string& target_id, const std::string& processor) {
  const OffloadTarget* t = find_target(b, e.id);
  if (t == nullptr) return;
  EXPECT_EQ(t->kind, kind) << e.id;
  EXPECT_EQ(t->triple, triple) << e.id;
  EXPECT_EQ(t->target_id, target_id) << e.id;
  EXPECT_EQ(t->processor, processor) << e.id;
  EXPECT_EQ(t->size, e.contents.size()) << e.id;
}

using Strings = std::vector<std::string>;

const Entry kHost{"host-x86_64-unknown-linux-gnu-", ""};

// Three HIP targets, two of them real code objects from this clang.
std::vector<Entry> hip_entries(const TempDir& d) {
  return {kHost,
          {"hipv4-amdgcn-amd-amdhsa--gfx90a", code_object(d, "gfx90a")},
          {"hipv4-amdgcn-amd-amdhsa--gfx908:xnack-", code_object(d, "gfx908:xnack-")},
          {"hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", code_object(d, "gfx942:sramecc+:xnack-")}};
}

void expect_hip_entries(const OffloadBundle& b, const std::vector<Entry>& e) {
  ASSERT_EQ(b.targets.size(), 4u);
  expect_target(b, e[0], "host", "x86_64-unknown-linux-gnu", "", "");
  expect_target(b, e[1], "hipv4", "amdgcn-amd-amdhsa", "gfx90a", "gfx90a");
  expect_target(b, e[2], "hipv4", "amdgcn-amd-amdhsa", "gfx908:xnack-", "gfx908");
  expect_target(b, e[3], "hipv4", "amdgcn-amd-amdhsa", "gfx942:sramecc+:xnack-", "gfx942");
}

TEST(OffloadBundle, ReadsWhatTheBundlerWrote) {
  REQUIRE_TOOL(find_bundler(), "clang-offload-bundler");
  TempDir d;
  const auto entries = hip_entries(d);
  const auto bundles = parse_offload_bundles(bundle_with_tool(d, "fat.hipfb", entries), "fat.hipfb");
  ASSERT_EQ(bundles.size(), 1u);
  EXPECT_FALSE(bundles[0].compressed);
  expect_hip_entries(bundles[0], entries);
  EXPECT_EQ(gfx_targets(bundles), (Strings{"gfx908", "gfx90a", "gfx942"}));
}

TEST(OffloadBundle, ByteForByteLikeTheBundler) {
  REQUIRE_TOOL(find_bundler(), "clang-offload-bundler");
  TempDir d;
  const auto entries = hip_entries(d);
  EXPECT_EQ(write_bundle(entries), bundle_with_tool(d, "fat.hipfb", entries));
}

// Old clang's ids (three-field triple, no "--"), a bare host triple, OpenMP,
// a generic processor (its name holds '-'), and the bitcode file type.
TEST(OffloadBundle, LegacyIdsOtherKindsAndBitcode) {
  REQUIRE_TOOL(find_bundler(), "clang-offload-bundler");
  TempDir d;
  const std::vector<Entry> entries = {{"host-x86_64-unknown-linux", "host bitcode stand-in"},
                                      {"hip-amdgcn-amd-amdhsa-gfx906", code_object(d, "gfx906")},
                                      {"openmp-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "openmp stand-in"},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx10-3-generic", "generic stand-in"}};
  const auto bundles = parse_offload_bundles(bundle_with_tool(d, "fat.bc", entries, "bc"), "fat.bc");
  ASSERT_EQ(bundles.size(), 1u);
  ASSERT_EQ(bundles[0].targets.size(), 4u);
  expect_target(bundles[0], entries[0], "host", "x86_64-unknown-linux", "", "");
  expect_target(bundles[0], entries[1], "hip", "amdgcn-amd-amdhsa", "gfx906", "gfx906");
  expect_target(bundles[0], entries[2], "openmp", "amdgcn-amd-amdhsa", "gfx90a:sramecc+:xnack-", "gfx90a");
  expect_target(bundles[0], entries[3], "hipv4", "amdgcn-amd-amdhsa", "gfx10-3-generic", "gfx10-3-generic");
  EXPECT_EQ(gfx_targets(bundles), (Strings{"gfx10-3-generic", "gfx906", "gfx90a"}));
}

// The section route: the bundle as the .hip_fatbin of a host library.
TEST(OffloadBundle, HipFatbinSectionOfASharedObject) {
  REQUIRE_TOOL(find_bundler(), "clang-offload-bundler");
  REQUIRE_TOOL(find_objcopy(), "llvm-objcopy");
  TempDir d;
  const auto entries = hip_entries(d);
  write_bytes(d / "fat.hipfb", bundle_with_tool(d, "fat.hipfb", entries));
  build_c(d, "libhost.so", "int host_stub(void) { return 0; }\n");
  sh(d.path(), find_objcopy() +
                   " --add-section .hip_fatbin=fat.hipfb --set-section-flags .hip_fatbin=alloc,readonly"
                   " libhost.so libkernel.so");
  const auto bundles = parse_offload_bundles(section_named(read_bytes(d / "libkernel.so"), ".hip_fatbin"), "libkernel.so");
  ASSERT_EQ(bundles.size(), 1u);
  expect_hip_entries(bundles[0], entries);
  EXPECT_EQ(gfx_targets(bundles), (Strings{"gfx908", "gfx90a", "gfx942"}));
  // The route the build and inspect take: the ELF's named section.
  const MappedFile so(d / "libkernel.so");
  const ObjectGpuCode code = read_gpu_code(so.bytes(), parse_elf(so.bytes(), "libkernel.so"), "libkernel.so");
  EXPECT_EQ(code.gfx, (Strings{"gfx908", "gfx90a", "gfx942"}));
  EXPECT_TRUE(code.cuda.empty());
}

// Each translation unit's object carries its own .hip_fatbin, emitted as
// clang's HIP driver emits it (HIPUtility.cpp: .p2align 12, .incbin of the
// bundle); the link concatenates them, zero-padded, into one section.
TEST(OffloadBundle, LinkConcatenatesOneBundlePerTranslationUnit) {
  REQUIRE_TOOL(find_bundler(), "clang-offload-bundler");
  TempDir d;
  const std::vector<Entry> a = {kHost, {"hipv4-amdgcn-amd-amdhsa--gfx90a", code_object(d, "gfx90a")}};
  const std::vector<Entry> b = {kHost,
                                {"hipv4-amdgcn-amd-amdhsa--gfx1100", code_object(d, "gfx1100")},
                                {"hipv4-amdgcn-amd-amdhsa--gfx942:xnack+", code_object(d, "gfx942:xnack+")}};
  write_bytes(d / "a.hipfb", bundle_with_tool(d, "a.hipfb", a));
  write_bytes(d / "b.hipfb", bundle_with_tool(d, "b.hipfb", b));
  for (const std::string tu : {"a", "b"}) {
    write_file(d / (tu + ".c"), "int tu_" + tu + "(void) { return 1; }\n");
    write_file(d / (tu + "_fatbin.s"), "  .section .hip_fatbin,\"a\",@progbits\n  .p2align 12\n__hip_fatbin_" + tu +
                                           ":\n  .incbin \"" + tu + ".hipfb\"\n  .section .note.GNU-stack,\"\",@progbits\n");
    sh(d.path(), "cc -fPIC -c " + tu + ".c -o " + tu + ".o && cc -c " + tu + "_fatbin.s -o " + tu + "_fatbin.o");
  }
  sh(d.path(), "cc -shared a.o a_fatbin.o b.o b_fatbin.o -o libtwo.so");
  const Bytes section = section_named(read_bytes(d / "libtwo.so"), ".hip_fatbin");
  const std::size_t second = section.size() - read_bytes(d / "b.hipfb").size();
  ASSERT_GT(section.size(), 4096u);
  ASSERT_EQ(std::memcmp(section.data() + second, "__CLANG_OFFLOAD_BUNDLE__", 24), 0) << "the link did not put b's bundle last";
  EXPECT_EQ(second % 4096, 0u) << "the link did not keep HIP's 4096-byte alignment";

  const auto bundles = parse_offload_bundles(section, "libtwo.so");
  ASSERT_EQ(bundles.size(), 2u);
  ASSERT_EQ(bundles[0].targets.size(), 2u);
  expect_target(bundles[0], a[1], "hipv4", "amdgcn-amd-amdhsa", "gfx90a", "gfx90a");
  ASSERT_EQ(bundles[1].targets.size(), 3u);
  expect_target(bundles[1], b[1], "hipv4", "amdgcn-amd-amdhsa", "gfx1100", "gfx1100");
  expect_target(bundles[1], b[2], "hipv4", "amdgcn-amd-amdhsa", "gfx942:xnack+", "gfx942");
  EXPECT_EQ(gfx_targets(bundles), (Strings{"gfx1100", "gfx90a", "gfx942"}));
}

// What clang-offload-bundler -compress writes (clang 14 cannot): the same
// bundle in each CCOB version, alone and mixed with others in one section.
TEST(OffloadBundle, ZlibCompressedBundlesInEveryVersion) {
  REQUIRE_TOOL(find_bundler(), "clang-offload-bundler");
  TempDir d;
  const auto entries = hip_entries(d);
  const Bytes plain = bundle_with_tool(d, "fat.hipfb", entries);
  for (std::uint16_t version : {1, 2, 3}) {
    const auto bundles = parse_offload_bundles(zlib_ccob(version, plain), "ccob.so");
    ASSERT_EQ(bundles.size(), 1u) << version;
    EXPECT_TRUE(bundles[0].compressed);
    expect_hip_entries(bundles[0], entries);
  }
  // Version 1 records no total size: its zlib stream's end must be found.
  Bytes section = zlib_ccob(1, plain);
  pad_to(section, 4096);
  const std::vector<Entry> other = {kHost, {"hipv4-amdgcn-amd-amdhsa--gfx1201", "gfx1201 stand-in"}};
  append(section, zlib_ccob(2, write_bundle(other)));
  pad_to(section, 4096);
  append(section, write_bundle(other));
  pad_to(section, 4096);
  const auto bundles = parse_offload_bundles(section, "mixed.so");
  ASSERT_EQ(bundles.size(), 3u);
  EXPECT_TRUE(bundles[0].compressed);
  EXPECT_TRUE(bundles[1].compressed);
  EXPECT_FALSE(bundles[2].compressed);
  EXPECT_EQ(gfx_targets(bundles), (Strings{"gfx1201", "gfx908", "gfx90a", "gfx942"}));
}

// Debian's clang-19 bundler with -compress: a zstd CCOB version 2, as
// ROCm 6.4 and 7.0 ship them. Its frame, put in versions 1 and 3 as well,
// is read the same.
TEST(OffloadBundle, ZstdCompressedByTheBundler) {
  const std::string bundler = find_compressing_bundler();
  REQUIRE_TOOL(bundler, "clang-offload-bundler 18+ (Debian's clang-19)");
  TempDir d;
  // The host as clang 20+ names it to the bundler; LLVM 19 stores it with
  // the empty environment's '-', as the ROCm objects carry it.
  auto entries = hip_entries(d);
  entries[0].id = "host-x86_64-unknown-linux-gnu";
  const Bytes plain = bundle_with_tool(d, "fat.hipfb", entries, "o", bundler);
  const Bytes packed = bundle_with_tool(d, "fat.ccob", entries, "o", bundler, " -compress");
  entries[0].id = kHost.id;
  ASSERT_EQ(std::memcmp(packed.data(), "CCOB", 4), 0);
  ASSERT_EQ(peek<std::uint16_t>(packed, 6), 1u) << "the bundler did not use zstd";
  const auto bundles = parse_offload_bundles(packed, "fat.ccob");
  ASSERT_EQ(bundles.size(), 1u);
  EXPECT_TRUE(bundles[0].compressed);
  expect_hip_entries(bundles[0], entries);
  EXPECT_EQ(gfx_targets(bundles), (Strings{"gfx908", "gfx90a", "gfx942"}));

  const std::uint16_t version = peek<std::uint16_t>(packed, 4);
  const std::size_t header = version == 3 ? 32 : 24;
  const Bytes frame(packed.begin() + static_cast<std::ptrdiff_t>(header), packed.end());
  for (std::uint16_t v : {1, 2, 3}) {
    const auto again = parse_offload_bundles(ccob(v, 1, frame, plain), "fat.ccob");
    ASSERT_EQ(again.size(), 1u) << v;
    expect_hip_entries(again[0], entries);
  }
}

// Both methods in every version, alone and mixed in one section: a
// version 1 zstd container ends where its frame ends.
TEST(OffloadBundle, ZstdCompressedBundlesInEveryVersion) {
  TempDir d;
  const auto entries = hip_entries(d);
  const Bytes plain = write_bundle(entries);
  for (std::uint16_t version : {1, 2, 3}) {
    const auto bundles = parse_offload_bundles(zstd_ccob(version, plain), "ccob.so");
    ASSERT_EQ(bundles.size(), 1u) << version;
    EXPECT_TRUE(bundles[0].compressed);
    expect_hip_entries(bundles[0], entries);
  }
  Bytes section = zstd_ccob(1, plain);
  pad_to(section, 4096);
  const std::vector<Entry> other = {kHost, {"hipv4-amdgcn-amd-amdhsa--gfx1201", "gfx1201 stand-in"}};
  append(section, zlib_ccob(1, write_bundle(other)));
  pad_to(section, 4096);
  append(section, zstd_ccob(3, write_bundle({kHost, {"hipv4-amdgcn-amd-amdhsa--gfx950", "gfx950 stand-in"}})));
  append(section, write_bundle(other));
  const auto bundles = parse_offload_bundles(section, "mixed.so");
  ASSERT_EQ(bundles.size(), 4u);
  EXPECT_TRUE(bundles[0].compressed && bundles[1].compressed && bundles[2].compressed);
  EXPECT_FALSE(bundles[3].compressed);
  EXPECT_EQ(gfx_targets(bundles), (Strings{"gfx1201", "gfx908", "gfx90a", "gfx942", "gfx950"}));
}

TEST(OffloadBundle, EmptyOrZeroSectionHoldsNoBundle) {
  EXPECT_TRUE(parse_offload_bundles({}, "empty.so").empty());
  EXPECT_TRUE(parse_offload_bundles(Bytes(8192), "zeros.so").empty());
}

TEST(OffloadBundle, MagicPrefilter) {
  EXPECT_TRUE(has_offload_bundle_magic(write_bundle({kHost})));
  EXPECT_TRUE(has_offload_bundle_magic(as_bytes("CCOB\x03")));
  EXPECT_FALSE(has_offload_bundle_magic(as_bytes("__CLANG_OFFLOAD_BUNDLE")));
  EXPECT_FALSE(has_offload_bundle_magic(as_bytes("\x7f" "ELF")));
  EXPECT_FALSE(has_offload_bundle_magic({}));
}

TEST(OffloadBundle, GfxTargetsAreSortedUniqueAndSkipHost) {
  const auto target = [](std::string kind, std::string processor) {
    OffloadTarget t;
    t.kind = std::move(kind);
    t.processor = std::move(processor);
    return t;
  };
  OffloadBundle a, b;
  a.targets = {target("hipv4", "gfx942"), target("host", "x86_64")};
  b.targets = {target("hipv4", "gfx942"), target("hipv4", ""), target("hip", "gfx1030")};
  EXPECT_EQ(gfx_targets({a, b}), (Strings{"gfx1030", "gfx942"}));
  EXPECT_TRUE(gfx_targets({}).empty());
}

// --- malformed input: each an Error(input) naming the file ---

// A small hand-written bundle (align 8): entry 0 the host, entry 1 "CODE".
Bytes small_bundle() { return write_bundle({kHost, {"hipv4-amdgcn-amd-amdhsa--gfx90a", "CODE"}}, 8); }
constexpr std::size_t kEntry0 = 32;                      // entry 0's offset field
constexpr std::size_t kEntry1 = kEntry0 + 24 + 30;       // after "host-x86_64-unknown-linux-gnu-"

void expect_refused(const Bytes& bytes, const std::string& fragment) {
  const std::string msg = error_of([&] { parse_offload_bundles(bytes, "bad.so"); });
  EXPECT_EQ(msg.rfind("bad.so: ", 0), 0u) << msg;
  EXPECT_NE(msg.find(fragment), std::string::npos) << "expected '" << fragment << "' in: " << msg;
}

template <typename T>
Bytes patched(Bytes b, std::size_t off, T v) {
  poke<T>(b, off, v);
  return b;
}

TEST(OffloadBundle, SmallBundleIsWellFormed) {
  const auto bundles = parse_offload_bundles(small_bundle(), "ok.so");
  ASSERT_EQ(bundles.size(), 1u);
  ASSERT_EQ(bundles[0].targets.size(), 2u);
  EXPECT_EQ(bundles[0].targets[1].processor, "gfx90a");
  EXPECT_EQ(bundles[0].targets[1].size, 4u);
}

TEST(OffloadBundle, MalformedUncompressedBundles) {
  const Bytes b = small_bundle();
  expect_refused(Bytes(b.begin(), b.begin() + 10), "ends inside an offload bundle's magic");
  expect_refused(Bytes(b.begin(), b.begin() + 24), "is cut off: the entry count");
  expect_refused(patched<std::uint64_t>(b, 24, std::uint64_t{1} << 62), "declares 4611686018427387904 entries");
  expect_refused(patched<std::uint64_t>(b, 24, 3), "is cut off");
  expect_refused(patched<std::uint64_t>(b, kEntry1, std::uint64_t{1} << 40), "entry 1 ('hipv4-amdgcn-amd-amdhsa--gfx90a')'s code object");
  expect_refused(patched<std::uint64_t>(b, kEntry1 + 8, b.size()), "entry 1 ('hipv4-amdgcn-amd-amdhsa--gfx90a')'s code object");
  expect_refused(patched<std::uint64_t>(patched<std::uint64_t>(b, kEntry1, ~std::uint64_t{0} - 1), kEntry1 + 8, 4), "runs past");
  expect_refused(patched<std::uint64_t>(b, kEntry1, 0), "inside its entry table");
  expect_refused(patched<std::uint64_t>(b, kEntry0 + 16, std::uint64_t{1} << 63), "id is 9223372036854775808 bytes long");
  expect_refused(patched<std::uint64_t>(b, kEntry1 + 16, 1000), "is cut off: entry 1's id");
  Bytes junk = b;
  append(junk, as_bytes("\x01junk"));
  expect_refused(junk, "is neither zero padding nor an offload bundle");
  // Every truncation of a well-formed bundle is refused, never misread.
  for (std::size_t n = 1; n < b.size(); ++n) expect_refused(Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n)), "bad.so");
}

TEST(OffloadBundle, MalformedEntryIds) {
  const auto with_id = [](const std::string& id) { return write_bundle({kHost, {id, "CODE"}}, 8); };
  expect_refused(with_id("gfx90a"), "is not <kind>-<arch>-<vendor>-<os>");
  expect_refused(with_id("hipv4-amdgcn"), "is not <kind>-<arch>-<vendor>-<os>");
  expect_refused(with_id("-amdgcn-amd-amdhsa--gfx90a"), "empty offload kind");
  expect_refused(with_id("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack"), "target id");
  expect_refused(with_id("hipv4-amdgcn-amd-amdhsa--:xnack+"), "target id");
  expect_refused(with_id("hipv4-amdgcn-amd-amdhsa--gfx90a::xnack+"), "target id");
  expect_refused(with_id("hipv4-amd gcn-amd-amdhsa--gfx90a"), "characters");
  expect_refused(with_id(std::string("hipv4-amdgcn-amd-amdhsa--gfx90a\0", 32)), "characters");
  expect_refused(with_id("hipv4-amd:gcn-amd-amdhsa--gfx90a"), "malformed target triple");
}

TEST(OffloadBundle, MalformedCompressedBundles) {
  const Bytes plain = small_bundle();
  const Bytes v3 = zlib_ccob(3, plain);
  expect_refused(as_bytes("CCOB\x02"), "is cut off: the version");
  expect_refused(Bytes(v3.begin(), v3.begin() + 26), "is cut off: the version 3 header");
  // 100 GiB declared: refused before anything is inflated or allocated.
  expect_refused(patched<std::uint64_t>(v3, 16, std::uint64_t{100} << 30), "declares 107374182400 bytes uncompressed");
  expect_refused(patched<std::uint64_t>(v3, 8, std::uint64_t{1} << 20), "is cut off: the total size its header declares");
  expect_refused(patched<std::uint64_t>(v3, 8, 5), "less than its own header");
  expect_refused(patched<std::uint16_t>(v3, 4, 4), "format version 4");
  expect_refused(patched<std::uint16_t>(v3, 6, 7), "compression method 7");
  expect_refused(ccob(2, 0, as_bytes("this is no zlib stream"), plain), "corrupt zlib stream");
  const Bytes z = zlib_compress(plain);
  expect_refused(ccob(1, 0, Bytes(z.begin(), z.end() - 6), plain), "is cut off inside its zlib stream");
  expect_refused(ccob(3, 0, Bytes(z.begin(), z.end() - 6), plain), "is cut off inside its zlib stream");
  expect_refused(patched<std::uint64_t>(v3, 16, 10), "decompresses to more than the 10 bytes its header declares");
  expect_refused(patched<std::uint64_t>(v3, 16, plain.size() - 1),
                 "decompresses to " + std::to_string(plain.size()) + " bytes, but its header declares");
  expect_refused(patched<std::uint64_t>(v3, 16, plain.size() + 1),
                 "decompresses to " + std::to_string(plain.size()) + " bytes, but its header declares");
  expect_refused(zlib_ccob(2, as_bytes("hello")), "decompressed, does not start with the __CLANG_OFFLOAD_BUNDLE__ magic");
  expect_refused(zlib_ccob(2, v3), "does not start with the __CLANG_OFFLOAD_BUNDLE__ magic");
  Bytes inner_bad = plain;
  poke<std::uint64_t>(inner_bad, kEntry1 + 8, 4096);
  expect_refused(zlib_ccob(3, inner_bad), "decompressed, is cut off: entry 1");
  for (std::size_t n = 1; n < v3.size(); ++n) expect_refused(Bytes(v3.begin(), v3.begin() + static_cast<std::ptrdiff_t>(n)), "bad.so");
}

TEST(OffloadBundle, MalformedZstdBundles) {
  const Bytes plain = small_bundle();
  const Bytes frame = zstd_compress(plain);
  const Bytes v2 = ccob(2, 1, frame, plain);
  // 100 GiB declared: refused before anything is decompressed or allocated.
  expect_refused(patched<std::uint64_t>(ccob(3, 1, frame, plain), 16, std::uint64_t{100} << 30),
                 "declares 107374182400 bytes uncompressed");
  expect_refused(ccob(2, 1, as_bytes("this is no zstd frame"), plain), "holds a corrupt zstd frame (zstd: Unknown frame descriptor)");
  // A frame whose window (2^31) is past zstd's default cap (2^27): refused
  // by the decoder before it allocates anything of that size.
  expect_refused(ccob(2, 1, as_bytes(std::string("\x28\xb5\x2f\xfd\x00\xa8\x01\x00\x00", 9)), plain),
                 "holds a corrupt zstd frame (zstd: Frame requires too much memory for decoding)");
  for (std::uint16_t version : {1, 2, 3}) {
    expect_refused(ccob(version, 1, Bytes(frame.begin(), frame.end() - 3), plain), "is cut off inside its zstd frame");
    expect_refused(ccob(version, 1, Bytes(frame.begin(), frame.begin() + 3), plain), "is cut off inside its zstd frame");
  }
  expect_refused(ccob(2, 1, {}, plain), "is cut off inside its zstd frame");
  // The frame records its size: a container that says otherwise is refused
  // before decoding.
  expect_refused(patched<std::uint32_t>(v2, 12, 10), "holds a zstd frame of " + std::to_string(plain.size()) +
                                                         " bytes, but its header declares 10");
  Bytes trailing = frame;
  append(trailing, as_bytes("tail"));
  expect_refused(ccob(2, 1, trailing, plain), "holds 4 bytes after its zstd frame");
  expect_refused(ccob(3, 1, zstd_compress(as_bytes("hello")), as_bytes("hello")),
                 "decompressed, does not start with the __CLANG_OFFLOAD_BUNDLE__ magic");
  for (std::size_t n = 1; n < v2.size(); ++n) expect_refused(Bytes(v2.begin(), v2.begin() + static_cast<std::ptrdiff_t>(n)), "bad.so");
}

// A frame without a recorded size is decoded only as far as the container
// declares: 256 MiB of zeros in a few kilobytes stops after 1 MiB and a byte.
TEST(OffloadBundle, ZstdBombStopsAtTheDeclaredSize) {
  const Bytes bomb = zstd_stream_of_zeros(std::size_t{256} << 20);
  ASSERT_EQ(ZSTD_getFrameContentSize(bomb.data(), bomb.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  ASSERT_LT(bomb.size(), 64u * 1024);
  const Bytes one_mib(1 << 20);
  for (std::uint16_t version : {1, 2, 3}) {
    expect_refused(ccob(version, 1, bomb, one_mib), "decompresses to more than the 1048576 bytes its header declares");
  }
  // Short of its declared size: refused with what it held.
  const Bytes short_frame = zstd_stream_of_zeros(1000);
  expect_refused(ccob(2, 1, short_frame, one_mib), "decompresses to 1000 bytes, but its header declares 1048576");
}

// Issue 38, defect 4: a payload is streamed, never held. Four threads each
// decode a frame with zstd's largest window (2^27: written without a
// content size, so the decoder must keep the whole window) of a bundle
// padded to 64 MiB; the windows are reserved from the one budget of the
// run, so at most one is held at a time, and all four succeed (no thread
// waits on another that waits too).
TEST(OffloadBundle, ThreadsDecodingLargeWindowsShareOneBudget) {
  Bytes plain = small_bundle();
  plain.resize(std::size_t{64} << 20);  // code objects end well before: the rest is the last one's padding
  const std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_windowLog, 27);
  Bytes frame(1 << 20);
  ZSTD_outBuffer o{frame.data(), frame.size(), 0};
  ZSTD_inBuffer i{plain.data(), plain.size(), 0};
  while (i.pos < i.size) ASSERT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx.get(), &o, &i, ZSTD_e_continue)));
  while (ZSTD_compressStream2(cctx.get(), &o, &i, ZSTD_e_end) != 0) {
  }
  frame.resize(o.pos);
  ASSERT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  const Bytes bundle = ccob(3, 1, frame, plain);
  std::vector<std::string> gfx(4);
  {
    std::vector<std::jthread> threads;
    for (std::size_t t = 0; t < gfx.size(); ++t) {
      threads.emplace_back([&, t] {
        const auto bundles = parse_offload_bundles(bundle, "big.so");
        gfx[t] = gfx_targets(bundles).at(0);
        EXPECT_EQ(bundles.at(0).targets.at(1).size, 4u);
      });
    }
  }
  EXPECT_EQ(gfx, std::vector<std::string>(4, "gfx90a"));
  EXPECT_GT(offload_decode_budget().peak_held(), std::uint64_t{1} << 27);
  EXPECT_LE(offload_decode_budget().peak_held(), kOffloadDecodeBudgetBytes);
}

// The entries read out of a section are capped at 1 MiB plus 4 times the
// section (every thread may hold that much): a compressed bundle listing
// 20,000 entries from a few kilobytes is refused.
TEST(OffloadBundle, EntriesReadOutAreCappedRelativeToTheSection) {
  std::vector<Entry> entries{kHost};
  for (int i = 0; i < 20000; ++i) entries.push_back({"hipv4-amdgcn-amd-amdhsa--gfx90a", ""});
  const Bytes plain = write_bundle(entries, 8);
  const Bytes small = zstd_ccob(3, plain);
  ASSERT_LT(small.size(), 64u * 1024);
  expect_refused(small, "lists more entries than any real bundle");
  EXPECT_EQ(parse_offload_bundles(plain, "ok.so").at(0).targets.size(), 20001u);  // uncompressed: 4x its bytes
}

}  // namespace
}  // namespace kwheel
