// `kwheel verify` on an installed distribution: its RECORD against the
// files in site-packages, the package `import` loads for its name (found
// on disk, not in RECORD) against RECORD, then that package's
// metadata.json, signature and digest as a wheel carries them, and the
// signed name and version against the distribution's (verify_chain.hpp).
#include <nlohmann/json.hpp>

#include "kwheel/base/embedded_python.hpp"
#include "kwheel/base/process.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/kernel/kernel_layout.hpp"
#include "kwheel/kernel/kernel_metadata.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/record.hpp"
#include "kwheel/trust/chain_evidence.hpp"
#include "kwheel/trust/import_package.hpp"
#include "kwheel/trust/verify_installed.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxInstalledRecordBytes = 64 << 20;
constexpr std::uint64_t kMaxInstalledMetadataBytes = 16 << 20;

// The .dist-info of `name` in `site`: "<escaped name>-<version>.dist-info",
// the name compared as PEP 503 normalises it.
fs::path find_dist_info(const fs::path& site, const std::string& name) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(site)) {
    const std::string dir = e.path().filename().string();
    if (!e.is_directory() || !dir.ends_with(".dist-info")) continue;
    if (normalize_name(dir.substr(0, dir.find('-'))) == normalize_name(name)) found.push_back(e.path());
  }
  if (found.empty())
    throw Error(ErrorKind::not_found, "'" + name + "' is not installed in '" + site.string() + "' (no " + name + "-*.dist-info there)");
  if (found.size() > 1)
    throw Error(ErrorKind::input, "'" + site.string() + "' holds " + std::to_string(found.size()) + " .dist-info directories for '" + name +
                                      "'; an installer left a stale one, reinstall it");
  return found.front();
}

// The first RECORD row the installed files contradict, or "". Rows without
// a hash (RECORD itself, some bytecode) have nothing to check.
std::string installed_record_fault(const fs::path& site, const std::vector<RecordEntry>& rows) {
  for (const auto& row : rows) {
    if (row.hash.empty()) continue;
    const auto eq = row.hash.find('=');
    const std::string algorithm = row.hash.substr(0, eq);
    std::optional<DigestAlgorithm> a = algorithm == "sha256" ? std::optional(DigestAlgorithm::sha256)
                                       : algorithm == "sha512" ? std::optional(DigestAlgorithm::sha512) : std::nullopt;
    if (!a) return "RECORD hashes '" + row.path + "' with '" + algorithm + "', which verify does not check";
    const fs::path file = (site / row.path).lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(file, ec))) return "'" + row.path + "' is listed in RECORD but missing";
    if (row.hash.substr(eq + 1) != urlsafe_b64_nopad(file_digest(file, *a))) return "'" + row.path + "' does not match its RECORD hash";
    if (row.size && *row.size != fs::file_size(file)) return "'" + row.path + "' is not the size RECORD says";
  }
  return "";
}


// Records the failure; false, for the checks that stop at it.
bool fail(ChainItem& item, ChainCheck check, std::string why) {
  item.failed = check;
  item.why = std::move(why);
  return false;
}

// RECORD's rows, less the bytecode pip compiled into the package at
// install (listed without a hash): the package's sources are what the
// digest checks, and pip's own bytecode is the documented limit
// (docs/security.md). Bytecode RECORD does not list is still looked at, and
// a hashless bytecode row outside the package is not pip's and stays.
std::vector<std::string> installed_paths(const std::vector<RecordEntry>& rows, const std::string& package) {
  std::vector<std::string> out;
  for (const auto& row : rows) {
    const std::string path = fs::path(row.path).lexically_normal().generic_string();
    if (!(is_bytecode(path) && row.hash.empty() && path.starts_with(package + "/"))) out.push_back(path);
  }
  return out;
}

std::optional<std::string> installed_file(const fs::path& file, std::uint64_t limit, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return std::nullopt;
  return read_small_file(file, limit, what);
}

// RECORD's rows by path as the file system resolves it ("relu/./x" is
// "relu/x"), with their hashes: installed_record_fault verified each one.
std::map<std::string, std::string> recorded_hashes(const std::vector<RecordEntry>& rows) {
  std::map<std::string, std::string> out;
  for (const auto& row : rows) {
    auto& hash = out[fs::path(row.path).lexically_normal().generic_string()];
    if (hash.empty()) hash = row.hash;
  }
  return out;
}

// The first file of the package directory that RECORD does not list, or
// "": pip lists every file it installs, so such a file was put there after
// the install, or its row was deleted to hide it.
std::string unrecorded_fault(const std::vector<RepoFile>& files, const std::string& package, const std::map<std::string, std::string>& recorded) {
  for (const auto& f : files) {
    const std::string shown = package + "/" + f.path;
    if (recorded.count(shown)) continue;
    // Bytecode the installer did not write is in no RECORD: planted, it would run instead of the source.
    if (is_bytecode(f.path)) return "'" + shown + "' is bytecode that RECORD does not list; Python would run it instead of the verified source";
    return "'" + shown + "' is in the package directory but RECORD does not list it; pip lists every file it installs";
  }
  return "";
}

