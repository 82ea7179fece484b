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

#include "kwheel/evidence/cuda_arch.hpp"
#include "kwheel/evidence/device_coverage.hpp"
#include "kwheel/evidence/elf.hpp"
#include "kwheel/evidence/fatbin.hpp"

namespace kwheel {

inline constexpr std::string_view kHipFatbinSection = ".hip_fatbin";

struct ObjectGpuCode {
  std::string file;               // the member or file name reports use
  std::vector<FatbinEntry> cuda;  // .nv_fatbin entries, file order
  std::vector<std::string> gfx;   // ROCm processors of .hip_fatbin, sorted ("gfx90a")
  // The object names no sections (none, or unreadable: the loader needs
  // neither), so whether it carries GPU code is unknown, not "none".
  bool sections_unknown = false;
  bool empty() const { return cuda.empty() && gfx.empty() && !sections_unknown; }
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
  // The union's undeclared and unparsed entries; `missing` is per object:
  // an arch is missing when an object carrying code of its kind has none
  // for it (each loaded object must run on every declared arch).
  ArchAudit audit;
  std::vector<std::string> missing_in;  // per `audit.missing` entry: the objects lacking it
  bool empty() const { return objects.empty() && declared.empty(); }
};
GpuEvidence gpu_evidence(std::vector<ObjectGpuCode> objects, const std::vector<std::string>& declared);

// {"cuda_targets", "gfx_targets", "declared_archs", "undeclared",
//  "unparsed_archs", "missing", "objects": [...]}
nlohmann::json to_json(const GpuEvidence& evidence);

// Whether a wheel's CUDA code runs on `device`: every object that carries
// CUDA code must (a kernel in an uncovered object fails at its first call).
// Objects without CUDA code are not judged.
struct WheelCoverage {
  bool judged = false;   // some object carries CUDA code
  bool covered = false;
  bool jit = false;      // some object runs only through its PTX
  std::string reason;    // when not covered: the device and the first object that misses it
  std::vector<std::pair<std::string, DeviceCoverage>> objects;  // per CUDA-carrying object
  std::vector<std::string> unknown;  // objects whose code could not be looked for
};
WheelCoverage cuda_wheel_coverage(const std::vector<ObjectGpuCode>& objects, const CudaArch& device);

}  // namespace kwheel
