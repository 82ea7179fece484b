#include "kwheel/inspect.hpp"

#include <stdlib.h>

#include "kwheel/error.hpp"
#include "kwheel/temp_dir.hpp"
#include "kwheel/text.hpp"
#include "kwheel/wheel_reader.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

bool looks_shared(const std::string& name) { return name.ends_with(".so") || name.find(".so.") != std::string::npos; }

}  // namespace

Inspection inspect_path(const fs::path& path, const InspectOptions& options) {
  Inspection out;
  std::vector<ElfInfo> elves;
  std::string arch;
  if (path.extension() == ".whl") {
    out.kind = "wheel";
    WheelArchive wheel(path);
    out.revision = recorded_revision(wheel.metadata());
    for (const auto& m : wheel.members())
      if (m.ends_with("/metadata.json") && m.find('/') == m.rfind('/') && !m.starts_with(wheel.dist_info() + "/"))
        out.kernel = parse_kernel_metadata(wheel.read(m, kMaxKernelMetadataBytes + 1), "wheel '" + path.filename().string() + "' member '" + m + "'");
    out.current_tags = join(wheel.filename().platform, ".");
    for (const auto& a : wheel.filename().abi) out.tagged_abi3 = out.tagged_abi3 || a == "abi3";
    // Only the shared objects leave the archive, one at a time, each removed
    // once read: the scratch space is one member, whatever the wheel holds.
    // WheelArchive has bounded their declared sizes and stream() holds each
    // to its declared size.
    TempDir scratch("inspect");
    const fs::path tmp = scratch.path() / "member.so";
    for (const auto& m : wheel.members()) {
      if (!looks_shared(m)) continue;
      wheel.extract(m, tmp, kMaxInspectedObjectBytes);
      if (!is_elf_file(tmp)) throw Error(ErrorKind::input, "wheel '" + path.filename().string() + "': '" + m + "' is named like a shared object but is not an ELF file");
      ElfInfo e = read_elf(tmp);
      fs::remove(tmp);
      e.name = m;  // report the member, not our temp file
      elves.push_back(std::move(e));
      out.files.push_back(m);
    }
    if (elves.empty()) throw Error(ErrorKind::input, "wheel '" + path.filename().string() + "' holds no shared object; a pure-Python wheel needs no platform evidence");
  } else {
    out.kind = "shared object";
    if (!fs::is_regular_file(path)) throw Error(ErrorKind::not_found, "'" + path.string() + "' does not exist");
    if (!is_elf_file(path)) throw Error(ErrorKind::input, "'" + path.string() + "' is neither a .whl nor an ELF shared object");
    elves.push_back(read_elf(path));
    out.files.push_back(path.filename().string());
  }
  ManylinuxOptions mo;
  mo.arch = elves.front().machine;
  mo.backend = options.backend;
  mo.allowed_external = options.allowed_external;
  mo.require_abi3 = out.tagged_abi3;
  out.report = assess_manylinux(elves, mo);
  return out;
}

}  // namespace kwheel
