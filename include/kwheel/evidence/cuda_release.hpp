#pragma once
// Which CUDA release a piece of device code needs, read from the code
// itself: the release that wrote a cubin, and the release a PTX ISA version
// first shipped in. A driver older than the release that compiled the code
// cannot load it (PTX is JIT-compiled by the driver; a cubin carries the
// ELF ABI of its toolkit), so this is the floor the variant index gives as
// `nvidia :: cuda_version_lower_bound` (docs/publishing.md).
//
// Where the evidence is:
// - CUDA 12 and older cubins: ELF OSABI 0x33 with e_version = 10 x major +
//   minor (ptxas 12.6 writes 0x7e = 126);
// - CUDA 13 cubins (OSABI 0x41, e_version 1): the `.note.nv.tkinfo` note
//   nvlink writes, "Cuda compilation tools, release 13.0, V13.0.88";
//   uncompressed PTX names its release in the same words in a comment;
// - every PTX entry's header: its PTX ISA version (9.0 for CUDA 13.0).
// Compressed payloads are not opened, so only their headers count.
#include <compare>
#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace kwheel {

struct CudaRelease {
  unsigned major = 0, minor = 0;
  std::string str() const;  // "12.6"
  auto operator<=>(const CudaRelease&) const = default;
};

// "12.6" -> {12, 6}; nullopt for anything else.
std::optional<CudaRelease> parse_cuda_release(std::string_view text);

// The CUDA release that introduced PTX ISA `major.minor` (PTX ISA release
// notes: 8.5 -> 12.5, 8.7 -> 12.8, 9.0 -> 13.0); nullopt for an ISA this
// table does not know, which callers must not read as "no requirement".
std::optional<CudaRelease> release_of_ptx_isa(unsigned major, unsigned minor);

// The release an uncompressed fatbin payload (a cubin or PTX text) says it
// was compiled by; nullopt when it says nothing kwheel can read.
std::optional<CudaRelease> toolkit_of_payload(std::span<const std::byte> payload);

}  // namespace kwheel