// The distribution as pip and importlib.metadata see it: METADATA's Name
// and Version, which must be the .dist-info's own ("<name>-<version>"),
// since pip finds it by the one and reports the other.
Distribution installed_distribution(const fs::path& dist_info) {
  const auto fields = parse_metadata_fields(read_small_file(dist_info / "METADATA", kMaxInstalledMetadataBytes, "the installed METADATA"));
  const auto n = fields.find("Name"), v = fields.find("Version");
  if (n == fields.end() || v == fields.end()) throw Error(ErrorKind::input, "'" + (dist_info / "METADATA").string() + "' has no Name or no Version");
  return {n->second, v->second};
}

// Why the .dist-info and its METADATA name two distributions, with the
// check at fault; nullopt when they agree.
std::optional<std::pair<ChainCheck, std::string>> dist_info_fault(const fs::path& dist_info, const Distribution& d) {
  const std::string dir = dist_info.stem().string();  // "relu-1.2+torch.cpu"
  const auto dash = dir.find('-');
  const std::string where = "'" + dist_info.filename().string() + "'";
  if (normalize_name(dir.substr(0, dash)) != normalize_name(d.name))
    return std::pair(ChainCheck::name, where + " is not the distribution its METADATA names ('" + d.name + "')");
  const auto dir_version = Version::try_parse(dash == std::string::npos ? "" : dir.substr(dash + 1));
  const auto version = Version::try_parse(d.version);
  if (!dir_version || !version || !(*dir_version == *version))
    return std::pair(ChainCheck::version, where + " is not the version its METADATA says ('" + d.version + "')");
  return std::nullopt;
}

// The package `import` loads for the distribution (import_package.hpp),
// found in site-packages by its name. Only a distribution renamed with
// --name, whose name imports nothing, is taken to be the one package
// directory RECORD names: it can then fail or be unsigned, never be
// vouched for (chain_evidence's name check).
std::string installed_package(const fs::path& site, const Distribution& d, const TopLevelImports& tops, const std::vector<RecordEntry>& rows) {
  if (auto module = import_name_of(d.name, tops)) return *module;
  std::vector<std::string> listed;
  for (const auto& row : rows) listed.push_back(fs::path(row.path).lexically_normal().generic_string());
  if (auto only = only_package_dir(imports_of_members(listed)); only && tops.forms.count(*only)) return *only;
  throw Error(ErrorKind::input, "'" + d.name + "' names no package in '" + site.string() + "': neither '" + wheel_name_component(d.name) +
                                    "/' nor a directory named after the end of its name (kwheel installs [prefix]<kernel> as <kernel>/)");
}

// What one installed distribution holds, as verify reads it.
struct Installed {
  fs::path site;
  fs::path dist_info;
  std::vector<RecordEntry> rows;
  std::map<std::string, std::string> recorded;  // recorded_hashes(rows)
  std::vector<RepoFile> files;                   // every file in the package directory
};

// RECORD's rows against the files, then the package the name imports and
// its files against RECORD. False when the item failed here.
bool check_record_and_package(ChainItem& item, Evidence& ev, Installed& in) {
  in.rows = parse_record(read_small_file(in.dist_info / "RECORD", kMaxInstalledRecordBytes, "the installed RECORD"), "RECORD");
  if (auto why = installed_record_fault(in.site, in.rows); !why.empty()) return fail(item, ChainCheck::record, why);
  const TopLevelImports tops = imports_in(in.site);
  ev.package = item.package = installed_package(in.site, *ev.distribution, tops, in.rows);
  const fs::path pkg = in.site / ev.package;
  item.location = pkg.string();
  if (auto why = import_forms_fault(tops, ev.package); !why.empty()) return fail(item, ChainCheck::package, why);
  in.files = regular_files_below(pkg);
  in.recorded = recorded_hashes(in.rows);
  if (auto why = unrecorded_fault(in.files, ev.package, in.recorded); !why.empty()) return fail(item, ChainCheck::record, why);
  item.passed.push_back(ChainCheck::record);
  return true;
}

