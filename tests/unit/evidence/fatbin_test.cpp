// The fatbin reader against what nvcc (here, /usr/local/cuda) writes: each
// test compiles a kernel for the architectures it names, and the reader
// must list exactly those. The malformed cases patch a real section.
#include "kwheel/evidence/fatbin.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>

#include "elf_fixtures.hpp"
#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/gpu_code.hpp"
#include "kwheel/base/mapped_file.hpp"

namespace kwheel {
namespace {

using testing::TempDir;

const char* kNvcc = "/usr/local/cuda/bin/nvcc";

class Fatbin : public ::testing::Test {
 protected:
  // CTest runs each test in its own process: a build is compiled when a
  // test first needs it (nvcc takes seconds), not all of them for every test.
  static std::filesystem::path built(const std::string& name) {
    static const std::map<std::string, std::string> flags = {
        {"multi", "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"},
        {"sm100", "-gencode arch=compute_100,code=sm_100"},
        {"sm90a", "-gencode arch=compute_90a,code=sm_90a"},
        {"compressed", "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90 -Xfatbin -compress-all"},
        {"ptx80", "-gencode arch=compute_80,code=compute_80"},
        {"family", "-gencode arch=compute_100f,code=sm_100f -gencode arch=compute_120a,code=compute_120a"},
        // torchao 0.18.0's _C_mxfp8: sm_100 SASS and compute_120 PTX.
        {"mxfp8", "-gencode arch=compute_100,code=sm_100 -gencode arch=compute_120,code=compute_120"},
        {"sm80", "-gencode arch=compute_80,code=sm_80"},
    };
    const auto so = *dir_ / (name + ".so");
    if (!std::filesystem::exists(so))
      testing::sh(dir_->path(), std::string(kNvcc) + " -shared -Xcompiler -fPIC " + flags.at(name) + " k.cu -o " + name + ".so");
    return so;
  }
  static void SetUpTestSuite() {
    if (!testing::have_tool(kNvcc)) return;
    dir_ = std::make_unique<TempDir>();
    testing::write_file(*dir_ / "k.cu",
                        "__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\n"
                        "extern \"C\" void launch(float* x) { scale<<<1, 32>>>(x); }\n");
  }
  static void TearDownTestSuite() { dir_.reset(); }
  void SetUp() override {
    if (!dir_) GTEST_SKIP() << kNvcc << " is not installed";
  }

  static ObjectGpuCode code_of(const std::string& build) {
    const auto path = built(build);
    const MappedFile file(path);
    return read_gpu_code(file.bytes(), parse_elf(file.bytes(), path.string()), build + ".so");
  }
  static std::set<std::string> targets(const std::string& build) {
    std::set<std::string> out;
    for (const auto& e : code_of(build).cuda) out.insert(e.str());
    return out;
  }
  static std::vector<std::byte> section(const std::string& build) {
    const auto bytes = testing::read_bytes(built(build));
    const ElfInfo elf = parse_elf(bytes, build);
    const ElfSection* s = find_section(elf, kFatbinSection);
    EXPECT_NE(s, nullptr);
    return {bytes.begin() + static_cast<long>(s->offset), bytes.begin() + static_cast<long>(s->offset + s->size)};
  }

