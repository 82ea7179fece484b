#include "kwheel/index/simple_index.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/base/test_seam.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/base/unique_fd.hpp"
#include "kwheel/base/url_userinfo.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/index/matrix_page.hpp"
#include "kwheel/index/simple_api.hpp"
#include "kwheel/index/site_directory.hpp"
#include "kwheel/index/site_identities.hpp"
#include "kwheel/index/site_manifest.hpp"
#include "kwheel/index/site_wheels.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/validate/compat.hpp"

namespace kwheel {
namespace fs = std::filesystem;

using site::Entry;
using site::write_text;

namespace {

// Far above the home page of a site of 20,000 wheels (7.8 MB): a larger one
// is not kwheel's, and its sections are rendered instead of copied.
constexpr uint64_t kMaxHomePageBytes = 256ull << 20;

bool variant_accepts(const LocalLabel& variant, const LocalLabel& wheel) {
  if (wheel.universal()) return true;
  const std::string name = wheel.index_name();
  if (name.empty()) return false;
  if (name == variant.index_name()) return true;
  if (!wheel.noarch || variant.noarch) return false;
  // A pure-Python torch-<backend> build joins every arch sub-index of its backend.
  const std::string& b = variant.backend;
  if (wheel.backend == "cuda") return b.starts_with("cu") && b != "cuda";
  if (wheel.backend == "cpu") return b == "cpu";
  return b.starts_with(wheel.backend);
}

// ROOT/files: the new wheels, placed (reflink, hard link or copy:
// place_file) beside the METADATA staged as they were read; the site's own
// files stay where they are (commit_in_place never touches SITE/files). A
// new file's identity is what the next run checks it by: the rename into
// SITE keeps it.
std::string write_files(const fs::path& root, const fs::path& previous, std::map<std::string, Entry>& entries, Placement how) {
  // mkdtemp makes it 0700; a site is for serving: the usual umask'd mode.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(root.c_str(), 0777 & ~mask);
  fs::create_directories(root / "files");
  std::string placed;
  for (auto& [name, e] : entries) {
    if (!e.is_new) continue;
    if (!previous.empty()) site::check_unrecorded(previous / "files" / name, e);
    const fs::path dest = root / "files" / name;
    const fs::path metadata = fs::path(dest) += ".metadata";
    placed = site::placed_name(site::place_file(e.source, dest, how));
    if (!e.metadata_staged) write_text(metadata, e.metadata);
    e.identity = site::identity_of(dest);
    e.metadata_identity = site::identity_of(metadata);
  }
  return placed;
}

using SiteWheel = std::map<std::string, Entry>::value_type;

// One project page's files, made when the page is written: a simple/ tree
// of 20,000 wheels is not a copy of every one at once.
std::vector<IndexFile> index_files(const std::vector<const SiteWheel*>& wheels, const std::string& prefix) {
  std::vector<IndexFile> files;
  files.reserve(wheels.size());
  for (const SiteWheel* w : wheels) {
    const Entry& e = w->second;
    IndexFile& f = files.emplace_back();
    f.filename = w->first;
    f.url = prefix + "files/" + encode_component(w->first);
    f.sha256 = e.sha256;
    f.requires_python = e.requires_python;
    f.metadata_sha256 = e.metadata_sha256;
    f.size = e.size;
    f.version = e.version;
  }
  return files;
}

// One simple/ tree of the entries `accept` takes, linking to the site's
// files/ `depth_to_site` levels up (or under `base`); returns its projects.
std::vector<std::string> write_index(const std::map<std::string, Entry>& entries, const std::string& base, const site::PageSink& sink,
                                     const fs::path& simple_dir, int depth_to_site, const std::function<bool(const Entry&)>& accept) {
  std::map<std::string, std::vector<const SiteWheel*>> projects;
  for (const auto& wheel : entries)
    if (accept(wheel.second)) projects[wheel.second.project].push_back(&wheel);
  std::string prefix = base.empty() ? "" : base + "/";
  if (base.empty())
    for (int i = 0; i < depth_to_site; ++i) prefix += "../";
  std::vector<std::string> names;
  for (const auto& [project, wheels] : projects) {
    names.push_back(project);
    if (sink.stable.count(project) && sink.keep(simple_dir / project / "index.html") && sink.keep(simple_dir / project / "index.json")) continue;
    const std::vector<IndexFile> files = index_files(wheels, prefix);
    sink.write(simple_dir / project / "index.html", render_project_html(project, files));
    sink.write(simple_dir / project / "index.json", render_project_json(project, files));
  }
  sink.write(simple_dir / "index.html", render_root_html(names));
  sink.write(simple_dir / "index.json", render_root_json(names));
  return names;
}

// ROOT/simple and one sub-index per torch/compute label present; returns
// the sub-indexes by name.
std::map<std::string, LocalLabel> write_indexes(const site::PageSink& sink, const std::map<std::string, Entry>& entries, const SiteOptions& o,
                                                SiteReport& report, const fs::path& reuse_variants = {}) {
  std::map<std::string, LocalLabel> variants;
  // Each version's label read once, not once per sub-index; by version, not
  // by wheel: a site of 20,000 wheels has a few dozen.
  std::map<std::string, LocalLabel, std::less<>> labels;
  for (const auto& [_, e] : entries) {
    auto it = labels.find(e.version);
    if (it == labels.end()) it = labels.emplace(e.version, read_label(e.version)).first;
    if (!it->second.index_name().empty()) variants.emplace(it->second.index_name(), it->second);
  }
  std::string base = o.base_url;
  while (base.ends_with("/")) base.pop_back();
  report.projects = write_index(entries, base, sink, "simple", 2, [](const Entry&) { return true; });
  // Which sub-indexes take each version, decided once per version (a few
  // hundred), not once per wheel and sub-index (variant_accepts builds
  // strings: 16,000 calls were 10 ms of a 60 ms run that adds 8 wheels).
  std::map<std::string_view, std::vector<char>> taken;
  for (const auto& [version, label] : labels) {
    std::vector<char>& by = taken[version];
    for (const auto& [_, v] : variants) by.push_back(variant_accepts(v, label));
  }
  size_t k = 0;
  for (const auto& [vname, vlabel] : variants) {
    write_index(entries, base, sink, fs::path(vname) / "simple", 3, [&, k](const Entry& e) { return taken.find(e.version)->second[k] != 0; });
    report.variants.push_back(vname);
    ++k;
  }
  if (report.variant_index_on) {
    std::vector<VariantSource> sources;
    // A new wheel is in this run's files/ so far; the site's own stay in SITE/files/.
    for (const auto& [name, e] : entries)
      sources.push_back({name, (e.is_new ? sink.root / "files" / name : fs::path(e.source)), e.project, e.source, e.variant.get()});
    report.variant_index = write_variant_indexes(sink, sources, base, reuse_variants);
  }
  return variants;
}

// The rows of a kernel's matrix whose builds are in a variant index, with
// that index's URL.
std::map<std::string, std::string> variant_rows(const VariantIndexReport& v, const std::string& project, const std::string& index_root) {
  std::map<std::string, std::string> rows;
  for (const auto& w : v.wheels)
    if (normalize_name(parse_wheel_filename(w.filename, VariantLabels::accept).name) == project)
      rows[matrix_place(parse_wheel_filename(w.source).version).row] = index_root + w.index + "/simple/";
  return rows;
}

// One kernel's cells, made when its matrix is rendered: the home page's
// kernels one at a time, not a copy of every wheel at once.
std::vector<MatrixWheel> matrix_wheels(const std::vector<const SiteWheel*>& wheels) {
  std::vector<MatrixWheel> out;
  out.reserve(wheels.size());
  for (const SiteWheel* w : wheels) {
    const Entry& e = w->second;
    out.push_back(MatrixWheel{e.project, w->first, e.version, e.gpu_code, e.size, e.signature.summary, e.signature.standing, e.hub_repo, e.hub_commit,
                              e.hub_url});
  }
  return out;
}

// SITE/index.html (every kernel) and SITE/kernels/<project>.html: the
// build matrices, linking the same files/ the simple pages do.
void write_matrix_pages(const site::PageSink& sink, const std::map<std::string, Entry>& entries, const std::map<std::string, LocalLabel>& variants,
                        const SiteOptions& o, SiteReport& report) {
  std::map<std::string, std::vector<const SiteWheel*>> by_project;
  for (const auto& wheel : entries) by_project[wheel.second.project].push_back(&wheel);
  const std::vector<std::pair<std::string, std::vector<const SiteWheel*>>> kernels(by_project.begin(), by_project.end());
  by_project.clear();
  const auto kernel_at = [&](size_t i) { return MatrixKernel{kernels[i].first, matrix_wheels(kernels[i].second)}; };
  std::string base = o.base_url;
  while (base.ends_with("/")) base.pop_back();
  MatrixPageSpec spec;
  spec.title = report.title;
  spec.files_base = base.empty() ? "files/" : base + "/files/";
  spec.link_kernel_pages = true;
  spec.deps_index = report.deps_index;
  for (const auto& [vname, vlabel] : variants) spec.sub_indexes.push_back({vname, vlabel.describe()});
  for (const auto& v : report.variant_index.indexes)
    spec.sub_indexes.push_back({v, "every build for " + v.substr(v.rfind('/') + 1) + " as PEP 825 variants: uv --preview-features wheel-variants picks the one for the GPU; pip cannot read it"});
  // The sections of the kernels whose pages are kept, as the previous home
  // page has them: the same wheels and settings render the same bytes.
  std::string previous_home;
  if (!sink.stable.empty()) {
    try {
      previous_home = read_small_file(sink.previous / "index.html", kMaxHomePageBytes, "the site's home page");
    } catch (const Error&) {
      // None, unreadable or oversized: every section is rendered.
    }
  }
  const auto sections = matrix_page_sections(previous_home);
  const KeptSection kept = [&](size_t i) -> std::optional<std::string_view> {
    if (!sink.stable.count(kernels[i].first)) return std::nullopt;
    const auto it = sections.find(html_escape(kernels[i].first));
    return it == sections.end() ? std::nullopt : std::optional(it->second);
  };
  // Streamed: rendered whole, the home page of a large site is megabytes.
  sink.write_streamed("index.html", [&](const auto& emit) { stream_matrix_page(spec, kernels.size(), kernel_at, emit, kept); });
  report.pages.push_back("index.html");
  spec.files_base = base.empty() ? "../files/" : base + "/files/";
  spec.to_root = "../";
  spec.link_kernel_pages = false;
  spec.install_lines = true;
  spec.index_root = base.empty() ? spec.to_root : base + "/";
  spec.sub_indexes.clear();
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string& project = kernels[i].first;
    report.pages.push_back("kernels/" + project + ".html");
    if (sink.stable.count(project) && sink.keep(fs::path("kernels") / (project + ".html"))) continue;
    spec.kernels = {kernel_at(i)};
    spec.variant_indexes = variant_rows(report.variant_index, project, spec.index_root);
    sink.write(fs::path("kernels") / (project + ".html"), render_matrix_page(spec));
  }
}

}  // namespace

