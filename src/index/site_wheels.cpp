// Reading a wheel for the site, once: one pass over its bytes hashes it and
// feeds the archive; its objects are read from the archive in memory.
#include "kwheel/index/site_wheels.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <ctime>
#include <exception>
#include <fstream>
#include <mutex>
#include <thread>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/test_seam.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/base/work_pool.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/trust/wheel_signature.hpp"
#include "kwheel/validate/wheel_objects.hpp"
#include "kwheel/wheel/core_metadata.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel::site {
namespace fs = std::filesystem;

namespace {

// Wheels up to this size are read into memory once, hashed there and
// opened from there; larger ones (real CUDA builds) are hashed and opened
// from the file, so memory stays bounded by --jobs times this.
constexpr uint64_t kInMemoryWheelBytes = 32ull << 20;

// Why a chain that held is not a trusted signature: no bundle, or a signer
// kwheel's policy does not name (counted as unsigned, as build counts it).
std::string unsigned_reason(const SignatureVerdict& v) {
  if (!v.result) return std::string("it has no ") + kSignatureFile;
  return v.describe() + ", counted as unsigned (trust the signer with --trusted-signer)";
}

std::optional<FileIdentity> identity_from(int rc, const struct stat& st) {
  if (rc != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileIdentity{static_cast<uint64_t>(st.st_size), static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                      static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_dev)};
}

}  // namespace

std::optional<FileIdentity> identity_of(const fs::path& file) {
  struct stat st {};
  return identity_from(::stat(file.c_str(), &st), st);
}

std::optional<FileIdentity> identity_at(int dir, const char* name) {
  struct stat st {};
  return identity_from(::fstatat(dir, name, &st, 0), st);
}

std::optional<FileIdentity> DirectoryStat::identity(const std::string& file) {
  const size_t slash = file.rfind('/');
  if (slash == std::string::npos || slash == 0) return identity_of(file);
  const std::string_view dir(file.data(), slash);
  if (dir != dir_) {
    dir_.assign(dir);
    fd_ = UniqueFd(::open(dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  if (fd_.get() < 0) return identity_of(file);
  return identity_at(fd_.get(), file.c_str() + slash + 1);
}

std::string signature_policy(const SignatureOptions& options) {
  return sha256_hex(std::string("kwheel " KWHEEL_VERSION "\n") + options.signers.describe() + "\n" + options.trusted_root_sha256);
}

// The GPU code a wheel's objects carry, as `kwheel inspect` reads it. A
// wheel whose objects cannot be read is still indexed (installers do not
// read them either); its cell says so.
std::vector<std::string> gpu_code_of(const WheelArchive& wheel) {
  std::vector<ObjectGpuCode> objects;
  try {
    objects = wheel_gpu_code(wheel);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) throw;
    return {"unreadable"};
  }
  std::vector<std::string> out;
  for (const auto& t : all_cuda_targets(objects)) out.push_back(t.str());
  for (const auto& g : all_gfx_targets(objects)) out.push_back(g);
  return out;
}

// kwheel's "Hub revision" Project-URL; nothing for a wheel not built from the Hub.
void read_hub_revision(const std::string& metadata, Entry& e) {
  const MetadataFields fields = parse_metadata_fields(metadata);
  const auto rev = recorded_revision(fields);
  if (!rev) return;
  e.hub_repo = rev->first;
  e.hub_commit = rev->second;
  auto [lo, hi] = fields.equal_range("Project-URL");
  for (auto it = lo; it != hi; ++it)
    if (it->second.starts_with(std::string(kHubRevisionLabel) + ",")) e.hub_url = trim(it->second.substr(it->second.find(',') + 1));
}

// Who signed the wheel's metadata.json, checked as a build checks it; a
// wheel kwheel did not build says so. Every wheel of a site had its RECORD
// checked when it joined.
ShownSignature signature_of(const WheelArchive& wheel, const SignatureOptions& options) {
  try {
    const auto s = wheel_signature(wheel, options, std::time(nullptr), /*record_verified=*/true);
    if (!s) return {"no kernel metadata", SignatureStanding::none, ""};
    if (!s->error.empty()) return {s->summary(), SignatureStanding::invalid, s->error};
    if (s->verdict && s->verdict->signed_by_trusted()) return {s->summary(), SignatureStanding::trusted, ""};
    return {s->summary(), SignatureStanding::unsigned_, s->verdict ? unsigned_reason(*s->verdict) : s->summary()};
  } catch (const Error& e) {
    // The wheel is still indexed, as with its GPU code; its page shows the failure.
    return {"unreadable: " + std::string(e.what()), SignatureStanding::invalid, e.what()};
  }
}

Entry given_entry(const fs::path& w, const SiteOptions& o) {
  Entry e;
  const auto id = identity_of(w);
  if (!id) throw Error(ErrorKind::not_found, "'" + w.string() + "' is not a readable file");
  std::unique_ptr<WheelArchive> archive;
  if (id->size <= kInMemoryWheelBytes) {
    note_wheel_read(w);
    std::ifstream in(w, std::ios::binary);
    std::string bytes(id->size, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!in || in.peek() != std::char_traits<char>::eof())
      throw Error(ErrorKind::io, "cannot read '" + w.string() + "' (it changed while it was read?); run again");
    e.sha256 = sha256_hex(bytes);
    archive = std::make_unique<WheelArchive>(w, std::move(bytes));
  } else {
    e.sha256 = sha256_file_hex(w);
    archive = std::make_unique<WheelArchive>(w);
  }
  if (archive->filename().variant)
    throw Error(ErrorKind::input, "refusing to index '" + w.string() + "': it is a PEP 825 variant wheel, which pip cannot install from the site's "
                                  "indexes; give the plain build (kwheel index --variants makes its variant wheels)");
  if (auto problems = archive->verify_record(); !problems.empty())
    throw Error(ErrorKind::input, "refusing to index '" + w.string() + "': RECORD check failed: " + problems.front() + "; rebuild the wheel");
  e.filename = w.filename().string();
  e.project = normalize_name(archive->field("Name"));
  e.version = archive->field("Version");
  e.size = id->size;
  e.requires_python = archive->field("Requires-Python");
  e.metadata = archive->metadata_text();
  e.metadata_sha256 = sha256_hex(e.metadata);
  read_hub_revision(e.metadata, e);
  e.gpu_code = gpu_code_of(*archive);
  e.signature = signature_of(*archive, o.signatures);
  e.source = w.string();
  e.source_identity = id;
  e.is_new = true;
  return e;
}

void for_each_parallel(size_t n, unsigned jobs, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  const unsigned workers = static_cast<unsigned>(std::min<size_t>(resolve_workers(jobs), n));
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // Each worker claims the next index: no task, future or lock per item (a
  // site of 2,000 wheels checked as 2,000 queued tasks was 2,300 futex calls).
  // Indices are claimed in order, so every item before a failed one has run.
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex first_mutex;
  size_t first_at = n;
  std::exception_ptr first;
  auto work = [&] {
    for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      try {
        fn(i);
      } catch (...) {
        failed = true;
        const std::lock_guard hold(first_mutex);
        if (i < first_at) first_at = i, first = std::current_exception();
      }
    }
  };
  {
    std::vector<std::jthread> threads;
    for (unsigned w = 1; w < workers; ++w) threads.emplace_back(work);
    work();
  }  // joined
  if (first) std::rethrow_exception(first);
}

}  // namespace kwheel::site
