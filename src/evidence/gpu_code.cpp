#include "kwheel/evidence/gpu_code.hpp"

#include <algorithm>
#include <set>

#include "kwheel/base/error.hpp"
#include "kwheel/evidence/offload_bundle.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
namespace {

std::span<const std::byte> section_bytes(std::span<const std::byte> file, const ElfSection& s, std::string_view name) {
  if (s.offset > file.size() || s.size > file.size() - s.offset)
    throw Error(ErrorKind::input, std::string(name) + ": section " + s.name + " lies outside the file; the file is damaged");
  return file.subspan(s.offset, s.size);
}

}  // namespace

ObjectGpuCode read_gpu_code(std::span<const std::byte> bytes, const ElfInfo& elf, std::string_view name) {
  ObjectGpuCode code;
  code.file = std::string(name);
  code.sections_unknown = elf.sections.empty();
  if (const ElfSection* s = find_section(elf, kFatbinSection)) code.cuda = parse_fatbin(section_bytes(bytes, *s, name), name);
  if (const ElfSection* s = find_section(elf, kHipFatbinSection)) code.gfx = gfx_targets(parse_offload_bundles(section_bytes(bytes, *s, name), name));
  return code;
}

std::vector<CudaTarget> all_cuda_targets(const std::vector<ObjectGpuCode>& objects) {
  std::set<CudaTarget> all;
  for (const auto& o : objects)
    for (const auto& t : cuda_targets(o.cuda)) all.insert(t);
  return {all.begin(), all.end()};
}

std::vector<std::string> all_gfx_targets(const std::vector<ObjectGpuCode>& objects) {
  std::set<std::string> all;
  for (const auto& o : objects) all.insert(o.gfx.begin(), o.gfx.end());
  return {all.begin(), all.end()};
}

nlohmann::json to_json(const ObjectGpuCode& code) {
  nlohmann::json cuda = nlohmann::json::array();
  for (const auto& e : code.cuda) cuda.push_back({{"target", e.str()}, {"compressed", e.compressed}, {"size", e.size}});
  nlohmann::json j{{"file", code.file}, {"cuda", cuda}, {"gfx", code.gfx}};
  if (code.sections_unknown) j["sections_unknown"] = true;
  return j;
}

namespace {

// The declared archs of each kind that a rule can read: CUDA capabilities
// parsed, gfx processors as written. Unparsed entries promise nothing
// (kernels ignores them when any other entry parses).
struct DeclaredKinds {
  std::vector<DeclaredCudaArch> cuda;
  std::set<std::string> gfx;
};

DeclaredKinds declared_kinds(const std::vector<std::string>& declared) {
  DeclaredKinds k;
  for (const auto& text : declared) {
    if (text.starts_with("gfx")) k.gfx.insert(text);
    else if (auto d = parse_declared_cuda_arch(text)) k.cuda.push_back(*d);
  }
  return k;
}

// An object is held only to the declared archs of a kind it carries, and
// only when some are declared: a CUDA object in a build declaring only
// gfx processors is for kernels to refuse, not this rule.
bool outside(const ObjectGpuCode& o, const DeclaredKinds& k) {
  const auto cuda = cuda_targets(o.cuda);
  if (!cuda.empty() && !k.cuda.empty() && !serves_declared(cuda, k.cuda)) return true;
  if (o.gfx.empty() || k.gfx.empty()) return false;
  return std::none_of(o.gfx.begin(), o.gfx.end(), [&](const std::string& g) { return k.gfx.count(g) != 0; });
}

}  // namespace

GpuEvidence gpu_evidence(std::vector<ObjectGpuCode> objects, const std::vector<std::string>& declared) {
  GpuEvidence e;
  for (auto& o : objects)
    if (!o.empty()) e.objects.push_back(std::move(o));
  e.declared = declared;
  // Without a declaration (a bare .so, an old metadata.json) nothing is
  // undeclared: there is no promise to compare with.
  if (declared.empty()) return e;
  e.audit = audit_declared_archs(declared, all_cuda_targets(e.objects), all_gfx_targets(e.objects));
  const DeclaredKinds kinds = declared_kinds(declared);
  for (const auto& o : e.objects)
    if (outside(o, kinds)) e.outside_declared.push_back(o.file);
  return e;
}

std::string describe_objects(const std::vector<ObjectGpuCode>& objects, std::size_t max_objects) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < objects.size() && i < max_objects; ++i) {
    const auto& o = objects[i];
    std::string code = describe_entries(o.cuda);
    for (const auto& g : o.gfx) code.append(code.empty() ? "" : ", ").append(g);
    parts.push_back(std::string(o.file).append(" has ").append(code.empty() ? "no GPU code" : code));
  }
  if (parts.empty()) return "no shared object carries GPU code";
  std::string out = join(parts, "; ");
  if (objects.size() > max_objects) out.append("; and ").append(std::to_string(objects.size() - max_objects)).append(" more objects");
  return out;
}

WheelCoverage cuda_wheel_coverage(const std::vector<ObjectGpuCode>& objects, const CudaArch& device) {
  WheelCoverage w;
  std::vector<std::string> carried;  // per CUDA-carrying object: its targets
  for (const auto& o : objects) {
    if (o.sections_unknown) w.unknown.push_back(o.file);
    const auto code = cuda_targets(o.cuda);
    if (code.empty()) continue;
    w.judged = true;
    DeviceCoverage c = cuda_coverage(code, device);
    w.covered |= c.covered;
    w.jit |= c.jit;
    if (!c.covered) w.no_code.push_back(o.file);
    carried.push_back(describe_targets(code));
    w.objects.emplace_back(o.file, std::move(c));
  }
  if (!w.judged || w.covered) return w;
  w.reason = "this GPU is sm_" + device.number();
  if (w.objects.size() == 1) {
    w.reason.append("; ").append(w.objects.front().first).append(" has code for ").append(carried.front()).append(" only");
    return w;
  }
  // "none of its 2 objects with CUDA code runs on it (a.so: sm_100; b.so: sm_80)"
  constexpr std::size_t kShown = 4;
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < carried.size() && i < kShown; ++i) parts.push_back(std::string(w.objects[i].first).append(": ").append(carried[i]));
  if (carried.size() > kShown) parts.push_back("and " + std::to_string(carried.size() - kShown) + " more");
  w.reason.append("; none of its ").append(std::to_string(w.objects.size())).append(" objects with CUDA code runs on it (").append(join(parts, "; ")).append(")");
  return w;
}

nlohmann::json to_json(const GpuEvidence& e) {
  std::vector<std::string> cuda;
  for (const auto& t : all_cuda_targets(e.objects)) cuda.push_back(t.str());
  nlohmann::json objects = nlohmann::json::array();
  for (const auto& o : e.objects) objects.push_back(to_json(o));
  return {{"cuda_targets", cuda},          {"gfx_targets", all_gfx_targets(e.objects)}, {"declared_archs", e.declared},
          {"undeclared", e.audit.undeclared}, {"unparsed_archs", e.audit.unparsed},      {"missing", e.audit.missing},
          {"outside_declared", e.outside_declared}, {"objects", objects}};
}

}  // namespace kwheel
