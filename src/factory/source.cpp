#include "kwheel/factory/source.hpp"

#include <filesystem>

#include "kwheel/base/error.hpp"
#include "kwheel/base/progress.hpp"
#include "kwheel/hub/url.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

// A kernel's versions are integers N, each on a branch vN; "v2" is the
// branch's name, and kernels' own --version (type=int) refuses it too.
// Refused before the Hub is asked, with the number it most likely meant.
void check_version_spec(const std::string& spec) {
  if (spec.size() < 2 || (spec[0] != 'v' && spec[0] != 'V') || spec.find_first_not_of("0123456789", 1) != std::string::npos) return;
  throw Error(ErrorKind::usage, "--version '" + spec + "': a kernel version is the number N of its branch vN; did you mean --version " + spec.substr(1) +
                                    "? (or --revision " + spec + " for the branch by name)");
}

}  // namespace

nlohmann::json ResolvedSource::describe() const {
  if (!is_hub) return {{"type", "directory"}, {"path", location}, {"name", name}};
  nlohmann::json j{{"type", "hub"},
                   {"repo", location},
                   {"repo_type", client->config().repo_type},
                   {"endpoint", display_url(client->config().endpoint)},
                   {"requested", resolution->requested},
                   {"commit", resolution->commit},
                   {"offline", client->config().offline}};
  if (!resolution->ref.empty()) j["ref"] = resolution->ref;
  j["trust"] = trust->to_json();
  if (resolution->version) j["version"] = *resolution->version;
  if (resolution->kernel_version) j["kernel_version"] = *resolution->kernel_version;
  j["latest"] = resolution->latest;
  j["repo_type_fallback"] = !client->repo_type_note().empty();
  j["token"] = client->config().token.empty() ? "none" : "from " + client->config().token_source;
  // Where TLS trust came from (connection.hpp's order), never a secret.
  j["ca_from"] = client->config().tls.ca_from;
  if (!client->config().tls.client_cert.empty()) j["client_cert_from"] = client->config().tls.client_cert_from;
  return j;
}

ResolvedSource resolve_source(const SourceRequest& a, const Feedback& out) {
  check_trust_policy(a.trust);
  ResolvedSource src;
  src.location = a.source;
  std::error_code ec;
  if (fs::is_directory(a.source, ec)) {
    if (a.revision || a.version_spec || a.hub.endpoint || a.hub.offline)
      throw Error(ErrorKind::usage, "'" + a.source + "' is a directory; --revision, --endpoint and --offline apply to Hub repos only");
    src.name = fs::absolute(a.source).lexically_normal().filename().string();
    if (src.name.empty()) src.name = fs::absolute(a.source).lexically_normal().parent_path().filename().string();
    return src;
  }
  if (!looks_like_repo_id(a.source)) {
    if (a.source.find('/') != std::string::npos && (a.source.starts_with(".") || a.source.starts_with("/")))
      throw Error(ErrorKind::not_found, "directory '" + a.source + "' does not exist");
    check_repo_id(a.source);
  }
  if (a.version_spec) check_version_spec(*a.version_spec);
  src.is_hub = true;
  src.name = a.source.substr(a.source.find('/') + 1);
  HubConfig config = resolve_hub_config(a.hub, [&](const std::string& w) { out.warn(w); });
  src.client = std::make_unique<HubClient>(config, a.source, a.jobs);
  src.trust = check_publisher_trust(*src.client, a.trust, [&](const std::string& w) { out.warn(w); });
  src.resolution = src.client->resolve(a.revision, a.version_spec);
  if (auto note = src.client->repo_type_note(); !note.empty()) out.warn(note);
  out.info("resolved " + a.source + " " + src.resolution->requested + " -> commit " + src.resolution->commit +
           (src.resolution->version ? " (version " + *src.resolution->version + ")" : ""));
  if (!config.offline) src.tree = src.client->list_tree(src.resolution->commit);
  return src;
}

std::vector<RepoFile> fetch_source(ResolvedSource& src, const SourceRequest& a, const Feedback& out) {
  if (!src.is_hub) return list_local_repo(a.source);
  if (src.client->config().offline) return src.client->cached_files(src.resolution->commit);
  Progress progress(out.progress, "downloading");
  FetchProgress fp;
  fp.on_plan = [&](uint64_t files, uint64_t bytes) { progress.plan(files, bytes); };
  fp.download.on_bytes = [&](uint64_t n) { progress.add_bytes(n); };
  fp.download.on_file_done = [&](const DownloadJob&) { progress.file_done(); };
  auto files = src.client->fetch(src.resolution->commit, src.tree, fp);
  progress.finish();
  return files;
}

StreamedSource::StreamedSource(ResolvedSource& src, const SourceRequest& a, const Feedback& out) {
  if (!src.is_hub || src.client->config().offline) {
    files_ = fetch_source(src, a, out);
    return;
  }
  std::promise<void> listed;
  auto listed_done = listed.get_future();
  downloader_ = std::jthread([this, &src, &out, listed = std::move(listed)]() mutable {
    bool told = false;
    try {
      Progress progress(out.progress, "downloading");
      FetchProgress fp;
      fp.on_plan = [&](uint64_t files, uint64_t bytes) { progress.plan(files, bytes); };
      fp.on_listed = [&](const std::vector<RepoFile>& files, const std::vector<fs::path>& missing) {
        files_ = files;
        gate_.set_pending(missing);
        told = true;
        listed.set_value();
      };
      fp.download.on_bytes = [&](uint64_t n) { progress.add_bytes(n); };
      fp.download.on_file_done = [&](const DownloadJob& job) {
        gate_.mark_ready(job.dest);
        progress.file_done();
      };
      src.client->fetch(src.resolution->commit, src.tree, fp);
      progress.finish();
      gate_.open_all();
    } catch (...) {
      error_ = std::current_exception();
      gate_.fail(error_);
      if (!told) listed.set_exception(error_);
    }
  });
  listed_done.get();
}

StreamedSource::~StreamedSource() = default;  // jthread joins

std::function<void(const VariantInput&)> StreamedSource::awaiter() {
  if (!downloader_.joinable()) return {};
  return [this](const VariantInput& v) {
    std::vector<fs::path> blobs;
    for (const auto& f : v.files) blobs.push_back(f.source);
    gate_.wait(blobs);
  };
}

void StreamedSource::finish() {
  if (downloader_.joinable()) downloader_.join();
  if (error_) std::rethrow_exception(error_);
}

}  // namespace kwheel