void check_page_url(const std::string& option, const std::string& url) {
  if (const size_t at = unprintable_at(url); at != std::string::npos)
    throw Error(ErrorKind::usage, option + " holds a control character or a byte that is not UTF-8 (byte " +
                                      std::to_string(static_cast<unsigned char>(url[at])) + " at offset " + std::to_string(at) +
                                      "), which no install line can be pasted with; percent-encode it (e.g. %0A)");
  if (const size_t at = url.find_first_of(" \t"); at != std::string::npos)
    throw Error(ErrorKind::usage, option + " holds a space at offset " + std::to_string(at) + ", which no URL holds; percent-encode it as %20");
  if (holds_userinfo(url))
    throw Error(ErrorKind::usage, option + " must not carry user:password@: every page of the site would show it to whoever reads the site; give the URL "
                                      "without it, and pip the login through ~/.netrc or keyring (where `kwheel pin` finds it too)");
}

namespace {

// A site written before kwheel refused it may keep a --deps-index-url with
// a login in kwheel-index.json: it is not carried into new pages. Given a
// new --deps-index-url, that one replaces it and every page is rewritten.
void check_kept_deps_index(const fs::path& site, const site::KeptSettings& kept, const SiteOptions& o) {
  if (!o.deps_index.empty() || !kept.deps_index || !holds_userinfo(*kept.deps_index)) return;
  register_url_credentials(*kept.deps_index);
  throw Error(ErrorKind::input, "'" + (site / "kwheel-index.json").string() +
                                    "' keeps a --deps-index-url with user:password@ from an earlier run, and the site's pages show it; run again with "
                                    "--deps-index-url URL without it (it replaces the kept one and every page is rewritten), give pip the login through "
                                    "~/.netrc or keyring, and change that password");
}

}  // namespace

