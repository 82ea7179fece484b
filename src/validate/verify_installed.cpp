// `kwheel verify` on an installed distribution: its RECORD against the
// files in site-packages, then the package's metadata.json, signature and
// digest as a wheel carries them (verify_chain.hpp).
#include <nlohmann/json.hpp>

#include "kwheel/base/embedded_python.hpp"
#include "kwheel/base/process.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/kernel/kernel_layout.hpp"
#include "kwheel/kernel/kernel_metadata.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/record.hpp"
#include "kwheel/validate/chain_evidence.hpp"
#include "kwheel/validate/verify_installed.hpp"
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


// RECORD's rows, less the bytecode pip compiled at install (listed without
// a hash, in __pycache__ beside a listed source): the package's sources are
// what the digest checks, and pip's own bytecode is the documented limit
// (docs/security.md). Bytecode RECORD does not list is still looked at.
std::vector<std::string> installed_paths(const std::vector<RecordEntry>& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows)
    if (!(is_bytecode(row.path) && row.hash.empty())) out.push_back(row.path);
  return out;
}

std::optional<std::string> installed_file(const fs::path& file, std::uint64_t limit, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return std::nullopt;
  return read_small_file(file, limit, what);
}

}  // namespace

ChainItem verify_installed(const fs::path& site, const std::string& name, const ChainOptions& o) {
  const fs::path dist_info = find_dist_info(site, name);
  return checked_item(name, dist_info.string(), [&](ChainItem& item) {
    const auto fields = parse_metadata_fields(read_small_file(dist_info / "METADATA", kMaxInstalledMetadataBytes, "the installed METADATA"));
    if (auto n = fields.find("Name"), v = fields.find("Version"); n != fields.end() && v != fields.end()) item.name = n->second + " " + v->second;
    const auto rows = parse_record(read_small_file(dist_info / "RECORD", kMaxInstalledRecordBytes, "the installed RECORD"), "RECORD");
    if (auto why = installed_record_fault(site, rows); !why.empty()) {
      item.failed = ChainCheck::record;
      item.why = why;
      return;
    }
    item.passed.push_back(ChainCheck::record);
    Evidence ev;
    const std::vector<std::string> paths = installed_paths(rows);
    ev.package = package_with_metadata(paths);
    if (auto why = outside_the_signed_package(paths, ev.package, dist_info.filename().string()); !why.empty()) {
      item.failed = ChainCheck::digest;
      item.why = why;
      return;
    }
    if (ev.package.empty()) return check_evidence(item, ev, o);
    const fs::path pkg = site / ev.package;
    item.location = pkg.string();
    ev.where = "installed package '" + pkg.string() + "'";
    ev.metadata = installed_file(pkg / "metadata.json", kMaxKernelMetadataBytes, ev.where + ": metadata.json");
    ev.bundle = installed_file(pkg / kSignatureFile, kMaxSignatureBytes, ev.where + ": " + kSignatureFile);
    std::map<std::string, std::string> recorded;
    for (const auto& row : rows) recorded[row.path] = row.hash;
    // Every file in the package, not only RECORD's rows: a file added after
    // the install is in no RECORD, and the digest must catch it.
    for (const auto& f : regular_files_below(pkg)) {
      const std::string shown = ev.package + "/" + f.path;
      auto hash = recorded.find(shown);
      // Bytecode the installer did not write is in no RECORD: planted, it would run instead of the source.
      if (is_bytecode(f.path) && hash == recorded.end()) {
        item.failed = ChainCheck::digest;
        item.why = "'" + shown + "' is bytecode that RECORD does not list; Python would run it instead of the verified source";
        return;
      }
      ev.files.emplace(f.path, evidence_file_on_disk(shown, f.source, hash == recorded.end() ? "" : hash->second));
    }
    check_evidence(item, ev, o);
  });
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
