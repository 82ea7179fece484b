#include "kwheel/evidence/nvidia_variant.hpp"

#include <algorithm>
#include <set>

#include "kwheel/evidence/device_coverage.hpp"

namespace kwheel {
namespace {

struct Floor {
  std::optional<CudaRelease> release;
  std::vector<std::string> from;
  void raise(const CudaRelease& r, std::string why) {
    if (!release || *release < r) release = r;
    from.push_back(std::move(why));
  }
};

// A PTX ISA kwheel's table does not know is newer than every release it
// knows: the bound cannot be told, so the build is not offered.
void read_entry(const FatbinEntry& e, const std::string& file, Floor& floor, std::string& problem) {
  if (!e.target) return;
  const std::string where = e.target->str() + " in " + file;
  if (e.toolkit) floor.raise(*e.toolkit, where + ": compiled by CUDA " + e.toolkit->str());
  if (e.target->kind != CudaCodeKind::ptx) return;
  if (const auto r = release_of_ptx_isa(e.code_major, e.code_minor))
    floor.raise(*r, where + ": PTX ISA " + std::to_string(e.code_major) + "." + std::to_string(e.code_minor) + " (CUDA " + r->str() + ")");
  else if (problem.empty())
    problem = where + " is PTX ISA " + std::to_string(e.code_major) + "." + std::to_string(e.code_minor) +
              ", newer than any CUDA release kwheel knows; update kwheel";
}

Floor cuda_floor(const std::vector<ObjectGpuCode>& objects, const std::optional<CudaRelease>& built_for, std::string& problem) {
  Floor floor;
  for (const auto& o : objects)
    for (const auto& e : o.cuda) read_entry(e, o.file, floor, problem);
  const bool any_code = std::any_of(objects.begin(), objects.end(), [](const ObjectGpuCode& o) { return !o.cuda.empty(); });
  if (!any_code && problem.empty()) problem = "its binaries carry no CUDA device code, so neither the driver nor the GPUs it needs can be read from them";
  if (!floor.release && problem.empty())
    problem = "its binaries record no CUDA release (no cubin names the toolkit that compiled it, compressed ones are not opened, and there is no PTX), so no cuda_version_lower_bound can be read from them";
  if (floor.release && built_for) floor.raise(*built_for, "built for CUDA " + built_for->str());
  return floor;
}

struct Coverage {
  std::vector<CudaTarget> sass, any;
  bool by_sass(const CudaArch& d) const {
    return std::any_of(sass.begin(), sass.end(), [&](const CudaTarget& t) { return runs_on(t, d); });
  }
  bool by_any(const CudaArch& d) const {
    return std::any_of(any.begin(), any.end(), [&](const CudaTarget& t) { return runs_on(t, d); });
  }
};

std::vector<CudaArch> family(unsigned major) {
  std::vector<CudaArch> out;
  for (const auto& d : known_cuda_devices())
    if (d.major == major) out.push_back(d);
  return out;
}

// `Mm_real` matches every M.k with k >= m.
bool real_value_holds(const CudaArch& device, const Coverage& c) {
  for (const auto& d : family(device.major))
    if (d.minor >= device.minor && !c.by_sass(d)) return false;
  return true;
}

// `M0_virtual` matches the whole family; given where the PTX is needed.
bool virtual_value_holds(unsigned major, const Coverage& c) {
  bool needs_ptx = false;
  for (const auto& d : family(major)) {
    if (!c.by_any(d)) return false;
    needs_ptx |= !c.by_sass(d);
  }
  return needs_ptx;
}

void add_sm_arch(const std::vector<ObjectGpuCode>& objects, NvidiaVariantEvidence& out) {
  Coverage c;
  for (const auto& t : all_cuda_targets(objects)) {
    c.any.push_back(t);
    if (t.kind == CudaCodeKind::sass) c.sass.push_back(t);
  }
  std::set<std::string> values;
  std::set<unsigned> majors;
  for (const auto& d : known_cuda_devices()) {
    majors.insert(d.major);
    if (real_value_holds(d, c)) values.insert(d.number() + "_real");
  }
  for (unsigned m : majors)
    if (virtual_value_holds(m, c)) values.insert(std::to_string(m) + "0_virtual");
  out.sm_arch.assign(values.begin(), values.end());
  for (const auto& d : known_cuda_devices()) {
    if (!c.by_any(d) || values.count(d.number() + "_real") || values.count(std::to_string(d.major) + "0_virtual")) continue;
    bool named = false;
    for (const auto& lower : family(d.major)) named |= lower.minor <= d.minor && values.count(lower.number() + "_real") > 0;
    if (!named) out.unclaimed.push_back(d.capability() + ": no sm_arch value names it without also naming a GPU of its family the code does not run on");
  }
}

}  // namespace

const std::vector<CudaArch>& known_cuda_devices() {
  static const std::vector<CudaArch> devices = [] {
    std::vector<CudaArch> out;
    for (auto [major, minor] : std::initializer_list<std::pair<unsigned, unsigned>>{
             {5, 0}, {5, 2}, {5, 3}, {6, 0}, {6, 1}, {6, 2}, {7, 0}, {7, 2}, {7, 5}, {8, 0}, {8, 6}, {8, 7}, {8, 8}, {8, 9},
             {9, 0}, {10, 0}, {10, 3}, {11, 0}, {12, 0}, {12, 1}})
      out.push_back(CudaArch{major, minor, ArchSuffix::none});
    return out;
  }();
  return devices;
}

NvidiaVariantEvidence nvidia_variant_evidence(const std::vector<ObjectGpuCode>& objects, const std::optional<CudaRelease>& built_for) {
  NvidiaVariantEvidence out;
  Floor floor = cuda_floor(objects, built_for, out.problem);
  out.lower_bound = floor.release;
  out.lower_bound_from = std::move(floor.from);
  add_sm_arch(objects, out);
  if (out.problem.empty() && out.sm_arch.empty())
    out.problem = "its code (" + describe_targets(all_cuda_targets(objects)) + ") runs on no GPU that an sm_arch value can name alone";
  if (!out.problem.empty()) out.lower_bound.reset();
  return out;
}

}  // namespace kwheel
