#include "kwheel/gpu_code.hpp"

#include <set>

#include "kwheel/error.hpp"
#include "kwheel/offload_bundle.hpp"

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
  return {{"file", code.file}, {"cuda", cuda}, {"gfx", code.gfx}};
}

GpuEvidence gpu_evidence(std::vector<ObjectGpuCode> objects, const std::vector<std::string>& declared) {
  GpuEvidence e;
  for (auto& o : objects)
    if (!o.empty()) e.objects.push_back(std::move(o));
  e.declared = declared;
  // Without a declaration (a bare .so, an old metadata.json) nothing is
  // undeclared: there is no promise to compare with.
  if (!declared.empty()) e.audit = audit_declared_archs(declared, all_cuda_targets(e.objects), all_gfx_targets(e.objects));
  return e;
}

nlohmann::json to_json(const GpuEvidence& e) {
  std::vector<std::string> cuda;
  for (const auto& t : all_cuda_targets(e.objects)) cuda.push_back(t.str());
  nlohmann::json objects = nlohmann::json::array();
  for (const auto& o : e.objects) objects.push_back(to_json(o));
  return {{"cuda_targets", cuda},          {"gfx_targets", all_gfx_targets(e.objects)}, {"declared_archs", e.declared},
          {"undeclared", e.audit.undeclared}, {"unparsed_archs", e.audit.unparsed},      {"objects", objects}};
}

}  // namespace kwheel
