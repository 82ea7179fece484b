// `kwheel pin`: which build of a kernel fits an environment, and the
// requirements.txt that pins it. The sources it reads are pin_source's, the
// bytes it trusts pin_metadata's.
#include "kwheel/index/pin.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/http.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/index/index_values.hpp"
#include "kwheel/index/pin_metadata.hpp"
#include "kwheel/index/pin_source.hpp"
#include "kwheel/index/pin_variants.hpp"
#include "kwheel/kernel/kernel_lock.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/requires_python.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/wheel/kernel_marker.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// How specific a fitting build is: only builds for the target's backend fit
// (kernels' rule, validate/backend_rule), so a native build for its torch
// ranks first, then a stable-ABI or tvm-ffi one, a pure-Python backend
// build, torch-universal. Within a rank the newest CUDA minor wins, as
// kernels prefers it (cu128 over cu126 on CUDA 12.8).
std::pair<int, int> specificity(const LocalLabel& l) {
  if (l.universal()) return {0, 0};
  if (l.noarch) return {1, 0};
  if (l.framework.empty()) return {0, 0};
  const auto cuda = l.cuda ? leading_major_minor(*l.cuda) : std::nullopt;
  return {l.framework == "torch" ? 3 : 2, cuda ? cuda->minor : 0};
}

std::string variant_name(const LocalLabel& l) {
  if (l.universal()) return "universal";
  std::string n = l.index_name();
  return n.empty() ? "+" + l.text : n;
}

std::string describe(const InterpreterInfo& t) {
  if (!t.executable.empty())
    return t.executable + " (Python " + t.python + ", torch " + t.torch.value_or("none") + (t.cuda ? ", CUDA " + *t.cuda : t.hip ? ", ROCm" : ", CPU") + ")";
  return "torch " + t.torch.value_or("?") + (t.cuda ? " + CUDA " + *t.cuda : " CPU-only");
}

}  // namespace

InterpreterInfo described_target(const std::string& torch, const std::optional<std::string>& cuda) {
  auto mm = leading_major_minor(torch);
  if (!mm || torch.find_first_not_of("0123456789.") != std::string::npos)
    throw Error(ErrorKind::usage, "--torch '" + torch + "' is not a torch version like 2.7");
  InterpreterInfo t;
  t.torch = mm->str();
  if (cuda) {
    auto c = leading_major_minor(*cuda);
    if (!c || cuda->find_first_not_of("0123456789.") != std::string::npos)
      throw Error(ErrorKind::usage, "--cuda '" + *cuda + "' is not a CUDA version like 12.6");
    t.cuda = c->str();
  }
  return t;
}