namespace {

// Whether this run would write the pages the site already has: nothing new,
// nothing re-read, and every setting the pages show as it was. The variant
// index is always derived again (its wheels are not recorded), so a site
// with one is always rewritten.
// What the report says of a site left as it was: the pages
// write_indexes and write_matrix_pages would name, without rendering them.
void describe_unchanged(const std::map<std::string, Entry>& entries, SiteReport& report) {
  std::set<std::string> projects, variants;
  for (const auto& [_, e] : entries) {
    projects.insert(e.project);
    if (std::string v = read_label(e.version).index_name(); !v.empty()) variants.insert(std::move(v));
  }
  report.projects.assign(projects.begin(), projects.end());
  report.variants.assign(variants.begin(), variants.end());
  report.pages.push_back("index.html");
  for (const auto& p : projects) report.pages.push_back("kernels/" + p + ".html");
}

bool same_settings(const site::KeptSettings& before, const site::KeptSettings& now) {
  return before.title == now.title && before.deps_index == now.deps_index && before.variants == now.variants && before.base_url == now.base_url &&
         before.signature_policy == now.signature_policy && before.kwheel_version == now.kwheel_version;
}

bool nothing_changed(const SiteReport& report, const std::map<std::string, Entry>& entries, const site::KeptSettings& before,
                     const site::KeptSettings& now) {
  if (!report.added.empty() || report.variant_index_on) return false;
  for (const auto& [_, e] : entries)
    if (e.refreshed) return false;
  return same_settings(before, now);
}

// The projects whose pages the previous site has as this run would write
// them: none joined, none re-read, every setting the same.
std::set<std::string> stable_projects(const std::map<std::string, Entry>& entries, const site::KeptSettings& before, const site::KeptSettings& now) {
  std::set<std::string> stable, changed;
  if (!same_settings(before, now)) return stable;
  for (const auto& [_, e] : entries) (e.is_new || e.refreshed ? changed : stable).insert(e.project);
  for (const auto& p : changed) stable.erase(p);
  return stable;
}

}  // namespace

