#include "kwheel/link/link.hpp"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/kernel/kernel_lock.hpp"
#include "kwheel/link/installed_kernels.hpp"
#include "kwheel/trust/verify_installed.hpp"

namespace kwheel {

namespace fs = std::filesystem;

namespace {

const char* status_name(LinkedKernel::Status s) {
  switch (s) {
    case LinkedKernel::Status::linked: return "linked";
    case LinkedKernel::Status::skipped: return "skipped";
    case LinkedKernel::Status::failed: return "failed";
  }
  return "failed";
}

struct Candidate {
  LinkedKernel kernel;
};

// One installed kernel: verified as `kwheel verify --python` does, then
// held to what kernels will read of it.
Candidate check_kernel(const InstalledKernel& k, const LinkOptions& o) {
  Candidate c;
  c.kernel.distribution = k.name + " " + k.version;
  c.kernel.origin = k.origin;
  if (!k.origin) {
    c.kernel.status = LinkedKernel::Status::skipped;
    c.kernel.why = k.why;
    return c;
  }
  auto fail = [&](std::string why, int code) {
    c.kernel.status = LinkedKernel::Status::failed;
    c.kernel.why = std::move(why);
    c.kernel.exit_code = code;
    return c;
  };
  ChainItem item;
  try {
    item = verify_installed_for(o.python, k.name, o.chain);
  } catch (const Error& e) {  // one kernel that cannot be read (uninstalled meanwhile, two .dist-info) is its own failure
    return fail(e.what(), e.exit_code());
  }
  c.kernel.package_dir = item.location;
  if (!item.ok()) return fail(std::string(check_name(*item.failed)) + ": " + item.why, chain_exit_code({item}));
  KernelOrigin& origin = *c.kernel.origin;
  if (origin.package.empty()) origin.package = item.package;
  if (origin.package != item.package)
    return fail(std::string(kHubKernelFile) + " names package '" + origin.package + "', but the distribution imports '" + item.package + "'",
                static_cast<int>(ErrorKind::input));
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(item.location) / "metadata.json", ec))
    return fail("its package has no metadata.json, which kernels reads before it imports a kernel; rebuild it from a kernel-builder build",
                static_cast<int>(ErrorKind::input));
  if (origin.revision.empty()) {
    origin.revision = stand_in_revision(origin.repo_id, c.kernel.distribution);
    c.kernel.stand_in_revision = true;
  }
  c.kernel.status = LinkedKernel::Status::linked;
  return c;
}

// Every locked kernel installed at its locked commit, or what is instead.
std::vector<LockMismatch> lock_mismatches(const fs::path& lock, const std::vector<Candidate>& candidates) {
  std::vector<LockMismatch> out;
  for (const auto& locked : read_kernels_lock(lock)) {
    std::vector<std::string> installed;
    bool found = false;
    for (const auto& c : candidates) {
      if (c.kernel.status != LinkedKernel::Status::linked || c.kernel.origin->repo_id != locked.dependency.repo_id) continue;
      installed.push_back(c.kernel.origin->revision + " (" + c.kernel.distribution + ")");
      found = found || c.kernel.origin->revision == locked.commit;
    }
    if (!found) out.push_back({locked.dependency.repo_id, locked.commit, installed.empty() ? std::string("nothing") : join(installed, ", ")});
  }
  return out;
}

bool same_dir(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::weakly_canonical(fs::absolute(a, ec), ec) == fs::weakly_canonical(fs::absolute(b, ec), ec);
}

}  // namespace

std::string export_line(const fs::path& cache) {
  const std::string p = cache.string();
  // Quoted only when the shell would split or expand it; ' as '\''.
  if (p.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+=:,@%") == std::string::npos)
    return "export KERNELS_CACHE=" + p;
  std::string q = "'";
  for (char ch : p) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return "export KERNELS_CACHE=" + q + "'";
}

std::string stand_in_revision(const std::string& repo_id, const std::string& distribution) {
  return sha256_hex("kwheel link stand-in revision\n" + repo_id + "\n" + distribution).substr(0, 40);
}

LinkReport link_kernels(const LinkOptions& o) {
  const InstalledKernels installed = find_installed_kernels(o.python);
  LinkReport report;
  report.python = installed.python.empty() ? o.python : installed.python;
  const fs::path fallback = default_kernels_cache();
  report.cache = fs::absolute(o.cache.value_or(fallback));
  report.default_cache = same_dir(report.cache, fallback);
  std::vector<Candidate> candidates;
  for (const auto& k : installed.kernels) candidates.push_back(check_kernel(k, o));
  if (o.lock) report.lock_mismatches = lock_mismatches(*o.lock, candidates);
  if (report.lock_mismatches.empty()) {
    std::vector<LinkEntry> entries;
    for (const auto& c : candidates)
      if (c.kernel.status == LinkedKernel::Status::linked) entries.push_back({*c.kernel.origin, c.kernel.package_dir, c.kernel.distribution});
    const CacheChange change = write_cache_links(report.cache, installed.prefix, entries);
    report.written = true;
    report.removed = change.removed;
    for (auto& c : candidates)
      for (const auto& r : change.refused)
        if (c.kernel.status == LinkedKernel::Status::linked && c.kernel.origin->repo_id == r.repo_id) {
          c.kernel.status = LinkedKernel::Status::failed;
          c.kernel.why = r.why;
          c.kernel.exit_code = static_cast<int>(ErrorKind::input);
        }
  }
  for (auto& c : candidates) report.kernels.push_back(std::move(c.kernel));
  return report;
}

int LinkReport::exit_code() const {
  if (!lock_mismatches.empty()) return static_cast<int>(ErrorKind::not_found);
  for (const auto& k : kernels)
    if (k.status == LinkedKernel::Status::failed) return k.exit_code;
  return 0;
}

nlohmann::json LinkReport::to_json() const {
  nlohmann::json ks = nlohmann::json::array();
  for (const auto& k : kernels) {
    nlohmann::json j{{"distribution", k.distribution}, {"status", status_name(k.status)}};
    if (k.origin) {
      j["repo_id"] = k.origin->repo_id;
      j["version"] = k.origin->version;
      j["revision"] = k.origin->revision;
      j["variant"] = k.origin->variant;
      j["package"] = k.origin->package;
      j["stand_in_revision"] = k.stand_in_revision;
    }
    if (!k.package_dir.empty()) j["package_dir"] = k.package_dir.string();
    if (!k.why.empty()) j["reason"] = k.why;
    ks.push_back(std::move(j));
  }
  nlohmann::json lock = nlohmann::json::array();
  for (const auto& m : lock_mismatches) lock.push_back({{"repo_id", m.repo_id}, {"locked", m.locked}, {"installed", m.installed}});
  nlohmann::json j{{"ok", exit_code() == 0}, {"exit_code", exit_code()}, {"python", python}, {"cache", cache.string()},
                   {"default_cache", default_cache}, {"written", written}, {"kernels", ks}, {"removed", removed}, {"lock_mismatches", lock}};
  if (!default_cache) j["export"] = export_line(cache);
  return j;
}

}  // namespace kwheel
