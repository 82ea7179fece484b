#pragma once
// The GPU code one shared object carries, read from the ELF sections the
// loader never looks at: CUDA's .nv_fatbin and ROCm's .hip_fatbin. What the
// build audits against metadata.json, what inspect shows, what validate
// holds against the device.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/cuda_arch.hpp"
#include "kwheel/device_coverage.hpp"
#include "kwheel/elf.hpp"
#include "kwheel/fatbin.hpp"

namespace kwheel {

inline constexpr std::string_view kHipFatbinSection = ".hip_fatbin";

struct ObjectGpuCode {
  std::string file;               // the member or file name reports use
  std::vector<FatbinEntry> cuda;  // .nv_fatbin entries, file order
  std::vector<std::string> gfx;   // ROCm processors of .hip_fatbin, sorted ("gfx90a")
  bool empty() const { return cuda.empty() && gfx.empty(); }
};

// `bytes` is the whole file `elf` was parsed from. Throws Error(input)
// naming `name` when a GPU section lies outside the file or is malformed.
ObjectGpuCode read_gpu_code(std::span<const std::byte> bytes, const ElfInfo& elf, std::string_view name);

// Every object's code together: what a wheel as a whole runs on.
std::vector<CudaTarget> all_cuda_targets(const std::vector<ObjectGpuCode>& objects);
std::vector<std::string> all_gfx_targets(const std::vector<ObjectGpuCode>& objects);

// {"file", "cuda": [{"target", "compressed", "size"}], "gfx": [...]}
nlohmann::json to_json(const ObjectGpuCode& code);

// A variant's or a wheel's GPU evidence: each object's code, and how it
// compares with what metadata.json declares.
struct GpuEvidence {
  std::vector<ObjectGpuCode> objects;  // only objects that carry GPU code
  std::vector<std::string> declared;   // backend.archs
  ArchAudit audit;
  bool empty() const { return objects.empty() && declared.empty(); }
};
GpuEvidence gpu_evidence(std::vector<ObjectGpuCode> objects, const std::vector<std::string>& declared);

// {"cuda_targets", "gfx_targets", "declared_archs", "undeclared",
//  "unparsed_archs", "objects": [...]}
nlohmann::json to_json(const GpuEvidence& evidence);

}  // namespace kwheel
