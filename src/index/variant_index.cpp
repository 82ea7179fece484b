#include "kwheel/index/variant_index.hpp"

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/test_seam.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/evidence/nvidia_variant.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/index/simple_api.hpp"
#include "kwheel/index/site_directory.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/validate/compat.hpp"
#include "kwheel/validate/wheel_objects.hpp"
#include "kwheel/wheel/relabel.hpp"

namespace kwheel {
namespace {

namespace fs = std::filesystem;

// A build that may become a variant: its torch, and what it runs on.
struct Candidate {
  const VariantSource* source = nullptr;
  const VariantWheel* recorded = nullptr;  // an earlier run's outcome, taken as it is
  std::string torch;    // "2.11"
  std::string version;  // "1+torch2.11"
  std::string label;
  VariantProperties properties;
  std::vector<std::string> evidence, unclaimed;
};

// Why a build gets no place in a per-torch variant index, or "".
std::string left_out_reason(const LocalLabel& l) {
  if (l.universal() || l.noarch) return "a pure-Python build, the same for every GPU: its sub-index serves it";
  if (l.framework != "torch" || !l.framework_version)
    return "built for " + l.describe() + ", not for one torch version (the variant index has one per torch version): its sub-index serves it";
  if (l.cxx98) return "a pre-C++11-ABI build, which no uv variant property tells apart: its sub-index serves it";
  if (l.cpu || l.cuda) return "";
  return "a " + l.backend + " build: uv 0.13.9 detects only NVIDIA GPUs, so any property would either never match or always match; its sub-index serves it";
}

// "sm90a", "ptx80": the code a label names.
std::string short_target(const CudaTarget& t) {
  std::string s = t.str();  // "sm_90a", "compute_80"
  return t.kind == CudaCodeKind::ptx ? "ptx" + s.substr(s.find('_') + 1) : "sm" + s.substr(s.find('_') + 1);
}

// cu + the bound + the code: the label is a function of what determines the
// properties, so one label always means one set of them (PEP 825).
std::string cuda_label(const CudaRelease& bound, const std::vector<CudaTarget>& code) {
  std::string label = "cu" + std::to_string(bound.major) + (bound.minor < 10 ? "" : ".") + std::to_string(bound.minor) + "_";
  // SASS before PTX, each by architecture: sm75.sm80...sm120.ptx120.
  std::vector<CudaTarget> sorted = code;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> names;
  for (const auto& t : sorted)
    if (names.empty() || names.back() != short_target(t)) names.push_back(short_target(t));
  return label + join(names, ".");
}

// Runs `step` for the wheel `s`. What it reads and writes below (the
// site's scratch copy of the wheel, its objects, the variant wheel being
// derived) names its own files, none of which the user gave or will find:
// the error leads with the wheel of DIST it is about.
template <class Step>
auto for_wheel(const VariantSource& s, const std::string& doing, Step&& step) -> decltype(step()) {
  try {
    return step();
  } catch (const Error& e) {
    const std::string fix = e.kind() == ErrorKind::io ? "check that the site's disk is writable and has room"
                                                      : "rebuild the wheel, or index without --variants";
    throw Error(e.kind(), "cannot add '" + s.given.string() + "' to the variant index: " + doing + ": " + e.what() + "; " + fix, e.reason());
  }
}

// Fills `c` from the wheel's binaries; returns why it cannot, or "".
std::string read_cuda(const LocalLabel& l, Candidate& c) {
  note_wheel_read(c.source->path);
  const auto objects = for_wheel(*c.source, "its GPU code cannot be read", [&] { return wheel_gpu_code(WheelArchive(c.source->path)); });
  const auto ev = nvidia_variant_evidence(objects, parse_cuda_release(*l.cuda));
  if (!ev.problem.empty()) return ev.problem;
  auto& nvidia = c.properties[std::string(kNvidiaNamespace)];
  nvidia["cuda_version_lower_bound"] = {ev.lower_bound->str()};
  nvidia["sm_arch"] = ev.sm_arch;
  c.evidence = ev.lower_bound_from;
  c.unclaimed = ev.unclaimed;
  c.label = cuda_label(*ev.lower_bound, all_cuda_targets(objects));
  return "";
}

std::string candidate(const VariantSource& s, Candidate& c) {
  const WheelFilename f = parse_wheel_filename(s.filename);  // a variant wheel given to the site is refused before
  const LocalLabel l = read_label(f.version);
  if (std::string why = left_out_reason(l); !why.empty()) return why;
  c.source = &s;
  c.torch = l.framework_version->str();
  c.version = Version::parse(f.version).public_str() + "+torch" + c.torch;
  if (l.cpu) {
    c.label = std::string(kNullVariantLabel);
    return "";
  }
  return read_cuda(l, c);
}

VariantsJson variants_json(const std::map<std::string, VariantProperties>& variants) {
  VariantsJson v;
  v.namespace_priorities = {std::string(kNvidiaNamespace)};
  v.providers[std::string(kNvidiaNamespace)] = nvidia_variant_provider();
  v.variants = variants;
  return v;
}

struct ReleaseKey {  // one project version of one torch's index
  std::string torch, project, version;
  auto operator<=>(const ReleaseKey&) const = default;
};

class Writer {
 public:
  Writer(const site::PageSink& sink, const fs::path& reuse, std::string base)
      : files_(sink.root / kVariantsDir / "files"), reuse_(reuse), base_(std::move(base)), sink_(sink) {}

