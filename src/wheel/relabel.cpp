#include "kwheel/wheel/relabel.hpp"

#include "kwheel/base/atomic_file.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
namespace {

// METADATA with its Version field (the first, in the header) replaced.
std::string with_version(const std::string& metadata, const std::string& version, const std::string& wheel_name) {
  std::size_t at = 0;
  while (at < metadata.size()) {
    const std::size_t end = metadata.find('\n', at);
    const std::size_t stop = end == std::string::npos ? metadata.size() : end;
    if (stop == at || (stop == at + 1 && metadata[at] == '\r')) break;  // the body begins
    if (metadata.compare(at, 9, "Version: ") == 0) {
      std::string line_end = stop > at && metadata[stop - 1] == '\r' ? "\r" : "";
      return metadata.substr(0, at) + "Version: " + version + line_end + metadata.substr(stop);
    }
    at = stop + 1;
  }
  throw Error(ErrorKind::input, "wheel '" + wheel_name + "': METADATA has no Version field to re-label; rebuild the wheel");
}

// The old .dist-info's own files: METADATA and WHEEL are written anew, and
// RECORD (with any signature over it) describes an archive that no longer
// exists.
bool regenerated(const std::string& member, const std::string& dist_prefix) {
  return member == dist_prefix + "METADATA" || member == dist_prefix + "WHEEL" || member.starts_with(dist_prefix + "RECORD");
}

}  // namespace

std::string relabelled_metadata(const WheelArchive& wheel, const std::string& version) {
  return with_version(wheel.metadata_text(), version, wheel.path().filename().string());
}

std::string relabelled_filename(const WheelArchive& wheel, const VariantRelabel& relabel) {
  const WheelFilename& f = wheel.filename();
  return f.name + "-" + relabel.version + (f.build ? "-" + *f.build : "") + "-" + join(f.python, ".") + "-" + join(f.abi, ".") + "-" +
         join(f.platform, ".") + "-" + relabel.label + ".whl";
}

StagedWheel stage_relabelled(const WheelArchive& wheel, const VariantRelabel& relabel, const std::filesystem::path& out_dir,
                             const WriteOptions& options) {
  const std::string name = wheel.path().filename().string();
  if (const auto problems = wheel.verify_record(); !problems.empty())
    throw Error(ErrorKind::input, "refusing to re-label '" + name + "': RECORD check failed: " + problems.front() + "; rebuild the wheel");
  const std::string old_prefix = wheel.dist_info() + "/";
  WheelContents contents;
  contents.dist_info = wheel.filename().name + "-" + relabel.version + ".dist-info";
  contents.metadata = relabelled_metadata(wheel, relabel.version);
  contents.wheel = wheel.read(old_prefix + "WHEEL");
  TempDir scratch("relabel");
  std::size_t n = 0;
  for (const std::string& member : wheel.members()) {
    if (member.ends_with("/") || regenerated(member, old_prefix)) continue;
    const std::filesystem::path file = scratch.path() / std::to_string(n++);
    wheel.extract(member, file);
    const std::string path = member.starts_with(old_prefix) ? contents.dist_info + "/" + member.substr(old_prefix.size()) : member;
    contents.members.push_back({path, file, std::nullopt, wheel.executable(member)});
  }
  const std::filesystem::path variant = scratch.path() / "variant.json";
  write_file_atomic(variant, relabel.variant_json);
  contents.members.push_back({contents.dist_info + "/variant.json", variant, std::nullopt, false});
  return stage_wheel(contents, out_dir / relabelled_filename(wheel, relabel), options);
}

}  // namespace kwheel
