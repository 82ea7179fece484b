// A section's offload bundles read whole: the bundler's output as it is,
// as the .hip_fatbin of a host library, one bundle per linked object, and
// what the section walk reports (the magic pre-filter, gfx_targets). The
// parts are tested beside it: offload_entry_table_test.cpp,
// offload_compressed_test.cpp, offload_decompress_test.cpp,
// offload_target_test.cpp; their bundles come from offload_bundle_fixture.hpp.
#include "kwheel/evidence/offload_bundle.hpp"

#include "kwheel/base/mapped_file.hpp"
#include "kwheel/evidence/gpu_code.hpp"
#include "offload_bundle_fixture.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

std::string find_objcopy() {
  if (have_tool("llvm-objcopy")) return "llvm-objcopy";
  const fs::path bundler = find_bundler();
  if (bundler.has_parent_path() && fs::exists(bundler.parent_path() / "llvm-objcopy")) {
    return (bundler.parent_path() / "llvm-objcopy").string();
  }
  return "";
}

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

}  // namespace
}  // namespace kwheel