namespace {

// A candidate that fits, ranked.
struct Fit {
  size_t i;  // into PinResult::candidates
  Version public_version, version;
  std::pair<int, int> score;  // specificity()
};

// Every wheel of the project becomes a candidate, with the reason it does
// not fit or, when it does, its rank.
std::vector<Fit> judge_candidates(const std::vector<IndexFile>& files, const PinRequest& req, HttpClient& http, PinResult& result) {
  std::optional<SpecifierSet> spec;
  if (req.version) spec = SpecifierSet::parse(*req.version);
  const std::string python = requires_python_version(req.target);
  std::vector<Fit> fits;
  for (const auto& f : files) {
    PinCandidate c;
    c.file = f;
    WheelFilename w;
    try {
      w = parse_wheel_filename(f.filename);
    } catch (const Error&) {
      continue;  // an sdist or a stray file: not a candidate
    }
    if (normalize_name(w.name) != result.project) continue;
    c.label = read_label(w.version);
    auto v = Version::try_parse(w.version);
    if (!v) c.problem = "version '" + w.version + "' is not PEP 440";
    else if (spec && !spec->contains(*v, true)) c.problem = "version " + w.version + " is outside --version " + spec->str();
    else if (f.yanked) c.problem = "yanked on the index";
    else if (f.sha256.size() != 64) c.problem = "the index gives no sha256 for it, so it cannot be pinned by hash";
    else c.problem = filename_incompatibility(w, req.target, req.device);
    // pip's LinkEvaluator: a file whose data-requires-python (PEP 503) or
    // requires-python (PEP 691) excludes the interpreter is no candidate.
    if (!c.problem && !python.empty()) {
      c.problem = requires_python_problem(f.requires_python, python, "its index entry");
      c.python_excluded = c.problem.has_value();
    }
    if (!c.problem && req.commit) c.problem = commit_problem(f, req, &http);
    if (!c.problem) fits.push_back({result.candidates.size(), Version::parse(v->public_str()), *v, specificity(c.label)});
    result.candidates.push_back(std::move(c));
  }
  return fits;
}

std::string target_description(const PinRequest& req) { return req.target_described.empty() ? describe(req.target) : req.target_described; }

// Nothing fits: the variants and versions there are, and one example reason.
[[noreturn]] void throw_no_fit(const PinResult& result, const std::string& where, const PinRequest& req) {
  std::map<std::string, std::set<std::string>> available;
  // The example reason: a build for the target's torch if there is one
  // (its problem is the interesting one), else the first.
  std::string first_reason;
  const auto target_torch = req.target.torch ? leading_major_minor(*req.target.torch) : std::nullopt;
  for (int pass = 0; pass < 2 && first_reason.empty(); ++pass)
    for (const auto& c : result.candidates)
      if (first_reason.empty() && c.problem && (pass == 1 || (target_torch && c.label.framework_version == target_torch)))
        first_reason = c.file.filename + ": " + *c.problem;
  for (const auto& c : result.candidates)
    if (!c.file.version.empty()) available[variant_name(c.label)].insert(c.file.version);  // not a refused name
  std::string list;
  for (const auto& [v, versions] : available) {
    std::string vs;
    for (const auto& x : versions) {
      if (!vs.empty()) vs += "/";
      vs += Version::try_parse(x).value_or(Version::parse("0")).public_str();
    }
    list += (list.empty() ? "" : ", ") + v + " (" + vs + ")";
  }
  throw Error(ErrorKind::not_found, "no " + result.project + " wheel at " + where + " fits " + target_description(req) +
                                        "; available: " + list + " (e.g. " + first_reason + "); pin one with --torch X.Y --cuda X.Y or --cpu, or build that variant");
}

// The newest public version wins, then the most specific build, then the
// newest local version; every fitting file of exactly that version is kept.
void choose(const std::vector<Fit>& fits, PinResult& result) {
  auto best = std::max_element(fits.begin(), fits.end(), [](const Fit& a, const Fit& b) {
    if (a.public_version != b.public_version) return a.public_version < b.public_version;
    if (a.score != b.score) return a.score < b.score;
    return a.version < b.version;
  });
  const PinCandidate& chosen = result.candidates[best->i];
  result.files.clear();
  result.label = chosen.label;
  result.version = chosen.file.version;
  for (const auto& f : fits)
    if (f.version == best->version && result.candidates[f.i].file.version == chosen.file.version) result.files.push_back(result.candidates[f.i].file);
  std::sort(result.files.begin(), result.files.end(), [](const IndexFile& a, const IndexFile& b) { return a.filename < b.filename; });
}

std::string sub_index_words(const LocalLabel& l) { return l.index_name().empty() ? "" : " (sub-index " + l.index_name() + ")"; }

std::vector<std::string> index_options(const std::string& index_line) {
  return index_line.empty() ? std::vector<std::string>{} : std::vector<std::string>{index_line};
}

// The requirement line and the requirements.txt snippet around it.
// A pin from a variant index names its PEP 825 variant and the machine it
// was chosen for. Every comment goes through requirements_comment(), and
// the text through check_requirements_text(): what the index named cannot
// become a line of its own.
void write_requirements(const PinRequest& req, PinResult& result) {
  result.requirement = result.project + "==" + result.version;
  for (const auto& f : result.files) result.requirement += " --hash=sha256:" + f.sha256;
  const bool wheel_variant = !result.variant_label.empty();
  std::string t = requirements_comment("kwheel pin: " + result.project + " for " + target_description(req) + (wheel_variant ? " on " + result.variant_machine : ""));
  if (wheel_variant)
    t += requirements_comment("variant: " + result.variant_label + " (PEP 825; install with uv pip install --preview-features wheel-variants -r FILE)");
  else
    t += requirements_comment("variant: " + result.label.describe() + sub_index_words(result.label));
  for (const auto& f : result.files) t += requirements_comment("file: " + f.filename);
  if (!result.index_line.empty()) t += result.index_line + "\n";
  else t += requirements_comment("from directory " + fs::absolute(req.source).string() + ": pip install --find-links DIR -r requirements.txt");
  t += result.requirement + "\n";
  check_requirements_text(t, index_options(result.index_line), "the requirements of " + result.project);
  result.text = t;
}

// The METADATA pin read of each candidate, by URL: read once.
using MetadataReads = std::map<std::string, CandidateMetadata>;

const CandidateMetadata& metadata_of(const IndexFile& f, HttpClient& http, MetadataReads& reads) {
  auto it = reads.find(f.url);
  if (it == reads.end()) it = reads.emplace(f.url, candidate_metadata(f, &http)).first;
  return it->second;
}

// pip reads the METADATA of the wheel it is about to install (PEP 658, or
// the wheel) and, when its Requires-Python excludes the interpreter, takes
// the next candidate. pin does the same for the files it chose, where
// their METADATA is at hand: a local wheel, PEP 658 metadata with a sha256,
// or any wheel when the dependencies are read anyway (it is fetched then).
// Returns whether a chosen file was passed over, so that pin chooses again.
bool pass_over_by_metadata(std::vector<Fit>& fits, const PinRequest& req, HttpClient& http, PinResult& result, MetadataReads& reads) {
  const std::string python = requires_python_version(req.target);
  bool passed_over = false;
  for (auto it = fits.begin(); it != fits.end();) {
    PinCandidate& c = result.candidates[it->i];
    const bool chosen = std::any_of(result.files.begin(), result.files.end(), [&](const IndexFile& f) { return f.url == c.file.url; });
    const bool local = c.file.url.find("://") == std::string::npos || c.file.url.starts_with("file://");
    const bool at_hand = local || (c.file.metadata_sha256 && !c.file.metadata_sha256->empty()) || req.read_requirements;
    std::optional<std::string> problem;
    if (chosen && at_hand)
      if (const CandidateMetadata& md = metadata_of(c.file, http, reads); md.text)
        for (const auto& [key, value] : parse_metadata_fields(*md.text))
          if (key == "Requires-Python" && !problem) problem = requires_python_problem(value, python, "its METADATA");
    if (!problem) {
      ++it;
      continue;
    }
    c.problem = problem;
    c.python_excluded = true;
    it = fits.erase(it);
    passed_over = true;
  }
  return passed_over;
}

// The newest fitting version whose chosen files' METADATA does not exclude
// the target's Python; nothing left: the no-fit error.
void choose_fitting(std::vector<Fit>& fits, const PinRequest& req, HttpClient& http, PinResult& result, MetadataReads& reads, const std::string& where) {
  const bool python_known = !requires_python_version(req.target).empty();
  do {
    if (fits.empty()) throw_no_fit(result, where, req);
    choose(fits, result);
  } while (python_known && pass_over_by_metadata(fits, req, http, result, reads));
}

// One comment line, without its newline: what an index wrote in it is
// escaped as requirements_comment escapes it.
std::string comment_line(std::string_view text) {
  std::string line = requirements_comment(text);
  line.pop_back();
  return line;
}

// `text` with comment lines after its first (the "# kwheel pin: ..." line).
std::string with_notes(const std::string& text, const std::vector<std::string>& notes) {
  std::string lines;
  for (const auto& n : notes) lines += n + "\n";
  const size_t eol = text.find('\n');
  return eol == std::string::npos ? lines + text : text.substr(0, eol + 1) + lines + text.substr(eol + 1);
}

// The header's word on Requires-Python: the newer versions it passed over,
// and why, or that it was not checked. Each note is one comment line.
std::vector<std::string> python_notes(const PinRequest& req, const PinResult& result) {
  if (requires_python_version(req.target).empty())
    return {comment_line("Requires-Python not checked: the target is described (--torch), not an interpreter; pin with --python PATH to check it")};
  const auto pinned = Version::try_parse(result.version);
  std::map<Version, std::string, std::greater<>> newer;  // public version -> the first reason
  for (const auto& c : result.candidates) {
    const auto v = Version::try_parse(c.file.version);
    if (!c.python_excluded || !v || !pinned) continue;
    const Version pub = Version::parse(v->public_str());
    if (Version::parse(pinned->public_str()) < pub) newer.try_emplace(pub, *c.problem);
  }
  if (newer.empty()) return {};
  constexpr size_t kNamed = 5;
  std::string line;
  size_t n = 0;
  for (const auto& [v, why] : newer)
    if (n++ < kNamed) line += (line.empty() ? "" : "; ") + result.project + " " + v.str() + " (" + why + ")";
  if (newer.size() > kNamed) line += "; and " + std::to_string(newer.size() - kNamed) + " more (see --json)";
  return {comment_line("passed over: " + line)};
}

// The chosen wheel's Requires-Dist: its dependencies, for pin_dependencies.
// Every file of the chosen version is one build, so the first tells.
void read_requirements(PinResult& result, HttpClient& http, MetadataReads& reads) {
  const IndexFile& f = result.files.front();
  const CandidateMetadata& metadata = metadata_of(f, http, reads);
  if (!metadata.text)
    throw Error(ErrorKind::input, "cannot read the METADATA of " + f.filename + " to find its dependencies: " + metadata.missing +
                                      "; or pass --no-deps to pin the kernels alone");
  for (const auto& [key, value] : parse_metadata_fields(*metadata.text))
    if (key == "Requires-Dist") result.requires_dist.push_back(value);
}

void pin_from_variant_index(const Listing& listing, const PinRequest& req, HttpClient& http, PinResult& result) {
  if (req.commit) throw Error(ErrorKind::usage, "pin --lock reads a kernel's own sub-indexes, not a variant index; point it at SITE/simple/ or a sub-index");
  const VariantMachine machine = variant_machine(req.cuda_driver, req.sm_arch);
  pin_variant_listing(listing.files, req, machine, [&](const IndexFile& f) { return fetch_listed(f, http); }, result);
  if (result.candidates.empty()) throw Error(ErrorKind::not_found, "no wheel of '" + result.project + "' at " + listing.where);
  if (result.files.empty()) {
    std::string reason;
    for (const auto& c : result.candidates)
      if (c.problem && reason.empty()) reason = c.file.filename + ": " + *c.problem;
    throw Error(ErrorKind::not_found, "no variant of " + result.project + " at " + listing.where + " fits " + target_description(req) + " on " +
                                          machine.describe() + " (e.g. " + reason + "); pass --cuda-driver X.Y --sm-arch X.Y for another machine");
  }
  write_requirements(req, result);
}

}  // namespace

