#include "kwheel/trust/verify_chain.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kwheel/base/enum_name.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/hub/repo_file.hpp"
#include "kwheel/kernel/kernel_layout.hpp"
#include "kwheel/packaging/record.hpp"
#include "kwheel/trust/chain_evidence.hpp"
#include "kwheel/trust/import_package.hpp"
#include "kwheel/trust/verify_installed.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxRecordBytes = 64 << 20;

ChainItem verify_variant(const VariantInput& v, const fs::path& dir, const ChainOptions& o) {
  return checked_item(v.name, dir.string(), [&](ChainItem& item) {
    Evidence ev;
    ev.where = "variant '" + v.name + "'";
    for (const auto& f : v.files) {
      if (f.path == "metadata.json") ev.metadata = read_kernel_metadata_text(f.source, ev.where);
      else if (f.path == kSignatureFile) ev.bundle = read_small_file(f.source, kMaxSignatureBytes, ev.where + ": " + kSignatureFile);
      ev.files.emplace(f.path, evidence_file_on_disk(f.path, f.source));
    }
    check_evidence(item, ev, o);
  });
}

std::map<std::string, std::string> record_hashes(const std::vector<RecordEntry>& rows) {
  std::map<std::string, std::string> out;
  for (const auto& r : rows) out[r.path] = r.hash;
  return out;
}

bool has_member(const std::vector<std::string>& members, const std::string& name) {
  return std::find(members.begin(), members.end(), name) != members.end();
}

// The package pip installs for the wheel's name (import_package.hpp), and
// what it carries: a wheel that holds metadata.json or its signature is
// confined to that package and the .dist-info. False when the item failed here.
bool wheel_package(const WheelArchive& w, const std::vector<std::string>& members, Evidence& ev, ChainItem& item) {
  const TopLevelImports tops = imports_of_members(members);
  auto module = import_name_of(ev.distribution->name, tops);
  if (!module) module = only_package_dir(tops);
  if (!module)
    throw Error(ErrorKind::input, "the wheel installs no package named after '" + ev.distribution->name +
                                      "' (kwheel packs [prefix]<kernel> as <kernel>/), nor only one package");
  ev.package = item.package = *module;
  auto fail = [&](ChainCheck check, std::string why) {
    item.failed = check;
    item.why = std::move(why);
    return false;
  };
  if (auto why = import_forms_fault(tops, ev.package); !why.empty()) return fail(ChainCheck::package, why);
  const std::string prefix = ev.package + "/";
  if (has_member(members, prefix + "metadata.json")) ev.metadata = w.read(prefix + "metadata.json", kMaxKernelMetadataBytes);
  if (has_member(members, prefix + kSignatureFile)) ev.bundle = w.read(prefix + kSignatureFile, kMaxSignatureBytes);
  // Stricter, never looser, for a metadata.json elsewhere in the wheel: a wheel carrying one is confined too.
  if (ev.metadata || ev.bundle || !package_with_metadata(members).empty())
    if (auto why = outside_the_signed_package(members, ev.package, w.dist_info()); !why.empty()) return fail(ChainCheck::digest, why);
  item.passed.push_back(ChainCheck::package);
  return true;
}

}  // namespace

const char* check_name(ChainCheck check) {
  using C = ChainCheck;
  static constexpr EnumName<C> names[] = {
      {C::input, "input"},   {C::record, "record"}, {C::package, "package"}, {C::signature, "signature"},
      {C::digest, "digest"}, {C::name, "name"},     {C::version, "version"}, {C::signer, "signer"}};
  return enum_name(check, names).data();
}

nlohmann::json ChainItem::to_json() const {
  nlohmann::json j{{"name", name}, {"location", location}, {"ok", ok()}, {"passed", nlohmann::json::array()}};
  for (auto c : passed) j["passed"].push_back(check_name(c));
  j["failed"] = failed ? nlohmann::json(check_name(*failed)) : nlohmann::json(nullptr);
  if (!package.empty()) j["package"] = package;
  if (failed) j["error"] = why;
  if (signature) j["signature"] = signature->to_json();
  return j;
}

std::string ChainItem::describe() const {
  std::string line = std::string(ok() ? "OK    " : "FAIL  ") + name + " (" + location + ")";
  if (failed) return line + ": " + check_name(*failed) + ": " + why;
  std::string checks;
  for (auto c : passed)
    if (c != ChainCheck::signature) checks += (checks.empty() ? "" : ", ") + std::string(c == ChainCheck::record ? "RECORD" : check_name(c));
  line += ": " + (checks.empty() ? std::string("no digest") : checks);
  if (signature) line += "; " + signature->describe();
  else line += "; no metadata.json";
  return line;
}

ChainItem verify_variant_dir(const fs::path& dir, const ChainOptions& o) {
  // "." or "build/v/" name no variant; the directory they stand for does.
  const fs::path whole = fs::absolute(dir).lexically_normal();
  const std::string name = (whole.filename().empty() ? whole.parent_path() : whole).filename().string();
  return checked_item(name, dir.string(), [&](ChainItem& item) { item = verify_variant({name, regular_files_below(dir)}, dir, o); });
}