SiteReport build_site(const std::vector<std::string>& wheels, const SiteOptions& o) {
  if (o.out.empty()) throw Error(ErrorKind::usage, "--out SITE is required");
  // Before anything is read or written: the URLs go into pasted shell lines.
  check_page_url("--base-url", o.base_url);
  check_page_url("--deps-index-url", o.deps_index);
  const fs::path site = site::site_directory(o.out);
  site::check_site_name(site, o);
  const UniqueFd lock = site::lock_site(site, o.wait, o.progress);

  std::error_code ec;
  const bool exists = fs::exists(site, ec);
  if (o.title) check_page_title(*o.title);
  site::KeptSettings kept;
  std::map<std::string, Entry> entries = exists ? site::read_site(site, kept, o) : std::map<std::string, Entry>{};
  check_kept_deps_index(site, kept, o);
  const site::KeptSettings before = kept;
  if (o.title) kept.title = o.title;
  if (!o.deps_index.empty()) kept.deps_index = o.deps_index;
  if (o.variants) kept.variants = o.variants;
  kept.base_url = o.base_url;
  kept.signature_policy = site::signature_policy(o.signatures);
  kept.kwheel_version = KWHEEL_VERSION;
  SiteReport report;
  report.site = site;
  report.title = kept.title.value_or(kDefaultPageTitle);
  report.deps_index = kept.deps_index.value_or(kDefaultDepsIndex);
  report.variant_index_on = kept.variants.value_or(false);
  // What this run writes, beside the site, made when the first new wheel is
  // read: its METADATA goes there at once (memory stays one wheel's per
  // thread). For a new site it is all of it; for an existing one only what
  // changed, moved in by commit_in_place. Named for its owner, removed if
  // interrupted, and swept by the next run if this one is killed outright
  // (temp_dir.hpp).
  std::optional<TempDir> scratch;
  std::mutex scratch_mutex;
  auto scratch_root = [&] {
    std::lock_guard<std::mutex> hold(scratch_mutex);
    if (!scratch) {
      scratch.emplace(TempDir::beside(site, "new"));
      fs::create_directories(scratch->path() / "files");
    }
    return scratch->path();
  };
  site::add_wheels(wheels, o, site, entries, report, [&](Entry& e) {
    write_text(scratch_root() / "files" / (e.filename + ".metadata"), e.metadata);
    e.metadata = std::string();
    e.metadata_staged = true;
  });
  site::report_signatures(entries, report);

  if (exists && nothing_changed(report, entries, before, kept)) {
    // The pages are rendered for the report only: the site stays as it is.
    report.rewritten = false;
    describe_unchanged(entries, report);
    if (std::any_of(entries.begin(), entries.end(), [](const auto& kv) { return kv.second.rehashed; })) site::write_identities(site, entries);
    return report;
  }
  const site::PageSink sink{scratch_root(), exists ? site : fs::path(), exists ? stable_projects(entries, before, kept) : std::set<std::string>{}};
  report.placed = write_files(sink.root, sink.previous, entries, o.placement);
  // The previous site's variant wheels are this kwheel's only when it wrote them.
  const fs::path reuse_variants = exists && before.kwheel_version == kept.kwheel_version ? site : fs::path();
  const auto variants = write_indexes(sink, entries, o, report, reuse_variants);
  write_matrix_pages(sink, entries, variants, o, report);
  if (report.variant_index_on) site::record_variants(report.variant_index, entries);
  site::write_manifest(sink.root, entries, kept);
  interrupt_point("index-before-commit", true);
  // The settings of the last run: every page it produced is produced again.
  if (exists) site::commit_in_place(*scratch, site, *sink.produced, /*prune=*/!same_settings(before, kept));
  else site::move_in_new_site(*scratch, site);
  site::write_identities(site, entries);
  return report;
}

}  // namespace kwheel
