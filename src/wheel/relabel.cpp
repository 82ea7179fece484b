#include "kwheel/wheel/relabel.hpp"

#include "kwheel/base/atomic_file.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
namespace {

// What errors call the wheel: the path its user gave.
std::string source_of(const WheelArchive& wheel, const VariantRelabel& relabel) {
  return relabel.source.empty() ? wheel.path().filename().string() : relabel.source;
}

[[noreturn]] void refuse(const WheelArchive& wheel, const VariantRelabel& relabel, ErrorKind kind, const std::string& why) {
  throw Error(kind, "cannot re-label '" + source_of(wheel, relabel) + "' as a variant wheel: " + why);
}

// The header's Version field, as the reader (parse_metadata_fields) and
// Python's email parser read it: "Version:" then the value, the space
// between optional. npos when the header has none.
struct VersionLine {
  std::size_t start = std::string::npos, value = 0, stop = 0;
};

VersionLine version_line(const std::string& metadata) {
  std::size_t at = 0;
  while (at < metadata.size()) {
    const std::size_t end = metadata.find('\n', at);
    const std::size_t stop = end == std::string::npos ? metadata.size() : end;
    if (stop == at || (stop == at + 1 && metadata[at] == '\r')) break;  // the body begins
    if (metadata.compare(at, 8, "Version:") == 0) {
      std::size_t value = at + 8;
      while (value < stop && metadata[value] == ' ') ++value;
      return {at, value, stop > at && metadata[stop - 1] == '\r' ? stop - 1 : stop};
    }
    at = stop + 1;
  }
  return {};
}

// METADATA with its Version field (the first, in the header) replaced.
std::string with_version(const WheelArchive& wheel, const VariantRelabel& relabel) {
  const std::string& metadata = wheel.metadata_text();
  const VersionLine v = version_line(metadata);
  if (v.start == std::string::npos)
    refuse(wheel, relabel, ErrorKind::input, "its METADATA has no Version field in its header to change; rebuild the wheel");
  return metadata.substr(0, v.start) + "Version: " + relabel.version + metadata.substr(v.stop);
}

// The old .dist-info's own files: METADATA and WHEEL are written anew, and
// RECORD (with any signature over it) describes an archive that no longer
// exists.
bool regenerated(const std::string& member, const std::string& dist_prefix) {
  return member == dist_prefix + "METADATA" || member == dist_prefix + "WHEEL" || member.starts_with(dist_prefix + "RECORD");
}

// What a wheel the site accepted may still hold that re-labelling cannot
// carry over, refused before anything is written: a .data directory is
// named for the old version (and its scripts and headers would be the
// variant's, unchecked by the writer's rules), and a variant.json of its
// own would meet the one the label writes.
void check_relabellable(const WheelArchive& wheel, const VariantRelabel& relabel) {
  if (const auto problems = wheel.verify_record(); !problems.empty())
    refuse(wheel, relabel, ErrorKind::input, "its RECORD check failed: " + problems.front() + "; rebuild the wheel");
  const std::string variant_json = wheel.dist_info() + "/variant.json";
  for (const std::string& member : wheel.members()) {
    const std::string top = member.substr(0, member.find('/'));
    if (top.ends_with(".data"))
      refuse(wheel, relabel, ErrorKind::input,
             "it has a .data directory ('" + top + "/'), which a variant wheel cannot carry over; "
             "rebuild it without one (kwheel build writes none), or index without --variants");
    if (member == variant_json)
      refuse(wheel, relabel, ErrorKind::input,
             "it already holds '" + member + "', which only a variant wheel carries; rebuild it without one (kwheel build writes none)");
  }
}

}  // namespace

std::string relabelled_metadata(const WheelArchive& wheel, const VariantRelabel& relabel) { return with_version(wheel, relabel); }

std::string relabelled_filename(const WheelArchive& wheel, const VariantRelabel& relabel) {
  const WheelFilename& f = wheel.filename();
  return f.name + "-" + relabel.version + (f.build ? "-" + *f.build : "") + "-" + join(f.python, ".") + "-" + join(f.abi, ".") + "-" +
         join(f.platform, ".") + "-" + relabel.label + ".whl";
}

StagedWheel stage_relabelled(const WheelArchive& wheel, const VariantRelabel& relabel, const std::filesystem::path& out_dir,
                             const WriteOptions& options) {
  check_relabellable(wheel, relabel);
  const std::string old_prefix = wheel.dist_info() + "/";
  WheelContents contents;
  contents.dist_info = wheel.filename().name + "-" + relabel.version + ".dist-info";
  contents.metadata = relabelled_metadata(wheel, relabel);
  const std::string variant = relabelled_filename(wheel, relabel);
  // Below, what the reader and the writer refuse names their own files (a
  // member, a scratch file, the variant wheel); the error leads with the
  // wheel the user gave.
  try {
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
    const std::filesystem::path variant_json = scratch.path() / "variant.json";
    write_file_atomic(variant_json, relabel.variant_json);
    contents.members.push_back({contents.dist_info + "/variant.json", variant_json, std::nullopt, false});
    return stage_wheel(contents, out_dir / variant, options);
  } catch (const Error& e) {
    refuse(wheel, relabel, e.kind(),
           e.what() + std::string(e.kind() == ErrorKind::io ? "; check that the site's disk is writable and has room" : "; rebuild the wheel"));
  }
}

}  // namespace kwheel