PinResult pin(const PinRequest& req) {
  PinResult result;
  const bool is_url = req.source.find("://") != std::string::npos;
  std::optional<std::string> wanted = req.name ? std::optional(normalize_name(*req.name)) : std::nullopt;
  IndexConnection index(is_url ? index_root(req.source) : std::string(), req.connection, pin_http_options(), req.transport);

  Listing listing = is_url ? list_index(req, wanted, index, result) : list_directory(req, wanted, result);
  result.project = *wanted;
  refuse_unsound_files(listing.files, result.project, listing.where, result.candidates);
  MetadataReads reads;
  if (is_variant_listing(listing.files)) {
    pin_from_variant_index(listing, req, index.http(), result);
  } else {
    std::vector<Fit> fits = judge_candidates(listing.files, req, index.http(), result);
    if (result.candidates.empty()) throw Error(ErrorKind::not_found, "no wheel of '" + result.project + "' at " + listing.where);
    choose_fitting(fits, req, index.http(), result, reads, listing.where);
    write_requirements(req, result);
  }
  result.notes = python_notes(req, result);
  result.text = with_notes(result.text, result.notes);
  if (req.read_requirements) read_requirements(result, index.http(), reads);
  return result;
}

json to_json(const PinResult& r) {
  json files = json::array();
  for (const auto& f : r.files) files.push_back({{"filename", f.filename}, {"url", f.url}, {"sha256", f.sha256}});
  json candidates = json::array();
  for (const auto& c : r.candidates) {
    json j{{"filename", c.file.filename}, {"variant", variant_name(c.label)}, {"fits", !c.problem.has_value()}};
    if (c.problem) j["reason"] = *c.problem;
    candidates.push_back(std::move(j));
  }
  json j{{"ok", true},
         {"project", r.project},
         {"version", r.version},
         {"variant", variant_name(r.label)},
         {"variant_described", r.label.describe()},
         {"requirement", r.requirement},
         {"index_line", r.index_line},
         {"page_format", r.page_format},
         {"requirements", r.text},
         {"files", files},
         {"candidates", candidates}};
  // Where TLS trust and credentials came from, never what they are.
  if (r.page_format != "directory") j["connection"] = {{"ca_from", r.ca_from}, {"credentials_from", r.credentials_from}};
  if (!r.variant_label.empty()) j["wheel_variant"] = {{"label", r.variant_label}, {"machine", r.variant_machine}};
  return j;
}