// The package's evidence, read from disk: signed or not is what the
// package carries, whatever RECORD lists. False when the item failed here.
bool read_package_evidence(ChainItem& item, Evidence& ev, const Installed& in) {
  const fs::path pkg = in.site / ev.package;
  ev.where = "installed package '" + pkg.string() + "'";
  ev.metadata = installed_file(pkg / "metadata.json", kMaxKernelMetadataBytes, ev.where + ": metadata.json");
  ev.bundle = installed_file(pkg / kSignatureFile, kMaxSignatureBytes, ev.where + ": " + kSignatureFile);
  // RECORD listing a metadata.json elsewhere adds this check, never removes one.
  const auto paths = installed_paths(in.rows, ev.package);
  if (ev.metadata || ev.bundle || !package_with_metadata(paths).empty())
    if (auto why = outside_the_signed_package(paths, ev.package, in.dist_info.filename().string()); !why.empty())
      return fail(item, ChainCheck::digest, why);
  item.passed.push_back(ChainCheck::package);
  // Every file in the package, not only RECORD's rows: the digest must catch any the install did not bring.
  for (const auto& f : in.files) {
    const std::string shown = ev.package + "/" + f.path;
    ev.files.emplace(f.path, evidence_file_on_disk(shown, f.source, in.recorded.at(shown)));
  }
  return true;
}

}  // namespace

ChainItem verify_installed(const fs::path& site, const std::string& name, const ChainOptions& o) {
  Installed in{site, find_dist_info(site, name), {}, {}, {}};
  return checked_item(name, in.dist_info.string(), [&](ChainItem& item) {
    Evidence ev;
    ev.distribution = installed_distribution(in.dist_info);
    item.name = ev.distribution->name + " " + ev.distribution->version;
    if (auto fault = dist_info_fault(in.dist_info, *ev.distribution)) {
      fail(item, fault->first, fault->second);
      return;
    }
    if (check_record_and_package(item, ev, in) && read_package_evidence(item, ev, in)) check_evidence(item, ev, o);
  });
}

namespace {

// What `python -I` answers for `module` (src/python/find_module.py).
nlohmann::json ask_import_spec(const std::string& python, const std::string& module) {
  const ProcessResult r = run_process({python, "-I", "-c", std::string(embedded_python("find_module")), module}, isolated_python(std::chrono::seconds(60)));
  const auto j = nlohmann::json::parse(last_line(r.out), nullptr, false);
  if (r.exit_code != 0 || !j.is_object() || !j.value("found", false)) return nlohmann::json::object();
  return j;
}

bool same_file(const std::string& a, const fs::path& b) {
  std::error_code ec;
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

// Why `import <package>` in `python` does not load `dir/__init__.py`, or "".
std::string import_elsewhere(const std::string& python, const std::string& package, const fs::path& dir) {
  const auto spec = ask_import_spec(python, package);
  const auto origin = spec.value("origin", nlohmann::json());
  const auto locations = spec.value("locations", nlohmann::json::array());
  const bool here = origin.is_string() && same_file(origin.get<std::string>(), dir / "__init__.py") && locations.size() == 1 &&
                    locations[0].is_string() && same_file(locations[0].get<std::string>(), dir);
  if (here) return "";
  const std::string where = origin.is_string() ? "'" + origin.get<std::string>() + "'" : std::string("nothing it can name");
  return "`import " + package + "` in '" + python + "' loads " + where + ", not the package verified ('" + dir.string() +
         "'): an earlier sys.path entry or an import hook shadows it";
}

}  // namespace

ChainItem verify_installed_for(const std::string& python, const std::string& name, const ChainOptions& o) {
  ChainItem item = verify_installed(installed_location(python, name), name, o);
  // A broken chain is already the verdict; an unsigned one is outranked by this.
  if (item.package.empty() || (item.failed && item.failed != ChainCheck::signer)) return item;
  if (auto why = import_elsewhere(python, item.package, item.location); !why.empty()) {
    std::erase(item.passed, ChainCheck::package);
    item.failed = ChainCheck::package;
    item.why = why;
  }
  return item;
}

fs::path installed_location(const std::string& python, const std::string& name) {
  ProcessResult r;
  try {
    // -I: the interpreter's own site-packages, not the working directory's
    // modules or PYTHON* variables.
    r = run_process({python, "-I", "-c", std::string(embedded_python("find_distribution")), name}, isolated_python(std::chrono::seconds(60)));
  } catch (const Error&) {
    throw Error(ErrorKind::usage, "cannot run Python interpreter '" + python + "'; pass --python PATH to the one the package is installed in");
  }
  const auto j = nlohmann::json::parse(last_line(r.out), nullptr, false);
  if (r.exit_code != 0 || !j.is_object() || !j.contains("found") || !j["found"].is_boolean())
    throw Error(ErrorKind::usage, "'" + python + "' did not run as a Python 3 interpreter: " + last_lines(r.err, 2));
  if (!j["found"].get<bool>() || !j.contains("location") || !j["location"].is_string())
    throw Error(ErrorKind::not_found, "'" + name + "' is not installed for '" + python + "'");
  return j["location"].get<std::string>();
}

}  // namespace kwheel
