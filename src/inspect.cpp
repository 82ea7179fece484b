#include "kwheel/inspect.hpp"

#include <stdlib.h>

#include "kwheel/error.hpp"
#include "kwheel/mapped_file.hpp"
#include "kwheel/temp_dir.hpp"
#include "kwheel/text.hpp"
#include "kwheel/wheel_reader.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

bool looks_shared(const std::string& name) { return name.ends_with(".so") || name.find(".so.") != std::string::npos; }

// One object's ELF facts and GPU code, from one mapping; reports name it
// `name` (the wheel member, not a temp file).
void read_object(const fs::path& file, const std::string& name, std::vector<ElfInfo>& elves, std::vector<ObjectGpuCode>& gpu) {
  const MappedFile mapped(file);
  ElfInfo e = parse_elf(mapped.bytes(), file.string());
  gpu.push_back(read_gpu_code(mapped.bytes(), e, name));
  e.name = name;
  elves.push_back(std::move(e));
}

// Only the shared objects leave the archive, one at a time, each removed
// once read: the scratch space is one member, whatever the wheel holds.
// WheelArchive has bounded their declared sizes and stream() holds each to
// its declared size.
template <class F>
void for_each_object(const WheelArchive& wheel, F&& read) {
  TempDir scratch("inspect");
  const fs::path tmp = scratch.path() / "member.so";
  for (const auto& m : wheel.members()) {
    if (!looks_shared(m)) continue;
    wheel.extract(m, tmp, kMaxInspectedObjectBytes);
    if (!is_elf_file(tmp))
      throw Error(ErrorKind::input, "wheel '" + wheel.path().filename().string() + "': '" + m + "' is named like a shared object but is not an ELF file");
    read(tmp, m);
    fs::remove(tmp);
  }
}

}  // namespace

std::vector<ObjectGpuCode> wheel_gpu_code(const WheelArchive& wheel) {
  std::vector<ElfInfo> elves;
  std::vector<ObjectGpuCode> gpu;
  for_each_object(wheel, [&](const fs::path& file, const std::string& member) { read_object(file, member, elves, gpu); });
  return gpu;
}

Inspection inspect_path(const fs::path& path, const InspectOptions& options) {
  Inspection out;
  std::vector<ElfInfo> elves;
  std::vector<ObjectGpuCode> gpu;
  if (path.extension() == ".whl") {
    out.kind = "wheel";
    WheelArchive wheel(path);
    out.revision = recorded_revision(wheel.metadata());
    for (const auto& m : wheel.members())
      if (m.ends_with("/metadata.json") && m.find('/') == m.rfind('/') && !m.starts_with(wheel.dist_info() + "/"))
        out.kernel = parse_kernel_metadata(wheel.read(m, kMaxKernelMetadataBytes + 1), "wheel '" + path.filename().string() + "' member '" + m + "'");
    out.current_tags = join(wheel.filename().platform, ".");
    for (const auto& a : wheel.filename().abi) out.tagged_abi3 = out.tagged_abi3 || a == "abi3";
    for_each_object(wheel, [&](const fs::path& file, const std::string& member) {
      read_object(file, member, elves, gpu);
      out.files.push_back(member);
    });
    if (elves.empty()) throw Error(ErrorKind::input, "wheel '" + path.filename().string() + "' holds no shared object; a pure-Python wheel needs no platform evidence");
  } else {
    out.kind = "shared object";
    if (!fs::is_regular_file(path)) throw Error(ErrorKind::not_found, "'" + path.string() + "' does not exist");
    if (!is_elf_file(path)) throw Error(ErrorKind::input, "'" + path.string() + "' is neither a .whl nor an ELF shared object");
    read_object(path, path.filename().string(), elves, gpu);
    out.files.push_back(path.filename().string());
  }
  ManylinuxOptions mo;
  mo.arch = elves.front().machine;
  mo.backend = options.backend;
  mo.allowed_external = options.allowed_external;
  mo.require_abi3 = out.tagged_abi3;
  out.report = assess_manylinux(elves, mo);
  out.gpu = gpu_evidence(std::move(gpu), out.kernel ? out.kernel->archs : std::vector<std::string>{});
  return out;
}

}  // namespace kwheel