  void add(const Candidate& c, VariantIndexReport& report);
  bool add_recorded(const Candidate& c, VariantIndexReport& report);
  void finish(VariantIndexReport& report);

 private:
  IndexFile written_file(const fs::path& file, const std::string& version) const;
  IndexFile url_of(const std::string& filename, const std::string& version) const;
  std::optional<std::pair<std::string, fs::path>> reused(const std::string& filename) const;
  bool kept(const fs::path& rel) const;
  fs::path files_, reuse_;
  std::string base_;
  const site::PageSink& sink_;
  std::set<std::string> taken_;  // the variant wheels' names so far: two builds may make one
  std::map<ReleaseKey, std::map<std::string, VariantProperties>> releases_;
  std::map<ReleaseKey, std::vector<IndexFile>> pages_;
};

IndexFile Writer::url_of(const std::string& filename, const std::string& version) const {
  IndexFile f;
  f.filename = filename;
  f.url = (base_.empty() ? "../../../files/" : base_ + "/" + std::string(kVariantsDir) + "/files/") + encode_component(f.filename);
  f.version = version;
  return f;
}

IndexFile Writer::written_file(const fs::path& file, const std::string& version) const {
  IndexFile f = url_of(file.filename().string(), version);
  f.sha256 = sha256_file_hex(file);
  f.size = fs::file_size(file);
  return f;
}

// The site's variant wheel of this name, kept where it is, with the bytes
// of its .metadata: a variant wheel is a function of its build's bytes,
// which never change under one name, and of kwheel's version, which
// build_site checks before it names the site (`reuse`).
std::optional<std::pair<std::string, fs::path>> Writer::reused(const std::string& filename) const {
  const fs::path rel = fs::path(kVariantsDir) / "files" / filename;
  if (!kept(rel)) return std::nullopt;
  std::ifstream in(fs::path(reuse_ / rel) += ".metadata", std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) return std::nullopt;
  return std::make_pair(bytes.str(), reuse_ / rel);
}

// The site (`reuse`) holds the variant wheel REL and its .metadata: both
// stay as they are, the new site's without a write.
bool Writer::kept(const fs::path& rel) const {
  std::error_code ec;
  if (reuse_.empty() || !fs::is_regular_file(reuse_ / rel, ec) || !fs::is_regular_file(fs::path(reuse_ / rel) += ".metadata", ec)) return false;
  sink_.note(rel);
  sink_.note(fs::path(rel) += ".metadata");
  return true;
}

// The variant wheel an earlier run derived from this build, listed from its
// record: neither the build nor the variant wheel is opened. False (nothing
// done) when the site no longer holds that file.
bool Writer::add_recorded(const Candidate& c, VariantIndexReport& report) {
  const VariantWheel& w = *c.recorded;
  if (!kept(fs::path(kVariantsDir) / "files" / w.filename)) return false;
  if (!taken_.insert(w.filename).second) {
    report.left_out.push_back({c.source->filename, "the same variant as another build (" + w.filename + ")"});
    return true;
  }
  IndexFile f = url_of(w.filename, w.version);
  f.sha256 = w.sha256;
  f.size = w.size;
  f.requires_python = w.requires_python;
  f.metadata_sha256 = w.metadata_sha256;
  const ReleaseKey r{c.torch, c.source->project, w.version};
  releases_[r][w.label] = w.properties;
  pages_[r].push_back(std::move(f));
  report.wheels.push_back(w);
  report.wheels.back().source = c.source->filename;
  return true;
}

void Writer::add(const Candidate& c, VariantIndexReport& report) {
  if (c.recorded) {
    if (add_recorded(c, report)) return;
    Candidate fresh;  // its variant wheel is gone: derived again, from the build
    if (std::string why = candidate(*c.source, fresh); !why.empty()) return report.left_out.push_back({c.source->filename, why});
    return add(fresh, report);
  }
  note_wheel_read(c.source->path);
  const WheelArchive wheel = for_wheel(*c.source, "it cannot be read", [&] { return WheelArchive(c.source->path); });
  const ReleaseKey r{c.torch, c.source->project, c.version};
  // stage_relabelled's and relabelled_metadata's errors name `given` themselves.
  VariantRelabel relabel{c.version, c.label, render_variants_json(variants_json({{c.label, c.properties}})), c.source->given.string()};
  const fs::path out = files_ / relabelled_filename(wheel, relabel);
  if (!taken_.insert(out.filename().string()).second) {
    report.left_out.push_back({c.source->filename, "the same variant as another build (" + out.filename().string() + ")"});
    return;
  }
  std::string metadata;
  IndexFile f;
  if (auto kept = reused(out.filename().string())) {
    metadata = std::move(kept->first);
    f = written_file(kept->second, c.version);
  } else {
    StagedWheel staged = stage_relabelled(wheel, relabel, files_, WriteOptions{});
    metadata = relabelled_metadata(wheel, relabel);
    f = for_wheel(*c.source, "its variant wheel cannot be written into the site", [&] {
      staged.commit();
      site::write_text(fs::path(out) += ".metadata", metadata);
      return written_file(out, c.version);
    });
  }
  f.requires_python = wheel.field("Requires-Python");
  f.metadata_sha256 = sha256_hex(metadata);
  releases_[r][c.label] = c.properties;
  pages_[r].push_back(f);
  report.wheels.push_back({c.source->filename, f.filename, variant_index_name(c.torch), c.version, c.label, c.properties, c.evidence, c.unclaimed, f.sha256,
                           f.size.value_or(0), f.requires_python, f.metadata_sha256.value_or("")});
}

void Writer::finish(VariantIndexReport& report) {
  std::map<std::string, std::map<std::string, std::vector<IndexFile>>> indexes;  // torch -> project -> files
  for (auto& [r, files] : pages_) {
    const std::string name = variants_json_filename(r.project, r.version), json = render_variants_json(variants_json(releases_[r]));
    sink_.write(fs::path(kVariantsDir) / "files" / name, json);
    IndexFile f = url_of(name, r.version);
    f.sha256 = sha256_hex(json);
    f.size = json.size();
    files.push_back(std::move(f));
    auto& page = indexes[r.torch][r.project];
    page.insert(page.end(), files.begin(), files.end());
  }
  for (auto& [torch, projects] : indexes) {
    const fs::path simple = fs::path(variant_index_name(torch)) / "simple";
    std::vector<std::string> names;
    for (auto& [project, files] : projects) {
      std::sort(files.begin(), files.end(), [](const IndexFile& a, const IndexFile& b) { return a.filename < b.filename; });
      sink_.write(simple / project / "index.html", render_project_html(project, files));
      sink_.write(simple / project / "index.json", render_project_json(project, files));
      names.push_back(project);
    }
    sink_.write(simple / "index.html", render_root_html(names));
    sink_.write(simple / "index.json", render_root_json(names));
    report.indexes.push_back(variant_index_name(torch));
  }
}

}  // namespace

std::string variant_index_name(const std::string& torch) { return std::string(kVariantsDir) + "/torch" + torch; }

VariantIndexReport write_variant_indexes(const site::PageSink& sink, const std::vector<VariantSource>& wheels, const std::string& base_url,
                                         const fs::path& reuse) {
  VariantIndexReport report;
  std::vector<Candidate> candidates;
  for (const auto& s : wheels) {
    Candidate c;
    // Recorded by a run of this kwheel (`reuse`): taken as it was, without
    // opening the build. A recorded variant wheel the site lost is derived.
    if (!reuse.empty() && s.recorded && !s.recorded->wheel) {
      report.left_out.push_back({s.filename, s.recorded->left_out});
      continue;
    }
    if (!reuse.empty() && s.recorded) {
      const VariantWheel& w = *s.recorded->wheel;
      c.source = &s;
      c.recorded = &w;
      c.torch = w.index.substr(w.index.rfind("torch") + 5);
      candidates.push_back(std::move(c));
      continue;
    }
    if (std::string why = candidate(s, c); !why.empty()) report.left_out.push_back({s.filename, why});
    else candidates.push_back(std::move(c));
  }
  // Where two builds would be the same variant wheel, the one built for the
  // newer CUDA (the later filename) is kept.
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) { return a.source->filename > b.source->filename; });
  Writer writer(sink, reuse, base_url);
  for (const auto& c : candidates) writer.add(c, report);
  writer.finish(report);
  return report;
}

}  // namespace kwheel