  static inline std::unique_ptr<TempDir> dir_;
};

using Set = std::set<std::string>;

TEST_F(Fatbin, ListsWhatNvccWasAskedFor) {
  EXPECT_EQ(targets("multi"), (Set{"sm_80", "sm_90", "compute_90"}));
  EXPECT_EQ(targets("sm100"), (Set{"sm_100"}));
  EXPECT_EQ(targets("sm90a"), (Set{"sm_90a"}));
  EXPECT_EQ(targets("ptx80"), (Set{"compute_80"}));
  EXPECT_EQ(targets("family"), (Set{"sm_100f", "compute_120a"}));
}

TEST_F(Fatbin, CompressedEntriesAreMarked) {
  const auto all = code_of("compressed").cuda;
  EXPECT_EQ(targets("compressed"), (Set{"sm_80", "compute_90"}));
  for (const auto& e : all) EXPECT_TRUE(e.compressed) << e.str();
  // Without -compress-all nvcc 13 stores SASS plain (and compresses PTX).
  for (const auto& e : code_of("multi").cuda)
    if (e.target->kind == CudaCodeKind::sass) EXPECT_FALSE(e.compressed) << e.str();
}

TEST_F(Fatbin, HostOnlyObjectsCarryNone) {
  TempDir d;
  const auto so = testing::build_c(d, "host.so", "int f(void) { return 1; }\n");
  const MappedFile file(so);
  EXPECT_TRUE(read_gpu_code(file.bytes(), parse_elf(file.bytes(), "host.so"), "host.so").empty());
}

void put32(std::vector<std::byte>& b, size_t off, std::uint32_t v) { std::memcpy(b.data() + off, &v, 4); }
void put64(std::vector<std::byte>& b, size_t off, std::uint64_t v) { std::memcpy(b.data() + off, &v, 8); }

TEST_F(Fatbin, MalformedSectionsAreOneLineErrorsNamingTheFile) {
  const auto good = section("sm100");
  ASSERT_GE(good.size(), 16u + 64u);
  EXPECT_EQ(parse_fatbin(good, "k.so").size(), 2u);  // sm_100 once in each of nvcc's two containers

  auto bad = good;
  put32(bad, 0, 0x12345678);
  EXPECT_NE(testing::error_of([&] { parse_fatbin(bad, "k.so"); }).find("k.so: malformed CUDA fatbin (.nv_fatbin offset 0): no fatbin magic"), std::string::npos);
  bad = good;
  put64(bad, 8, 1ull << 40);  // container size
  EXPECT_NE(testing::error_of([&] { parse_fatbin(bad, "k.so"); }).find("runs past the section"), std::string::npos);
  bad = good;
  put32(bad, 16 + 4, 1u << 30);  // the first entry's header size
  EXPECT_NE(testing::error_of([&] { parse_fatbin(bad, "k.so"); }).find("entry header size 1073741824 is implausible"), std::string::npos);
  bad = good;
  put64(bad, 16 + 8, ~0ull);  // the first entry's payload size
  EXPECT_NE(testing::error_of([&] { parse_fatbin(bad, "k.so"); }).find("payload runs past its container"), std::string::npos);
  bad = good;
  put32(bad, 16 + 28, 0);  // the first entry's architecture
  EXPECT_NE(testing::error_of([&] { parse_fatbin(bad, "k.so"); }).find("architecture number 0 is no GPU's"), std::string::npos);
  const std::vector<std::byte> truncated(good.begin(), good.begin() + 40);
  EXPECT_NE(testing::error_of([&] { parse_fatbin(truncated, "k.so"); }).find("runs past"), std::string::npos);
}

TEST_F(Fatbin, ZeroPaddingAroundContainersIsAccepted) {
  auto padded = section("ptx80");
  padded.insert(padded.begin(), 8, std::byte{0});
  padded.insert(padded.end(), 24, std::byte{0});
  ASSERT_EQ(parse_fatbin(padded, "k.so").size(), 1u);
  EXPECT_EQ(parse_fatbin(padded, "k.so")[0].str(), "compute_80");
  EXPECT_TRUE(parse_fatbin({}, "k.so").empty());
}

TEST_F(Fatbin, SectionOutsideTheFileIsRefused) {
  const auto bytes = testing::read_bytes(built("sm100"));
  ElfInfo elf = parse_elf(bytes, "sm100.so");
  for (auto& s : elf.sections)
    if (s.name == kFatbinSection) s.offset = bytes.size() - 8;
  EXPECT_NE(testing::error_of([&] { read_gpu_code(bytes, elf, "sm100.so"); }).find("sm100.so: section .nv_fatbin lies outside the file"), std::string::npos);
}

TEST_F(Fatbin, RepeatedEntriesAreCountedInMessages) {
  // nvcc itself repeats SASS: once in each of its two containers (PTX once).
  EXPECT_EQ(describe_entries(code_of("sm100").cuda), "sm_100 \u00d72");
  EXPECT_EQ(describe_entries(code_of("multi").cuda), "sm_80 \u00d72, sm_90 \u00d72, compute_90");
  // An object like the sgl-kernel one of issue 32 (546 containers, one
  // per translation unit): counted, in the order first met.
  std::vector<FatbinEntry> entries;
  for (const auto& e : code_of("sm90a").cuda) entries.push_back(e);
  const FatbinEntry sm90a = entries.front();
  entries.clear();
  for (int i = 0; i < 546; ++i) {
    entries.push_back(sm90a);
    if (i % 273 == 0) entries.push_back(code_of("sm80").cuda.front());
  }
  EXPECT_EQ(describe_entries(entries), "sm_90a \u00d7546, sm_80 \u00d72");
  EXPECT_EQ(describe_entries(code_of("compressed").cuda, true), "sm_80 (compressed) \u00d72, compute_90 (compressed)");
}

TEST(FatbinEntries, ManyDistinctTargetsAreCutShort) {
  std::vector<FatbinEntry> entries;
  for (unsigned arch = 50; arch < 70; ++arch) entries.push_back({2, CudaTarget{CudaCodeKind::sass, *arch_from_number(arch, ArchSuffix::none)}, false, 0});
  const std::string line = describe_entries(entries, false, 3);
  EXPECT_EQ(line, "sm_50, sm_51, sm_52, and 17 more");
  entries.push_back({4, std::nullopt, false, 0});  // an entry of no runnable kind (LTO IR) still counts
  EXPECT_EQ(describe_entries({entries.back(), entries.back()}), "kind_4 \u00d72");
}

// Issue 32's packages, built for real: one object per arch family, as
// torchao 0.18.0 ships _C_cutlass_90a (sm_90a) beside _C_mxfp8 (sm_100,
// compute_120). Their union meets the declaration no object meets alone.
TEST_F(Fatbin, OneObjectPerArchFamilyMeetsTheDeclarationTogether) {
  auto cutlass = code_of("sm90a"), mxfp8 = code_of("mxfp8");
  cutlass.file = "torchao/_C_cutlass_90a.abi3.so";
  mxfp8.file = "torchao/_C_mxfp8.abi3.so";
  auto e = gpu_evidence({cutlass, mxfp8}, {"9.0a", "10.0", "12.0+PTX"});
  EXPECT_TRUE(e.audit.missing.empty());
  EXPECT_TRUE(e.outside_declared.empty());
  // An arch the union lacks is still missing.
  e = gpu_evidence({cutlass, mxfp8}, {"8.0", "9.0a", "10.0", "12.0+PTX"});
  EXPECT_EQ(e.audit.missing, std::vector<std::string>{"8.0 (sm_80)"});
  // An object for none of the declared archs: sm_80 SASS runs on no 9.0a,
  // 10.0 or 12.0+ device.
  auto stale = code_of("sm80");
  stale.file = "torchao/_C_old.abi3.so";
  e = gpu_evidence({cutlass, mxfp8, stale}, {"9.0a", "10.0", "12.0+PTX"});
  EXPECT_TRUE(e.audit.missing.empty());
  EXPECT_EQ(e.outside_declared, std::vector<std::string>{"torchao/_C_old.abi3.so"});
  EXPECT_EQ(e.audit.undeclared, std::vector<std::string>{"sm_80"});
}

// The nine .nv_fatbin sections checked in as fuzz seeds were written by
// nvcc 13.0; each file's name lists what nvcc was asked for. They hold the
// reader to real output where nvcc is not installed.
TEST(FatbinSeeds, ListWhatTheirNamesSay) {
  const std::filesystem::path dir = std::filesystem::path(KWHEEL_TEST_DATA).parent_path() / "fuzz" / "seeds" / "fatbin";
  const std::map<std::string, Set> expected = {
      {"sm80-sm90-compute90", {"sm_80", "sm_90", "compute_90"}},
      {"sm100", {"sm_100"}},
      {"sm90a", {"sm_90a"}},
      {"compress-all", {"sm_80", "compute_90"}},
      {"compute80", {"compute_80"}},
      {"sm100f", {"sm_100f"}},
      {"sm100a-compute120", {"sm_100a", "compute_120"}},
      {"compute90a-compute100f", {"compute_90a", "compute_100f"}},
      {"sm86-sm121-sm103f", {"sm_86", "sm_121", "sm_103f"}},
  };
  for (const auto& [name, want] : expected) {
    const auto bytes = testing::read_bytes(dir / (name + ".fatbin"));
    ASSERT_FALSE(bytes.empty()) << name;
    Set got;
    for (const auto& e : parse_fatbin(bytes, name)) {
      got.insert(e.str());
      if (name == "compress-all") EXPECT_TRUE(e.compressed) << e.str();
    }
    EXPECT_EQ(got, want) << name;
  }
}

}  // namespace
}  // namespace kwheel
