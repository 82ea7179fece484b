#include "kwheel/index/pin_variants.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "kwheel/base/environment.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/process.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/requires_python.hpp"
#include "kwheel/packaging/variant_selection.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/packaging/wheel_variant.hpp"
#include "kwheel/validate/compat.hpp"

namespace kwheel {
namespace {

CudaRelease driver_or_throw(const std::string& text, const std::string& option) {
  if (auto r = parse_cuda_release(text)) return *r;
  throw Error(ErrorKind::usage, option + " '" + text + "' is not a CUDA version; give it as X.Y, e.g. 13.0");
}

CudaArch gpu_or_throw(const std::string& text, const std::string& option) {
  if (auto a = parse_compute_capability(text)) return *a;
  throw Error(ErrorKind::usage, option + " '" + text + "' is not a compute capability; give it as X.Y, e.g. 9.0");
}

// What uv's NvidiaGpu::detect reads: the CUDA version `nvidia-smi -q`
// reports, and the highest compute capability of --query-gpu=compute_cap.
// Nothing when nvidia-smi is missing or fails.
struct Detected {
  std::optional<CudaRelease> driver;
  std::optional<CudaArch> gpu;
};

Detected nvidia_smi() {
  ProcessResult q, cap;
  ProcessOptions o;
  o.timeout = std::chrono::seconds(30);
  try {
    q = run_process({"nvidia-smi", "-q"}, o);
    cap = run_process({"nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"}, o);
  } catch (const Error&) {
    return {};
  }
  if (q.exit_code != 0) return {};
  Detected d;
  for (const auto& line : split(q.out, '\n')) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    if (key == "CUDA Version" || key == "CUDA UMD Version") d.driver = parse_cuda_release(trim(line.substr(colon + 1)));
  }
  if (!d.driver) return {};
  for (const auto& line : split(cap.out, '\n'))
    if (auto a = parse_compute_capability(trim(line)); a && (!d.gpu || *d.gpu < *a)) d.gpu = a;
  return d;
}

// uv uses a detected driver only inside its provider's range.
bool usable(const Detected& d) { return d.driver && nvidia_driver_in_detection_range({d.driver->major, d.driver->minor}); }

std::optional<std::pair<unsigned, unsigned>> pair_of(const std::optional<CudaRelease>& r) {
  if (!r) return std::nullopt;
  return std::pair(r->major, r->minor);
}

std::optional<std::pair<unsigned, unsigned>> pair_of(const std::optional<CudaArch>& a) {
  if (!a) return std::nullopt;
  return std::pair(a->major, a->minor);
}

// The variant wheels of one version, and the variants.json that describes them.
struct VersionGroup {
  Version version;
  std::string version_text;
  const IndexFile* variants_json = nullptr;
  std::vector<size_t> wheels;  // into result.candidates
};

std::map<std::string, VersionGroup> group(const std::vector<IndexFile>& files, const PinRequest& req, PinResult& result) {
  std::map<std::string, VersionGroup> releases;
  std::optional<SpecifierSet> spec;
  if (req.version) spec = SpecifierSet::parse(*req.version);
  for (const auto& f : files) {
    if (f.filename.ends_with("-variants.json")) continue;
    WheelFilename w;
    try {
      w = parse_wheel_filename(f.filename, VariantLabels::accept);
    } catch (const Error&) {
      continue;
    }
    if (normalize_name(w.name) != result.project) continue;
    PinCandidate c{f, read_label(w.version), std::nullopt, false};
    const auto v = Version::try_parse(w.version);
    if (!w.variant) c.problem = "not a variant wheel (a variant index serves variant wheels only)";
    else if (!v) c.problem = "version '" + w.version + "' is not PEP 440";
    else if (spec && !spec->contains(*v, true)) c.problem = "version " + w.version + " is outside --version " + spec->str();
    else if (f.yanked) c.problem = "yanked on the index";
    else if (f.sha256.size() != 64) c.problem = "the index gives no sha256 for it, so it cannot be pinned by hash";
    else c.problem = tags_and_torch_incompatibility(w, req.target);
    // As pin's other candidates, and as uv: the index entry's Requires-Python.
    if (!c.problem && !requires_python_version(req.target).empty()) {
      c.problem = requires_python_problem(f.requires_python, requires_python_version(req.target), "its index entry");
      c.python_excluded = c.problem.has_value();
    }
    if (!c.problem) {
      auto& r = releases.try_emplace(w.version, VersionGroup{*v, w.version, nullptr, {}}).first->second;
      r.wheels.push_back(result.candidates.size());
    }
    result.candidates.push_back(std::move(c));
  }
  for (auto& [version, r] : releases)  // each version's metadata, named as uv names it
    for (const auto& f : files)
      if (f.filename == variants_json_filename(result.project, version)) r.variants_json = &f;
  return releases;
}

// The label each fitting wheel carries, and whether the machine supports it.
std::optional<std::string> best_label(const VersionGroup& r, const VariantsJson& v, const VariantMachine& m, PinResult& result) {
  const SupportedProperties supported = supported_for(v, nvidia_supported_features(pair_of(m.cuda_driver), pair_of(m.gpu)));
  std::vector<std::string> labels;
  for (size_t i : r.wheels) {
    PinCandidate& c = result.candidates[i];
    const std::string label = *parse_wheel_filename(c.file.filename, VariantLabels::accept).variant;
    if (!v.variants.count(label)) c.problem = "its variant '" + label + "' is not in " + r.variants_json->filename;
    else if (!score_variant(v, label, supported)) c.problem = "its variant needs " + describe_unsupported(unsupported_properties(v, label, supported).value_or(VariantProperties{})) + ", which " + m.describe() + " does not offer";
    else labels.push_back(label);
  }
  const auto ordered = order_variants(v, labels, supported);
  if (ordered.empty()) return std::nullopt;
  return ordered.front();
}

}  // namespace