namespace {

// The projects a source holds, normalized and sorted.
std::vector<std::string> source_projects(const PinRequest& req, IndexConnection& index) {
  std::set<std::string> names;
  if (req.source.find("://") == std::string::npos) {
    for (const auto& [e, w] : directory_wheels(req.source)) names.insert(normalize_name(w.name));
    if (names.empty()) throw Error(ErrorKind::not_found, "directory '" + req.source + "' holds no .whl file; build some with `kwheel build`");
    return {names.begin(), names.end()};
  }
  for (auto& n : index_projects(index.url(), index)) names.insert(std::move(n));
  if (names.empty()) throw Error(ErrorKind::not_found, "index " + index.url() + " lists no project");
  return {names.begin(), names.end()};
}

// Whether `project` of the source is a kernel, by one wheel's METADATA: a
// directory's own wheels, or the files its index page lists (the page read
// as pin reads it: capped, file:// links held to the site).
bool is_kernel_project(const PinRequest& base, const std::string& project, IndexConnection& index) {
  if (base.source.find("://") == std::string::npos) {
    std::vector<IndexFile> files;
    for (const auto& [e, w] : directory_wheels(base.source)) {
      if (normalize_name(w.name) != project) continue;
      IndexFile f;
      f.filename = e.path().filename().string();
      f.url = fs::absolute(e.path()).string();
      f.version = w.version;
      files.push_back(std::move(f));
    }
    return project_is_kernel(files, project, "directory '" + base.source + "'", index.http());
  }
  PinRequest req = base;
  req.name = project;
  std::optional<std::string> wanted = project;
  PinResult scratch;
  const Listing listing = list_index(req, wanted, index, scratch);
  return project_is_kernel(listing.files, project, listing.where, index.http());
}

// "# left out: 2 projects of the source that are not kernels (acme-utils, einops)".
std::string left_out_note(const std::vector<std::string>& left_out) {
  constexpr size_t kNamed = 10;
  std::vector<std::string> named(left_out.begin(), left_out.begin() + static_cast<std::ptrdiff_t>(std::min(left_out.size(), kNamed)));
  std::string list = join(named, ", ");
  if (left_out.size() > kNamed) list += ", and " + std::to_string(left_out.size() - kNamed) + " more";
  const std::string count = std::to_string(left_out.size()) + (left_out.size() == 1 ? " project" : " projects");
  return comment_line("left out: " + count + " of the source that " + (left_out.size() == 1 ? "is not a kernel (" : "are not kernels (") + list +
                      "): no kernel marker in METADATA (Keywords: " + kKernelKeyword + ")");
}

void add_unique(std::vector<std::string>& into, const std::vector<std::string>& notes) {
  for (const auto& n : notes)
    if (std::find(into.begin(), into.end(), n) == into.end()) into.push_back(n);
}

// The kernels among `projects`; the rest into `left_out`. None: the error
// that names them and --name.
std::vector<std::string> kernel_projects(const PinRequest& base, const std::vector<std::string>& projects, IndexConnection& index, std::vector<std::string>& left_out) {
  std::vector<std::string> kernels;
  for (const auto& project : projects) (is_kernel_project(base, project, index) ? kernels : left_out).push_back(project);
  if (kernels.empty())
    throw Error(ErrorKind::not_found, "no project of " + (base.source.find("://") == std::string::npos ? "directory '" + base.source + "'" : display_url(index.url())) + " is a kernel: the METADATA of " +
                                          join(left_out, ", ") + " carries no kernel marker (Keywords: " + kKernelKeyword +
                                          ", which `kwheel build` writes); pass --name to pin a project anyway");
  return kernels;
}

}  // namespace

