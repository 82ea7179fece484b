#include "kwheel/evidence/cuda_release.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace kwheel {
namespace {

std::vector<std::byte> bytes(std::string_view text) {
  std::vector<std::byte> out(text.size());
  if (!text.empty()) std::memcpy(out.data(), text.data(), text.size());  // an empty vector's data() may be null
  return out;
}

// The first 24 bytes of a cubin's ELF header: ptxas 12.6 writes OSABI 0x33,
// ABI version 7 and e_version 0x7e (read with readelf -h from a cubin it
// compiled; tests/integration/test_variant_index.py uses such cubins whole).
std::vector<std::byte> cubin_header(unsigned char osabi, unsigned e_version) {
  std::vector<std::byte> h(64, std::byte{0});
  const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, osabi, 7};
  for (size_t i = 0; i < sizeof ident; ++i) h[i] = std::byte{ident[i]};
  for (int i = 0; i < 4; ++i) h[20 + i] = std::byte{static_cast<unsigned char>(e_version >> (8 * i))};
  return h;
}

TEST(CudaRelease, ParsesMajorDotMinorOnly) {
  EXPECT_EQ(parse_cuda_release("12.6"), (CudaRelease{12, 6}));
  EXPECT_EQ(parse_cuda_release("13.0")->str(), "13.0");
  EXPECT_FALSE(parse_cuda_release("12"));
  EXPECT_FALSE(parse_cuda_release("12.6.1"));
  EXPECT_FALSE(parse_cuda_release("v12.6"));
  EXPECT_LT(*parse_cuda_release("12.9"), *parse_cuda_release("13.0"));
}

// NVIDIA's PTX ISA release notes: the release each ISA version came with.
TEST(CudaRelease, PtxIsaNamesTheReleaseThatIntroducedIt) {
  EXPECT_EQ(release_of_ptx_isa(8, 5), (CudaRelease{12, 5}));
  EXPECT_EQ(release_of_ptx_isa(8, 7), (CudaRelease{12, 8}));
  EXPECT_EQ(release_of_ptx_isa(8, 8), (CudaRelease{12, 9}));
  EXPECT_EQ(release_of_ptx_isa(9, 0), (CudaRelease{13, 0}));
  EXPECT_EQ(release_of_ptx_isa(7, 8), (CudaRelease{11, 8}));
  EXPECT_FALSE(release_of_ptx_isa(9, 9));  // unknown: never "no requirement"
}

TEST(CudaRelease, Cuda12CubinHeaderGivesItsRelease) {
  EXPECT_EQ(toolkit_of_payload(cubin_header(0x33, 126)), (CudaRelease{12, 6}));
  EXPECT_EQ(toolkit_of_payload(cubin_header(0x33, 129)), (CudaRelease{12, 9}));
  // CUDA 13's cubins (OSABI 0x41) keep e_version 1: no release there.
  EXPECT_FALSE(toolkit_of_payload(cubin_header(0x41, 1)));
  EXPECT_FALSE(toolkit_of_payload(cubin_header(0x33, 1)));
}

TEST(CudaRelease, TkinfoNoteOrPtxCommentGivesItsRelease) {
  // The strings nvlink 13.0 writes into .note.nv.tkinfo, and PTX's header.
  EXPECT_EQ(toolkit_of_payload(bytes(std::string("\0\0NVIDIA Corp\0nvlink\0Cuda compilation tools, release 13.0, V13.0.88\0", 64))),
            (CudaRelease{13, 0}));
  EXPECT_EQ(toolkit_of_payload(bytes("//\n// Cuda compilation tools, release 12.6, V12.6.85\n.version 8.5\n")), (CudaRelease{12, 6}));
  EXPECT_FALSE(toolkit_of_payload(bytes("Cuda compilation tools, release ")));
  EXPECT_FALSE(toolkit_of_payload(bytes("Cuda compilation tools, release x.y")));
  EXPECT_FALSE(toolkit_of_payload(bytes("")));
}

}  // namespace
}  // namespace kwheel
