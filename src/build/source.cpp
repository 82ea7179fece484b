#include "source.hpp"

#include <filesystem>

#include "kwheel/base/error.hpp"
#include "kwheel/base/progress.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

void add_hub_flags(CLI::App* sub, SourceArgs& a) {
  sub->add_option("--revision", a.revision, "Hub branch, tag or commit (default: the highest version branch vN)");
  sub->add_option("--endpoint", a.hub.endpoint, "Hub endpoint (default: $HF_ENDPOINT or https://huggingface.co)");
  sub->add_option("--token", a.hub.token, "Hub token (default: $HF_TOKEN, then the token file under $HF_HOME)");
  sub->add_flag("--offline", a.hub.offline, "Use the HF cache only (also HF_HUB_OFFLINE=1)");
  sub->add_option("--cache-dir", a.hub.cache_dir, "HF cache (default: $HF_HUB_CACHE or ~/.cache/huggingface/hub)");
  sub->add_option("--repo-type", a.hub.repo_type,
                  "Hub repo type: kernel (default; a repo found only as a model repo is used as one) or model; forces the type");
  sub->add_option("--stall-timeout", a.hub.stall_timeout,
                  "Seconds a transfer may move under 1 KiB/s (a stall, or a drip) before it is dropped and retried (default 60; $KWHEEL_STALL_TIMEOUT)");
  sub->add_option("--ca-bundle", a.hub.ca_bundle,
                  "PEM file of CAs to trust for the Hub's TLS (default: $KWHEEL_CA_BUNDLE, $REQUESTS_CA_BUNDLE, system CAs)");
}

nlohmann::json ResolvedSource::describe() const {
  if (!is_hub) return {{"type", "directory"}, {"path", location}, {"name", name}};
  nlohmann::json j{{"type", "hub"},
                   {"repo", location},
                   {"repo_type", client->config().repo_type},
                   {"endpoint", client->config().endpoint},
                   {"requested", resolution->requested},
                   {"commit", resolution->commit},
                   {"offline", client->config().offline}};
  if (!resolution->ref.empty()) j["ref"] = resolution->ref;
  if (resolution->version) j["version"] = *resolution->version;
  if (resolution->kernel_version) j["kernel_version"] = *resolution->kernel_version;
  j["latest"] = resolution->latest;
  j["repo_type_fallback"] = !client->repo_type_note().empty();
  j["token"] = client->config().token.empty() ? "none" : "from " + client->config().token_source;
  return j;
}

ResolvedSource resolve_source(const SourceArgs& a, const Output& out) {
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
  src.is_hub = true;
  src.name = a.source.substr(a.source.find('/') + 1);
  HubConfig config = resolve_hub_config(a.hub, [&](const std::string& w) { out.warn(w); });
  src.client = std::make_unique<HubClient>(config, a.source, a.jobs);
  src.resolution = src.client->resolve(a.revision, a.version_spec);
  if (auto note = src.client->repo_type_note(); !note.empty()) out.warn(note);
  out.info("resolved " + a.source + " " + src.resolution->requested + " -> commit " + src.resolution->commit +
           (src.resolution->version ? " (version " + *src.resolution->version + ")" : ""));
  if (!config.offline) src.tree = src.client->list_tree(src.resolution->commit);
  return src;
}

std::vector<RepoFile> fetch_source(ResolvedSource& src, const SourceArgs& a, const Output& out) {
  if (!src.is_hub) return list_local_repo(a.source);
  if (src.client->config().offline) return src.client->cached_files(src.resolution->commit);
  Progress progress(out.progress(), "downloading");
  FetchProgress fp;
  fp.on_plan = [&](uint64_t files, uint64_t bytes) { progress.plan(files, bytes); };
  fp.download.on_bytes = [&](uint64_t n) { progress.add_bytes(n); };
  fp.download.on_file_done = [&](const DownloadJob&) { progress.file_done(); };
  auto files = src.client->fetch(src.resolution->commit, src.tree, fp);
  progress.finish();
  return files;
}

StreamedSource::StreamedSource(ResolvedSource& src, const SourceArgs& a, const Output& out) {
  if (!src.is_hub || src.client->config().offline) {
    files_ = fetch_source(src, a, out);
    return;
  }
  std::promise<void> listed;
  auto listed_done = listed.get_future();
  downloader_ = std::jthread([this, &src, &out, listed = std::move(listed)]() mutable {
    bool told = false;
    try {
      Progress progress(out.progress(), "downloading");
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

}  // namespace kwheel::cli