std::vector<std::string> pin_source_projects(const PinRequest& req) {
  IndexConnection index(req.source.find("://") == std::string::npos ? std::string() : index_root(req.source), req.connection, pin_http_options(), req.transport);
  return source_projects(req, index);
}

bool is_pin_index_line(const std::string& line) {
  return line.starts_with("--index-url ") || line.starts_with("--extra-index-url ") || line.starts_with("# from directory ") || line.starts_with("# from a directory");
}

PinSetResult pin_all(const PinRequest& base) {
  PinSetResult result;
  IndexConnection index(base.source.find("://") == std::string::npos ? std::string() : index_root(base.source), base.connection, pin_http_options(), base.transport);
  const std::vector<std::string> projects = source_projects(base, index);
  const std::vector<std::string> kernels = kernel_projects(base, projects, index, result.left_out);
  std::string header, lines, index_line;
  std::vector<std::string> notes;
  for (const auto& project : kernels) {
    PinRequest req = base;
    req.name = project;
    try {
      result.kernels.push_back(pin(req));
    } catch (const Error& e) {
      if (projects.size() == 1) throw;
      throw Error(e.kind(), "project '" + project + "': " + e.what() + " (pass --name to pin the others one by one)", e.reason());
    }
    const PinResult& r = result.kernels.back();
    header += requirements_comment(r.project + ": " + r.label.describe() + sub_index_words(r.label));
    for (const auto& f : r.files) header += requirements_comment("  file: " + f.filename);
    add_unique(notes, r.notes);
    index_line = r.index_line;
    lines += r.requirement + "\n";
  }
  const std::vector<std::string> left_out = result.left_out.empty() ? std::vector<std::string>{} : std::vector{left_out_note(result.left_out)};
  if (result.kernels.size() == 1) {
    result.text = with_notes(result.kernels.front().text, left_out);
    return result;
  }
  add_unique(notes, left_out);
  result.text = requirements_comment("kwheel pin: " + std::to_string(result.kernels.size()) + " kernels for " + target_description(base)) + header;
  for (const auto& n : notes) result.text += n + "\n";
  result.text += index_line.empty() ? requirements_comment("from directory " + fs::absolute(base.source).string() + ": pip install --find-links DIR -r requirements.txt")
                                    : index_line + "\n";
  result.text += lines;
  check_requirements_text(result.text, index_options(index_line), "the requirements of " + std::to_string(result.kernels.size()) + " kernels");
  return result;
}

