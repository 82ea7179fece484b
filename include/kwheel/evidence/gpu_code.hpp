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
//
// Packages ship one object per arch family (torchao's _C_cutlass_90a has
// sm_90a only, its _C_mxfp8 sm_100 and compute_120; sgl-kernel has
// sm90/ and sm100/common_ops.abi3.so) and load the one that fits the GPU,
// so a declared arch is judged against the union of the objects: it is
// missing when no object has code for it. An object whose code runs on
// none of the declared archs is judged on its own: nothing the wheel
// promises can run it (docs/gpu-evidence.md).
struct GpuEvidence {
  std::vector<ObjectGpuCode> objects;  // only objects that carry GPU code
  std::vector<std::string> declared;   // backend.archs
  ArchAudit audit;                     // the union of the objects against `declared`
  // Objects with code of a declared kind (CUDA, ROCm) for none of the
  // declared archs of that kind, in object order.
  std::vector<std::string> outside_declared;
  bool empty() const { return objects.empty() && declared.empty(); }
};
GpuEvidence gpu_evidence(std::vector<ObjectGpuCode> objects, const std::vector<std::string>& declared);

// {"cuda_targets", "gfx_targets", "declared_archs", "undeclared",
//  "unparsed_archs", "missing", "outside_declared", "objects": [...]}
nlohmann::json to_json(const GpuEvidence& evidence);

// "relu/a.so has sm_90a ×546, sm_80; relu/b.so has gfx942": what each
// object carries, on one bounded line (the first `max_objects` objects).
std::string describe_objects(const std::vector<ObjectGpuCode>& objects, std::size_t max_objects = 6);

// Whether a wheel's CUDA code runs on `device`. Packages carry one object
// per arch family and load the one that fits, so the wheel is runnable
// when some object has code for the device; the objects that have none
// are listed, and the kernel's check shows whether the package needed
// them. Objects without CUDA code are not judged.
struct WheelCoverage {
  bool judged = false;   // some object carries CUDA code
  bool covered = false;  // some object has code the device runs
  bool jit = false;      // some object runs only through its PTX
  std::string reason;    // when not covered: the device and what the objects carry
  std::vector<std::pair<std::string, DeviceCoverage>> objects;  // per CUDA-carrying object
  std::vector<std::string> no_code;  // CUDA-carrying objects with no code for the device
  std::vector<std::string> unknown;  // objects whose code could not be looked for
};
WheelCoverage cuda_wheel_coverage(const std::vector<ObjectGpuCode>& objects, const CudaArch& device);

}  // namespace kwheel