std::string VariantMachine::describe() const {
  if (!cuda_driver) return "a machine without an NVIDIA driver (" + from + ")";
  return "CUDA driver " + cuda_driver->str() + (gpu ? ", GPU " + gpu->capability() : ", no GPU capability known") + " (" + from + ")";
}

VariantMachine variant_machine(const std::optional<std::string>& cuda_driver, const std::optional<std::string>& sm_arch) {
  if (cuda_driver || sm_arch) {
    if (!cuda_driver) throw Error(ErrorKind::usage, "--sm-arch needs --cuda-driver X.Y too (uv's NVIDIA provider reads both)");
    VariantMachine m{std::nullopt, std::nullopt, "--cuda-driver/--sm-arch"};
    if (*cuda_driver == "none") return m;
    m.cuda_driver = driver_or_throw(*cuda_driver, "--cuda-driver");
    if (sm_arch) m.gpu = gpu_or_throw(*sm_arch, "--sm-arch");
    return m;
  }
  const auto forced_driver = env_value(std::string(kNvidiaForceCudaDriverEnv).c_str());
  const auto forced_arch = env_value(std::string(kNvidiaForceSmArchEnv).c_str());
  // As uv's provider: a forced value replaces what would be detected; a
  // detected driver counts only inside the provider's range, a detected GPU
  // always.
  const Detected d = forced_driver && forced_arch ? Detected{} : nvidia_smi();
  VariantMachine m{std::nullopt, std::nullopt, forced_driver || forced_arch ? "NV_VARIANT_PROVIDER_FORCE_*" : "nvidia-smi"};
  if (forced_driver) m.cuda_driver = driver_or_throw(*forced_driver, std::string(kNvidiaForceCudaDriverEnv));
  else if (usable(d)) m.cuda_driver = d.driver;
  if (!m.cuda_driver) return {std::nullopt, std::nullopt, forced_arch ? m.from : "none"};
  m.gpu = forced_arch ? gpu_or_throw(*forced_arch, std::string(kNvidiaForceSmArchEnv)) : d.gpu;
  return m;
}

bool is_variant_listing(const std::vector<IndexFile>& files) {
  return std::any_of(files.begin(), files.end(), [](const IndexFile& f) { return f.filename.ends_with("-variants.json"); });
}

void pin_variant_listing(const std::vector<IndexFile>& files, const PinRequest& req, const VariantMachine& machine,
                         const std::function<std::string(const IndexFile&)>& fetch, PinResult& result) {
  auto releases = group(files, req, result);
  std::vector<VersionGroup*> newest_first;
  for (auto& [_, r] : releases) newest_first.push_back(&r);
  std::sort(newest_first.begin(), newest_first.end(), [](const VersionGroup* a, const VersionGroup* b) { return b->version < a->version; });
  for (VersionGroup* r : newest_first) {
    if (r->wheels.empty()) continue;
    if (!r->variants_json) {
      for (size_t i : r->wheels) result.candidates[i].problem = "the page links no " + variants_json_filename(result.project, r->version_text);
      continue;
    }
    const VariantsJson v = parse_variants_json(fetch(*r->variants_json), "'" + r->variants_json->url + "'");
    const auto label = best_label(*r, v, machine, result);
    if (!label) continue;
    result.version = r->version_text;
    result.label = read_label(r->version_text);
    result.variant_label = *label;
    for (size_t i : r->wheels)
      if (!result.candidates[i].problem && parse_wheel_filename(result.candidates[i].file.filename, VariantLabels::accept).variant == *label)
        result.files.push_back(result.candidates[i].file);
    std::sort(result.files.begin(), result.files.end(), [](const IndexFile& a, const IndexFile& b) { return a.filename < b.filename; });
    result.variant_machine = machine.describe();
    return;
  }
}

}  // namespace kwheel
