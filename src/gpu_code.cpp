#include "kwheel/gpu_code.hpp"

#include <set>

#include "kwheel/error.hpp"

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

}  // namespace kwheel