std::vector<ChainItem> verify_checkout(const fs::path& dir, const ChainOptions& o) {
  std::vector<ChainItem> out;
  for (const auto& v : group_variants(list_local_repo(dir))) out.push_back(verify_variant(v, dir / "build" / v.name, o));
  if (out.empty()) throw Error(ErrorKind::not_found, "'" + dir.string() + "/build' holds no variant");
  return out;
}

namespace {

// The checks of one wheel; `w` holds METADATA's Name and Version to the
// filename pip resolves by.
void check_wheel(const WheelArchive& w, const ChainOptions& o, ChainItem& item) {
  const fs::path& wheel = w.path();
  item.name = w.field("Name") + " " + w.field("Version");
  if (auto problems = o.record_verified ? std::vector<std::string>{} : w.verify_record(); !problems.empty()) {
    item.failed = ChainCheck::record;
    item.why = problems.front() + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : "");
    return;
  }
  item.passed.push_back(ChainCheck::record);
  const auto members = w.members();
  Evidence ev;
  ev.where = "wheel '" + wheel.filename().string() + "'";
  ev.distribution = Distribution{w.field("Name"), w.field("Version")};
  if (!wheel_package(w, members, ev, item)) return;
  const auto hashes = record_hashes(parse_record(w.read(w.dist_info() + "/RECORD", kMaxRecordBytes), wheel.filename().string()));
  const std::string prefix = ev.package + "/";
  for (const auto& m : members) {
    if (!m.starts_with(prefix) || m.ends_with("/")) continue;
    // sha512 digests need the bytes again; RECORD's sha256 already vouches for them otherwise.
    auto rehash = [&w, m](DigestAlgorithm a) {
      const TempDir tmp("verify");
      w.extract(m, tmp.path() / "member");
      return file_digest(tmp.path() / "member", a);
    };
    const auto row = hashes.find(m);
    ev.files.emplace(m.substr(prefix.size()), EvidenceFile{m, row == hashes.end() ? "" : row->second, rehash});
  }
  check_evidence(item, ev, o);
}

}  // namespace

ChainItem verify_wheel(const fs::path& wheel, const ChainOptions& o) {
  return checked_item(wheel.filename().string(), wheel.string(), [&](ChainItem& item) {
    const WheelArchive w(wheel);
    check_wheel(w, o, item);
  });
}

ChainItem verify_wheel(const WheelArchive& wheel, const ChainOptions& o) {
  return checked_item(wheel.path().filename().string(), wheel.path().string(), [&](ChainItem& item) { check_wheel(wheel, o, item); });
}

int chain_exit_code(const std::vector<ChainItem>& items) {
  auto any = [&](std::initializer_list<ChainCheck> checks) {
    return std::any_of(items.begin(), items.end(), [&](const ChainItem& i) {
      return i.failed && std::find(checks.begin(), checks.end(), *i.failed) != checks.end();
    });
  };
  if (any({ChainCheck::record, ChainCheck::package, ChainCheck::signature, ChainCheck::digest, ChainCheck::name, ChainCheck::version}))
    return static_cast<int>(ErrorKind::validation);
  if (any({ChainCheck::input})) return static_cast<int>(ErrorKind::input);
  if (any({ChainCheck::signer})) return static_cast<int>(ErrorKind::policy);
  return 0;
}

std::vector<ChainItem> verify_target(const fs::path& target, const std::optional<std::string>& name, const ChainOptions& o) {
  std::error_code ec;
  if (name) {
    if (!fs::is_directory(target, ec)) throw Error(ErrorKind::not_found, "'" + target.string() + "' is not a directory (a site-packages directory, with NAME)");
    return {verify_installed(target, *name, o)};
  }
  if (fs::is_regular_file(target, ec)) {
    if (target.extension() != ".whl") throw Error(ErrorKind::input, "'" + target.string() + "' is not a wheel (a .whl file)");
    return {verify_wheel(target, o)};
  }
  if (!fs::is_directory(target, ec)) throw Error(ErrorKind::not_found, "'" + target.string() + "' does not exist");
  if (fs::exists(target / "metadata.json", ec)) return {verify_variant_dir(target, o)};
  if (fs::is_directory(target / "build", ec)) return verify_checkout(target, o);
  std::vector<fs::path> wheels;
  for (const auto& e : fs::directory_iterator(target))
    if (e.is_regular_file() && e.path().extension() == ".whl" && !e.path().filename().string().starts_with(".")) wheels.push_back(e.path());
  if (wheels.empty())
    throw Error(ErrorKind::not_found, "'" + target.string() + "' is not a variant directory (no metadata.json), a repo checkout (no build/) "
                                      "or a directory of wheels (no .whl); for an installed package pass its site-packages and NAME, or --python PY NAME");
  std::sort(wheels.begin(), wheels.end());
  std::vector<ChainItem> out;
  for (const auto& w : wheels) out.push_back(verify_wheel(w, o));
  return out;
}

}  // namespace kwheel