json to_json(const PinSetResult& r) {
  if (r.kernels.size() == 1) {
    json j = to_json(r.kernels.front());
    j["requirements"] = r.text;
    j["left_out"] = r.left_out;
    return j;
  }
  json kernels = json::array();
  for (const auto& k : r.kernels) kernels.push_back(to_json(k));
  return json{{"ok", true}, {"requirements", r.text}, {"kernels", kernels}, {"left_out", r.left_out}};
}

LockPinResult pin_lock(const PinRequest& base, const std::string& lock) {
  const bool is_url = base.source.find("://") != std::string::npos;
  LockPinResult result{lock, {}, {}};
  std::string index_line, lines, header;
  std::vector<std::string> notes;
  for (const auto& k : read_kernels_lock(lock)) {
    PinRequest req = base;
    req.repo_id = k.dependency.repo_id;
    req.commit = k.commit;
    if (is_url) req.name = k.dependency.repo_id.substr(k.dependency.repo_id.find('/') + 1);
    try {
      result.kernels.push_back(pin(req));
    } catch (const Error& e) {
      throw Error(e.kind(), "lock entry '" + k.dependency.repo_id + "' (commit " + k.commit.substr(0, 12) + "): " + e.what(), e.reason());
    }
    const PinResult& r = result.kernels.back();
    header += requirements_comment(k.dependency.repo_id + " @ " + k.commit.substr(0, 12) + ": " + r.label.describe());
    add_unique(notes, r.notes);
    index_line = r.index_line;
    lines += r.requirement + "\n";
  }
  for (const auto& n : notes) header += n + "\n";
  result.text = requirements_comment("kwheel pin --lock " + lock) + header;
  result.text += index_line.empty() ? requirements_comment("from a directory: pip install --find-links DIR --require-hashes -r requirements.txt") : index_line + "\n";
  result.text += lines;
  check_requirements_text(result.text, index_options(index_line), "the requirements of " + lock);
  return result;
}

json to_json(const LockPinResult& r) {
  json kernels = json::array();
  for (const auto& k : r.kernels) kernels.push_back(to_json(k));
  return json{{"ok", true}, {"lock", r.lock}, {"requirements", r.text}, {"kernels", kernels}};
}

}  // namespace kwheel
