#include "kwheel/validate/wheel_objects.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>

#include "kwheel/base/error.hpp"
#include "kwheel/base/mapped_file.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/evidence/shared_object.hpp"

namespace kwheel {
namespace fs = std::filesystem;

void read_object(const fs::path& file, const std::string& name, ObjectFacts& out) {
  if (is_macho_file(file)) {
    MachOInfo m = read_macho(file);
    m.name = name;
    out.machos.push_back(std::move(m));
    return;
  }
  const MappedFile mapped(file);
  // A malformed object is named as the reports name it: the scratch file
  // it was extracted to is gone before anyone reads the error.
  ElfInfo e = parse_elf(mapped.bytes(), name);
  out.gpu.push_back(read_gpu_code(mapped.bytes(), e, name));
  e.name = name;
  out.elves.push_back(std::move(e));
}

// WheelArchive has bounded the members' declared sizes and extract() holds
// each to its declared size. A script that is not a binary (a Python shim)
// is no object and is passed over.
void for_each_wheel_object(const WheelArchive& wheel, const std::function<void(const fs::path& file, const std::string& member)>& read) {
  TempDir scratch("inspect");
  const fs::path tmp = scratch.path() / "member.so";
  for (const auto& m : wheel.members()) {
    const bool named_object = is_shared_object(m);
    if (!named_object && !is_wheel_script(m)) continue;
    wheel.extract(m, tmp, kMaxInspectedObjectBytes);
    if (is_elf_file(tmp) || is_macho_file(tmp)) {
      read(tmp, m);
    } else if (named_object) {
      throw Error(ErrorKind::input, "wheel '" + wheel.path().filename().string() + "': '" + m + "' is named like a shared object but is neither ELF nor Mach-O");
    }
    fs::remove(tmp);
  }
}

namespace {

// The members for_each_wheel_object reads, when all are small enough to
// read into memory; nullopt otherwise.
std::optional<std::vector<std::string>> small_objects(const WheelArchive& wheel) {
  std::vector<std::string> out;
  for (const auto& m : wheel.members()) {
    if (!is_shared_object(m) && !is_wheel_script(m)) continue;
    if (wheel.member_size(m).value_or(UINT64_MAX) > kInMemoryObjectBytes) return std::nullopt;
    out.push_back(m);
  }
  return out;
}

}  // namespace

std::vector<ObjectGpuCode> wheel_gpu_code(const WheelArchive& wheel) {
  if (const auto members = small_objects(wheel)) {
    std::vector<ObjectGpuCode> gpu;
    for (const auto& m : *members) {
      const std::string data = wheel.read(m, kInMemoryObjectBytes);
      const auto bytes = std::as_bytes(std::span(data.data(), data.size()));
      // As read_object: Mach-O first (it carries no GPU code kwheel reads), then ELF.
      if (has_macho_magic(bytes.first(std::min<size_t>(8, bytes.size())))) continue;
      if (has_elf_magic(bytes)) {
        const ElfInfo e = parse_elf(bytes, m);
        gpu.push_back(read_gpu_code(bytes, e, m));
      } else if (is_shared_object(m)) {
        throw Error(ErrorKind::input, "wheel '" + wheel.path().filename().string() + "': '" + m + "' is named like a shared object but is neither ELF nor Mach-O");
      }
    }
    return gpu;
  }
  ObjectFacts objects;
  for_each_wheel_object(wheel, [&](const fs::path& file, const std::string& member) { read_object(file, member, objects); });
  return objects.gpu;
}

}  // namespace kwheel
