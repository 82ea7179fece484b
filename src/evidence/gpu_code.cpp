#include "kwheel/evidence/gpu_code.hpp"

#include <map>
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

// Each declared arch against each object that carries code of its kind
// (CUDA or ROCm); with no such object, against nothing, so every declared
// arch of that kind is missing.
void audit_per_object(GpuEvidence& e) {
  std::map<std::string, std::vector<std::string>> lacking;  // missing arch -> objects
  std::vector<std::string> order;
  auto note = [&](const std::vector<std::string>& missing, const std::string& file) {
    for (const auto& m : missing) {
      if (!lacking.count(m)) order.push_back(m);
      auto& files = lacking[m];
      if (!file.empty()) files.push_back(file);
    }
  };
  bool any_cuda = false, any_gfx = false;
  for (const auto& o : e.objects) {
    const auto cuda = cuda_targets(o.cuda);
    any_cuda |= !cuda.empty();
    any_gfx |= !o.gfx.empty();
    const auto a = audit_declared_archs(e.declared, cuda, o.gfx);
    std::vector<std::string> own;  // only archs of a kind this object carries
    for (const auto& m : a.missing)
      if (m.starts_with("gfx") ? !o.gfx.empty() : !cuda.empty()) own.push_back(m);
    note(own, o.file);
  }
  const auto none = audit_declared_archs(e.declared, {}, {});
  std::vector<std::string> uncarried;
  for (const auto& m : none.missing)
    if (m.starts_with("gfx") ? !any_gfx : !any_cuda) uncarried.push_back(m);
  note(uncarried, "");
  for (const auto& m : order) {
    e.audit.missing.push_back(m);
    e.missing_in.push_back(join(lacking[m], ", "));
  }
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
  const ArchAudit all = audit_declared_archs(declared, all_cuda_targets(e.objects), all_gfx_targets(e.objects));
  e.audit.undeclared = all.undeclared;
  e.audit.unparsed = all.unparsed;
  audit_per_object(e);
  return e;
}

WheelCoverage cuda_wheel_coverage(const std::vector<ObjectGpuCode>& objects, const CudaArch& device) {
  WheelCoverage w;
  w.covered = true;
  for (const auto& o : objects) {
    if (o.sections_unknown) w.unknown.push_back(o.file);
    const auto code = cuda_targets(o.cuda);
    if (code.empty()) continue;
    w.judged = true;
    DeviceCoverage c = cuda_coverage(code, device);
    w.jit |= c.jit;
    if (!c.covered && w.covered) {
      w.covered = false;
      w.reason = "this GPU is sm_" + device.number() + "; " + o.file + " has code for " + describe_targets(code) + " only";
    }
    w.objects.emplace_back(o.file, std::move(c));
  }
  if (!w.judged) w.covered = false;
  return w;
}

nlohmann::json to_json(const GpuEvidence& e) {
  std::vector<std::string> cuda;
  for (const auto& t : all_cuda_targets(e.objects)) cuda.push_back(t.str());
  nlohmann::json objects = nlohmann::json::array();
  for (const auto& o : e.objects) objects.push_back(to_json(o));
  return {{"cuda_targets", cuda},          {"gfx_targets", all_gfx_targets(e.objects)}, {"declared_archs", e.declared},
          {"undeclared", e.audit.undeclared}, {"unparsed_archs", e.audit.unparsed},      {"missing", e.audit.missing},
          {"objects", objects}};
}

}  // namespace kwheel
