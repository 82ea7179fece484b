#pragma once
// Offload bundles for the tests of the bundle reader's parts
// (offload_bundle_test.cpp and the offload_*_test.cpp beside it): as
// clang-offload-bundler writes them at test time (real AMD GPU code objects
// where this clang can build them), as LLVM's writers lay them out (the
// uncompressed table, CCOB versions 1-3 around zlib and zstd), and the
// checks every test of them makes. Expected targets are what the bundler
// was asked to bundle.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "elf_fixtures.hpp"
#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/offload_bundle.hpp"

namespace kwheel::testing {

using Bytes = std::vector<std::byte>;
using Strings = std::vector<std::string>;

// One bundle entry: its id and the file (or contents) bundled under it.
struct Entry {
  std::string id;
  std::string contents;
};

// The oldest installed (Debian's LLVM 14 beside clang-19): LLVM 19 rewrites
// the ids it is given (a legacy "hip-amdgcn-amd-amdhsa-gfx906" gains "--",
// a host id ending in '-' is written twice over), and these tests hold the
// bundler to the ids they asked for.
inline std::string find_bundler() {
  if (have_tool("clang-offload-bundler")) return "clang-offload-bundler";
  for (int v = 10; v <= 30; ++v) {
    const std::string p = "/usr/lib/llvm-" + std::to_string(v) + "/bin/clang-offload-bundler";
    if (fs::exists(p)) return p;
  }
  return "";
}

#define REQUIRE_TOOL(path, what) \
  if ((path).empty()) GTEST_SKIP() << what << " is not installed"

inline Bytes as_bytes(std::string_view s) {
  Bytes b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());  // an empty vector's data() may be null
  return b;
}

template <typename T>
void put(Bytes& b, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) b.push_back(static_cast<std::byte>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff));
}

inline void append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

inline void pad_to(Bytes& b, std::size_t align) { b.resize((b.size() + align - 1) / align * align); }

// A real AMD GPU code object (HIP's are shared objects) when this clang can
// build one for `target_id`, else a stand-in: the bundler stores entries as
// opaque bytes either way.
inline std::string code_object(const TempDir& d, const std::string& target_id) {
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
inline Bytes bundle_with_tool(const TempDir& d, const std::string& out, const std::vector<Entry>& entries,
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
inline Bytes write_bundle(const std::vector<Entry>& entries, std::size_t align = 4096) {
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
inline std::uint64_t truncated_md5(const Bytes& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EXPECT_EQ(EVP_Digest(data.data(), data.size(), md, &len, EVP_md5(), nullptr), 1);
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | md[i];
  return v;
}

inline Bytes zlib_compress(const Bytes& data) {
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
inline Bytes ccob(std::uint16_t version, std::uint16_t method, const Bytes& compressed, const Bytes& uncompressed) {
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

inline Bytes zlib_ccob(std::uint16_t version, const Bytes& bundle) { return ccob(version, 0, zlib_compress(bundle), bundle); }

// As llvm::compression::zstd::compress with long-distance matching, the
// bundler's setting: one frame that records its content size.
inline Bytes zstd_compress(const Bytes& data) {
  const std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_enableLongDistanceMatching, 1);
  Bytes out(ZSTD_compressBound(data.size()));
  const std::size_t n = ZSTD_compress2(cctx.get(), out.data(), out.size(), data.data(), data.size());
  EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  out.resize(n);
  return out;
}

inline Bytes zstd_ccob(std::uint16_t version, const Bytes& bundle) { return ccob(version, 1, zstd_compress(bundle), bundle); }

inline const OffloadTarget* find_target(const OffloadBundle& b, const std::string& id) {
  for (const auto& t : b.targets) {
    if (t.entry_id == id) return &t;
  }
  ADD_FAILURE() << "no entry " << id;
  return nullptr;
}

inline void expect_target(const OffloadBundle& b, const Entry& e, const std::string& kind, const std::string& triple,
                   const std::string& target_id, const std::string& processor) {
  const OffloadTarget* t = find_target(b, e.id);
  if (t == nullptr) return;
  EXPECT_EQ(t->kind, kind) << e.id;
  EXPECT_EQ(t->triple, triple) << e.id;
  EXPECT_EQ(t->target_id, target_id) << e.id;
  EXPECT_EQ(t->processor, processor) << e.id;
  EXPECT_EQ(t->size, e.contents.size()) << e.id;
}

inline const Entry kHost{"host-x86_64-unknown-linux-gnu-", ""};

// Three HIP targets, two of them real code objects from this clang.
inline std::vector<Entry> hip_entries(const TempDir& d) {
  return {kHost,
          {"hipv4-amdgcn-amd-amdhsa--gfx90a", code_object(d, "gfx90a")},
          {"hipv4-amdgcn-amd-amdhsa--gfx908:xnack-", code_object(d, "gfx908:xnack-")},
          {"hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", code_object(d, "gfx942:sramecc+:xnack-")}};
}

inline void expect_hip_entries(const OffloadBundle& b, const std::vector<Entry>& e) {
  ASSERT_EQ(b.targets.size(), 4u);
  expect_target(b, e[0], "host", "x86_64-unknown-linux-gnu", "", "");
  expect_target(b, e[1], "hipv4", "amdgcn-amd-amdhsa", "gfx90a", "gfx90a");
  expect_target(b, e[2], "hipv4", "amdgcn-amd-amdhsa", "gfx908:xnack-", "gfx908");
  expect_target(b, e[3], "hipv4", "amdgcn-amd-amdhsa", "gfx942:sramecc+:xnack-", "gfx942");
}

// A small hand-written bundle (align 8): entry 0 the host, entry 1 "CODE".
inline Bytes small_bundle() { return write_bundle({kHost, {"hipv4-amdgcn-amd-amdhsa--gfx90a", "CODE"}}, 8); }
inline constexpr std::size_t kEntry0 = 32;                      // entry 0's offset field
inline constexpr std::size_t kEntry1 = kEntry0 + 24 + 30;       // after "host-x86_64-unknown-linux-gnu-"

inline void expect_refused(const Bytes& bytes, const std::string& fragment) {
  const std::string msg = error_of([&] { parse_offload_bundles(bytes, "bad.so"); });
  EXPECT_EQ(msg.rfind("bad.so: ", 0), 0u) << msg;
  EXPECT_NE(msg.find(fragment), std::string::npos) << "expected '" << fragment << "' in: " << msg;
}

template <typename T>
Bytes patched(Bytes b, std::size_t off, T v) {
  poke<T>(b, off, v);
  return b;
}

}  // namespace kwheel::testing
