#include "kwheel/hub/hub.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "kwheel/base/error.hpp"
#include "kwheel/base/safe_path.hpp"
#include "kwheel/hub/hub_json.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 9 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A list for a message: "a, b", or "none".
std::string listed(const std::vector<std::string>& items) { return items.empty() ? "none" : join(items, ", "); }

// The version a tag name stands for: "v0.1.1" -> 0.1.1.
std::optional<Version> tag_version(const std::string& name) {
  if (name.size() < 2 || name[0] != 'v') return std::nullopt;
  return Version::try_parse(name.substr(1));
}

// Follows a paginated listing: bounded page count, no loops, no other
// host. Visited pages are remembered by hash, so a server handing out long
// cursors cannot grow the set without bound either.
class Pagination {
 public:
  Pagination(const std::string& what, std::string origin, int max_pages) : what_(what), origin_(std::move(origin)), max_pages_(max_pages) {}
  void visit(const std::string& url) {
    if (++pages_ > max_pages_)
      throw Error(ErrorKind::network, what_ + ": the listing runs past " + std::to_string(max_pages_) + " pages; the server is misconfigured");
    if (!seen_.insert(std::hash<std::string>{}(url)).second)
      throw Error(ErrorKind::network, what_ + ": the listing's pagination loops; the server is misconfigured");
  }
  int count() const { return pages_; }
  // The next page's URL from a Link header, or nullopt at the end.
  std::optional<std::string> next(const std::string& url, const std::string& link) const {
    auto target = link_next(link);
    if (!target) return std::nullopt;
    if (target->size() > kMaxNextLinkBytes)
      throw Error(ErrorKind::network, what_ + ": the next page's link is over " + std::to_string(kMaxNextLinkBytes) + " bytes; the server is misconfigured");
    std::string resolved = resolve_url(url, *target);
    if (url_origin(resolved) != origin_)
      throw Error(ErrorKind::network, what_ + ": pagination points to another host (" + display_url(resolved) + "); refusing it");
    return resolved;
  }

 private:
  std::string what_, origin_;
  int max_pages_;
  int pages_ = 0;
  std::set<size_t> seen_;
};

}  // namespace

std::optional<uint64_t> version_branch(const std::string& name) {
  if (name.size() < 2 || name[0] != 'v' || !all_digits(name.substr(1))) return std::nullopt;
  return std::stoull(name.substr(1));
}

HubClient::HubClient(HubConfig config, std::string repo_id, unsigned jobs, std::shared_ptr<Transport> transport)
    : config_(std::move(config)),
      repo_id_(std::move(repo_id)),
      jobs_(std::max(1u, jobs)),
      cache_(config_.cache_dir, config_.repo_type, repo_id_),
      http_([&] {
        check_repo_id(repo_id_);
        register_url_credentials(config_.endpoint);
        HttpOptions o;
        o.auth_origin = url_origin(config_.endpoint);
        o.token = config_.token;
        o.user_agent = std::string("kwheel/") + KWHEEL_VERSION + "; file_type/kernel";
        o.stall_timeout = config_.stall_timeout;
        apply_tls(config_.tls, o);
        return o;
      }(), std::move(transport)) {}

std::string HubClient::repo_url() const {
  return config_.endpoint + "/" + (config_.repo_type == "kernel" ? "kernels/" : "") + repo_id_;
}

std::string HubClient::tree_url(const std::string& commit) const {
  // Always the public Hub's page, never the endpoint's: a mirror, a proxy
  // under a path prefix or a test server must give the same wheel bytes for
  // the same commit, and its URL (or credentials) has no place in them.
  return std::string(kPublicHub) + "/" + (config_.repo_type == "kernel" ? "kernels/" : "") + repo_id_ + "/tree/" + commit;
}

std::string HubClient::api_base() const {
  return config_.endpoint + "/api/" + config_.repo_type + "s/" + repo_id_;
}

std::string HubClient::error_message(const HttpResponse& r) const {
  std::string message = r.header("x-error-message");
  if (message.empty()) {  // huggingface_hub falls back to the JSON body's "error"
    std::optional<json> body;
    try {
      body = parse_hub_json(r.body, display_url(r.url));
    } catch (const Error&) {
      // An error page too big or deep for its message: report the status.
    }
    if (body && body->is_object() && body->contains("error") && (*body)["error"].is_string()) message = (*body)["error"];
  }
  return config_.token.redact(message);
}

[[noreturn]] void HubClient::throw_for(const HttpResponse& r, const std::string& what) {
  const std::string code = r.header("x-error-code");
  const std::string message = error_message(r);
  const std::string repo = "repo '" + repo_id_ + "' at " + display_url(config_.endpoint);
  // Not "repo not found": the token itself was refused (huggingface_hub
  // makes the same exception to its 401 -> RepositoryNotFoundError rule).
  if (r.status == 401 && code.empty() && message == "Invalid credentials in Authorization header")
    throw Error(ErrorKind::auth, "the Hub at " + display_url(config_.endpoint) + " rejected the token" +
                                     (config_.token_source.empty() ? "" : " (from " + config_.token_source + ")") + " while " + what +
                                     ": " + message + "; check or renew it, or unset it for public repos");
  if (code == "GatedRepo")
    throw Error(ErrorKind::auth, repo + " is gated: request access on " + repo_url() + " and pass a token of an account that was granted it (--token or HF_TOKEN)");
  if (code == "RepoNotFound" || (r.status == 401 && code.empty())) {
    std::string hint = config_.token.empty() ? "check the name, or pass --token / set HF_TOKEN if it is private"
                                             : "check the name, and that the token (from " + config_.token_source + ") can read it";
    throw Error(ErrorKind::not_found, repo + " was not found or is not accessible" + (config_.repo_type_forced ? "" : " as a kernel repo or a model repo") + ": " + hint,
                Reason::repo_not_found);
  }
  if (r.status == 401 || r.status == 403)
    throw Error(ErrorKind::auth, what + ": access denied (HTTP " + std::to_string(r.status) + (message.empty() ? "" : ": " + message) + "); pass a token with read access (--token or HF_TOKEN)");
  if (code == "RevisionNotFound") throw Error(ErrorKind::not_found, what + ": revision not found in " + repo, Reason::revision_not_found);
  if (code == "EntryNotFound" || r.status == 404)
    throw Error(ErrorKind::not_found, what + ": not found (HTTP 404" + (message.empty() ? "" : ": " + message) + ")", Reason::entry_not_found);
  throw Error(ErrorKind::network, what + ": HTTP " + std::to_string(r.status) + (message.empty() ? "" : ": " + message) + " from " + display_url(r.url));
}

json HubClient::get_json(const std::string& url, const std::string& what) {
  // A body cut short can still arrive "complete" (a proxy closing early
  // with a wrong length); treat unparsable JSON like any transient fault.
  std::string problem;
  for (unsigned attempt = 0; attempt < http_.options().max_attempts; ++attempt) {
    HttpResponse r = http_.get(url);
    if (r.status != 200) throw_for(r, what);
    if (auto j = parse_hub_json(r.body, display_url(url))) return std::move(*j);
    problem = "the response is not valid JSON (" + std::to_string(r.body.size()) + " bytes)";
  }
  throw Error(ErrorKind::network, what + ": " + problem + " from " + display_url(url) + "; is --endpoint a Hugging Face Hub?");
}

HubClient::PublisherAnswer HubClient::publisher_overview(const std::string& org) {
  const std::string url = config_.endpoint + "/api/organizations/" + encode_component(org) + "/overview";
  const std::string request = "GET " + display_url(url);
  const std::string checking = "checking whether publisher '" + org + "' of repo '" + repo_id_ + "' is trusted";
  HttpResponse r;
  try {
    r = http_.get(url);
  } catch (const Error& e) {
    // No answer at all (connection refused, TLS, retries spent): the
    // network's fault, and the fix is there, never in trusting the repo.
    if (e.kind() != ErrorKind::network) throw;
    // The request loop's line already names the request, its last status or
    // fault, and the fix (the endpoint, --ca-bundle for TLS).
    throw Error(ErrorKind::network, "cannot reach the Hub at " + display_url(config_.endpoint) + " while " + checking + ": " + e.what());
  }
  const std::string answered = request + " answered HTTP " + std::to_string(r.status);
  if (r.status == 200) {
    const auto overview = parse_hub_json(r.body, display_url(url));
    if (!overview)
      throw Error(ErrorKind::network, answered + " but no JSON (" + std::to_string(r.body.size()) + " bytes) while " + checking +
                                          "; is --endpoint / HF_ENDPOINT a Hugging Face Hub?");
    // Only a literal true trusts: huggingface_hub's getattr(info, ..., False)
    // is truthy for "yes" or 1 too, but an answer of another shape is not the Hub's.
    auto it = overview->is_object() ? overview->find("trustedKernelPublisher") : overview->end();
    const bool trusted = overview->is_object() && it != overview->end() && it->is_boolean() && it->get<bool>();
    return trusted ? PublisherAnswer::trusted : PublisherAnswer::not_trusted;
  }
  if (r.status == 404) return PublisherAnswer::no_such_organization;
  const std::string message = error_message(r);
  const std::string status = answered + (message.empty() ? "" : " (" + message + ")");
  if (r.status == 401 || r.status == 403)
    throw Error(ErrorKind::auth, status + ": the Hub at " + display_url(config_.endpoint) +
                                     (config_.token.empty() ? " wants a token while " + checking + "; pass --token or set HF_TOKEN"
                                                            : " rejected the token (from " + config_.token_source + ") while " + checking +
                                                                  "; check or renew it, or unset it for public repos"));
  throw Error(ErrorKind::network, status + " while " + checking + "; try again later, or check --endpoint / HF_ENDPOINT");
}

std::vector<RefInfo> HubClient::list_refs() {
  auto refs = [&] { return parse_refs(get_json(api_base() + "/refs", "listing refs of " + repo_id_), display_url(config_.endpoint) + " for " + repo_id_); };
  if (config_.repo_type_forced || config_.repo_type != "kernel") return refs();
  try {
    return refs();
  } catch (const Error& e) {
    if (e.reason() != Reason::repo_not_found) throw;
  }
  // Repos made before kernel-type repos existed are model repos; they are
  // being taken down, but a team may still hold one (or a mirror of one).
  use_repo_type("model");
  return refs();
}

void HubClient::use_repo_type(const std::string& type) {
  if (type == config_.repo_type) return;
  config_.repo_type = type;
  cache_ = HfCache(config_.cache_dir, type, repo_id_);
  fell_back_ = true;
}

std::string HubClient::repo_type_note() const {
  if (!fell_back_) return "";
  return repo_id_ + " is a model repo, not a kernel repo: kernels >= 0.14 loads only kernel repos, so republish it as one (built as a model repo)";
}

// The repo and its commit were found before the history is asked for: a
// "not found" (or "not implemented") answer here means the endpoint does
// not serve the commits API, as some proxies serve refs, tree and resolve
// only. No history-free version is the same as N.B (docs/wheel-naming.md),
// so the build stops, naming the request and the two ways on.
[[noreturn]] void HubClient::throw_for_history(const HttpResponse& r, const std::string& what, const std::string& commit) {
  std::optional<Error> error;
  try {
    throw_for(r, what);
  } catch (const Error& e) {
    error = e;
  }
  if (error->kind() != ErrorKind::not_found && r.status != 405 && r.status != 501) throw *error;
  const std::string code = r.header("x-error-code");
  std::string line = "the wheel version needs the number of commits in the history of " + commit.substr(0, 12) + " of '" + repo_id_ + "', but GET " +
                     display_url(r.url) + " answered HTTP " + std::to_string(r.status);
  if (!code.empty()) line.append(" (").append(code).append(")");
  line.append(": ").append(display_url(config_.endpoint)).append(" does not serve the Hub's commit-history API (some proxies do not). ");
  line.append("Build this commit once through the Hub with the same cache (the count is kept there), or pass --wheel-version with the version the Hub build gives it (docs/wheel-naming.md)");
  throw Error(ErrorKind::not_found, line);
}

uint64_t HubClient::history_length(const std::string& commit) {
  if (auto n = cache_.load_history_length(commit)) return *n;
  if (config_.offline)
    throw Error(ErrorKind::not_found, "the history of commit " + commit.substr(0, 12) + " of '" + repo_id_ +
                                          "' is not in the cache, and the wheel version needs it; run once without --offline");
  std::string url = api_base() + "/commits/" + encode_component(commit);
  const std::string origin = url_origin(config_.endpoint);
  const std::string what = "listing the history of '" + repo_id_ + "' at " + commit.substr(0, 12);
  uint64_t count = 0;
  Pagination pages(what, origin, kMaxHistoryPages);
  for (;;) {
    pages.visit(url);
    HttpResponse r = http_.get(url);
    if (r.status != 200) throw_for_history(r, what, commit);
    std::optional<json> j = parse_hub_json(r.body, display_url(url));
    if (!j || !j->is_array()) throw Error(ErrorKind::network, what + ": the answer is not a JSON array; is --endpoint a Hugging Face Hub?");
    if (pages.count() == 1 && (j->empty() || !(*j)[0].is_object() || !(*j)[0].contains("id") || (*j)[0]["id"] != commit))
      throw Error(ErrorKind::network, what + ": the history does not start at that commit; is --endpoint a Hugging Face Hub?");
    count += j->size();
    auto next = pages.next(url, r.header("link"));
    if (!next) break;
    url = *next;
  }
  cache_.save_history_length(commit, count);
  return count;
}

namespace {

// The highest X.Y.Z among vX.Y.Z tags at `commit`: the version a revision
// stands for when it was reached by branch or sha.
std::optional<std::string> version_at(const std::vector<RefInfo>& refs, const std::string& commit) {
  std::optional<Version> best;
  for (const auto& r : refs)
    if (r.kind == "tag" && r.commit == commit)
      if (auto v = tag_version(r.name); v && (!best || *v > *best)) best = v;
  if (!best) return std::nullopt;
  return best->str();
}

// Picks the ref a --version SPEC names among (name, commit) refs.
// An integer N is the branch vN (kernels >= 0.11); anything else is a PEP
// 440 specifier set over vX.Y.Z tags, highest match wins (kernels 0.10).
Resolution pick_version(const std::string& repo_id, const std::string& spec,
                        const std::vector<std::pair<std::string, std::string>>& branches,
                        const std::vector<std::pair<std::string, std::string>>& tags) {
  std::vector<std::string> tag_versions, version_branches;
  for (const auto& [name, _] : tags)
    if (tag_version(name)) tag_versions.push_back(name.substr(1));
  for (const auto& [name, _] : branches)
    if (version_branch(name)) version_branches.push_back(name);
  const std::string available = "available versions: " + listed(tag_versions) + "; version branches: " + listed(version_branches);
  Resolution res;
  res.requested = spec;
  if (all_digits(spec)) {
    for (const auto& [name, commit] : branches)
      if (name == "v" + spec) {
        res.ref = name;
        res.commit = commit;
        res.kernel_version = version_branch(name);
        return res;
      }
    throw Error(ErrorKind::not_found, "repo '" + repo_id + "' has no version branch v" + spec + " (" + available + ")", Reason::revision_not_found);
  }
  // A bare version means exactly that version.
  const bool bare = Version::try_parse(spec).has_value();
  SpecifierSet set = SpecifierSet::parse(bare ? "==" + spec : spec);
  std::optional<Version> best;
  for (const auto& [name, commit] : tags) {
    auto v = tag_version(name);
    if (v && set.contains(*v, bare) && (!best || *v > *best)) {
      best = v;
      res.ref = name;
      res.commit = commit;
    }
  }
  if (!best) throw Error(ErrorKind::not_found, "no version of '" + repo_id + "' matches '" + spec + "' (" + available + ")", Reason::revision_not_found);
  res.version = best->str();
  return res;
}

// Neither --version nor --revision: the newest kernel version, as a user
// of get_kernel(version=N) would pick it.
Resolution pick_latest(const std::string& repo_id, const std::vector<std::pair<std::string, std::string>>& branches,
                       const std::vector<std::pair<std::string, std::string>>& tags) {
  std::optional<uint64_t> best;
  for (const auto& [name, _] : branches)
    if (auto n = version_branch(name)) best = std::max(best.value_or(0), *n);
  if (best) {
    Resolution res = pick_version(repo_id, std::to_string(*best), branches, tags);
    res.requested = "v" + std::to_string(*best) + " (the highest version)";
    res.latest = true;
    return res;
  }
  std::vector<std::string> names;
  for (const auto& [name, _] : branches) names.push_back(name);
  std::vector<std::string> tag_names;
  for (const auto& [name, _] : tags) tag_names.push_back(name);
  throw Error(ErrorKind::not_found, "repo '" + repo_id + "' has no version branch vN (branches: " + listed(names) + "; tags: " + listed(tag_names) +
                                        "); pass --revision REF, or --version X.Y.Z for a tagged release",
              Reason::revision_not_found);
}

}  // namespace

Resolution HubClient::resolve(const std::optional<std::string>& revision, const std::optional<std::string>& version_spec) {
  if (revision && version_spec) throw Error(ErrorKind::usage, "pass either --revision or --version, not both");
  if (config_.offline) return resolve_offline(revision, version_spec);
  auto refs = list_refs();
  Resolution res;
  if (version_spec || !revision) {
    std::vector<std::pair<std::string, std::string>> branches, tags;
    for (const auto& r : refs) (r.kind == "branch" ? branches : tags).emplace_back(r.name, r.commit);
    res = version_spec ? pick_version(repo_id_, *version_spec, branches, tags) : pick_latest(repo_id_, branches, tags);
  } else {
    res.requested = *revision;
    json info;
    try {
      info = get_json(api_base() + "/revision/" + encode_component(res.requested), "revision '" + res.requested + "' of " + repo_id_);
    } catch (const Error& e) {
      if (e.reason() != Reason::revision_not_found && e.reason() != Reason::entry_not_found) throw;
      std::vector<std::string> names;
      for (const auto& r : refs) names.push_back(r.name);
      throw Error(ErrorKind::not_found, "revision '" + res.requested + "' not found in '" + repo_id_ + "' (branches and tags: " + listed(names) + ")");
    }
    auto sha = revision_sha(info);
    if (!sha)
      throw Error(ErrorKind::network, "revision info for '" + res.requested + "' of " + repo_id_ + " has no commit sha; is --endpoint a Hugging Face Hub?");
    res.commit = *sha;
    if (res.requested != res.commit) res.ref = res.requested;
    res.kernel_version = version_branch(res.ref);
  }
  if (!res.version) res.version = version_at(refs, res.commit);
  // huggingface_hub records refs it resolved; so do we, for --offline.
  if (!res.ref.empty()) cache_.write_ref(res.ref, res.commit);
  for (const auto& r : refs)
    if (r.kind == "tag" && r.commit == res.commit && tag_version(r.name)) cache_.write_ref(r.name, r.commit);
  return res;
}

Resolution HubClient::resolve_offline(const std::optional<std::string>& revision, const std::optional<std::string>& version_spec) {
  std::error_code ec;
  if (!config_.repo_type_forced && config_.repo_type == "kernel" && !fs::is_directory(cache_.repo_dir(), ec) &&
      fs::is_directory(HfCache(config_.cache_dir, "model", repo_id_).repo_dir(), ec))
    use_repo_type("model");
  const std::string where = "the cache (" + cache_.repo_dir().string() + ")";
  std::vector<std::pair<std::string, std::string>> branches, tags;
  for (auto& [name, commit] : cache_.refs()) {
    // The cache does not say branch or tag: vN is a version branch.
    if (tag_version(name) && !version_branch(name)) tags.emplace_back(name, commit);
    else branches.emplace_back(name, commit);
  }
  Resolution res;
  if (version_spec || !revision) {
    try {
      res = version_spec ? pick_version(repo_id_, *version_spec, branches, tags) : pick_latest(repo_id_, branches, tags);
    } catch (const Error& e) {
      throw Error(ErrorKind::not_found, std::string(e.what()) + " in " + where + "; run once without --offline", e.reason());
    }
  } else {
    res.requested = *revision;
    if (is_git_sha1(res.requested)) res.commit = res.requested;
    else if (auto c = cache_.read_ref(res.requested)) {
      res.commit = *c;
      res.ref = res.requested;
      res.kernel_version = version_branch(res.ref);
    } else {
      throw Error(ErrorKind::not_found, "revision '" + res.requested + "' of '" + repo_id_ + "' is not in " + where + "; run once without --offline (or unset HF_HUB_OFFLINE)");
    }
  }
  if (!res.version) {
    std::vector<RefInfo> refs;
    for (auto& [n, c] : tags) refs.push_back({n, "tag", c});
    res.version = version_at(refs, res.commit);
  }
  return res;
}

std::vector<TreeEntry> HubClient::list_tree(const std::string& commit, const std::string& path) {
  std::string url = api_base() + "/tree/" + encode_component(commit) + "/" + encode_path(path) + "?recursive=true&expand=false";
  const std::string origin = url_origin(config_.endpoint);
  const std::string what = "listing " + path + "/ of '" + repo_id_ + "' at " + commit.substr(0, 12);
  std::vector<TreeEntry> out;
  Pagination pages(what, origin, kMaxTreePages);
  for (;;) {
    pages.visit(url);
    HttpResponse r = http_.get(url);
    if (r.status == 404 && r.header("x-error-code") == "EntryNotFound")
      throw Error(ErrorKind::not_found, "'" + repo_id_ + "' has no " + path + "/ directory at " + commit.substr(0, 12) +
                                            "; is it a kernel repo built with kernel-builder?");
    if (r.status != 200) throw_for(r, what);
    std::optional<json> j = parse_hub_json(r.body, display_url(url));
    if (!j || !j->is_array()) {
      // A cut-short page: fetch it again (bounded by the retry budget).
      r = http_.get(url);
      if (r.status == 200) j = parse_hub_json(r.body, display_url(url));
      if (r.status != 200 || !j || !j->is_array())
        throw Error(ErrorKind::network, what + ": the listing is not a JSON array; is --endpoint a Hugging Face Hub?");
    }
    if (out.size() + j->size() > kMaxTreeEntries)
      throw Error(ErrorKind::network, what + ": the listing has more than " + std::to_string(kMaxTreeEntries) +
                                          " entries, more than any kernel's build/ holds; check --endpoint and the repo name");
    for (const auto& e : *j) out.push_back(parse_tree_entry(e, display_url(config_.endpoint)));
    auto next = pages.next(url, r.header("link"));
    if (!next) break;
    url = *next;
  }
  if (out.empty())
    throw Error(ErrorKind::not_found, "'" + repo_id_ + "' has an empty " + path + "/ directory at " + commit.substr(0, 12));
  return out;
}

std::vector<RepoFile> HubClient::fetch(const std::string& commit, const std::vector<TreeEntry>& entries, const FetchProgress& progress) {
  std::vector<RepoFile> files;
  // Downloaded once per etag, in tree order: a variant's files arrive
  // together, so its wheel can start while later variants download.
  std::vector<std::pair<std::string, const TreeEntry*>> todo;
  std::set<std::string> needed;
  std::vector<fs::path> missing;
  std::set<std::string> paths;
  json listing = json::array();
  for (const auto& e : entries) {
    if (e.type != "file") continue;
    if (auto why = unsafe_path_reason(e.path); !why.empty())
      throw Error(ErrorKind::input, "repo '" + repo_id_ + "' lists the file '" + e.path + "': " + why + "; refusing to use this repo");
    // Git trees cannot hold one path twice; a listing that does is not a
    // repo we know how to package (which copy would the wheel hold?).
    if (!paths.insert(e.path).second)
      throw Error(ErrorKind::input, "repo '" + repo_id_ + "' lists the file '" + e.path + "' twice; refusing to use this repo");
    listing.push_back({{"path", e.path}, {"size", e.size}, {"oid", e.oid}, {"lfs", e.lfs_sha256 ? json(*e.lfs_sha256) : json(nullptr)}});
    const fs::path blob = cache_.blob(e.etag());
    std::error_code ec;
    if (!(fs::is_regular_file(blob, ec) && fs::file_size(blob, ec) == e.size) && needed.insert(e.etag()).second) {
      todo.emplace_back(e.etag(), &e);
      missing.push_back(blob);
    }
    files.push_back({e.path, blob, e.size, false});
  }
  uint64_t bytes = 0;
  for (auto& [_, e] : todo) bytes += e->size;
  if (progress.on_plan) progress.on_plan(todo.size(), bytes);
  if (progress.on_listed) progress.on_listed(files, missing);

  // Lock what we are about to write in bounded batches (bounded open
  // files), each batch in etag order: two kwheel runs never hold a lock
  // while waiting for one the other holds.
  constexpr size_t kBatch = 256;
  for (size_t first = 0; first < todo.size(); first += kBatch) {
    std::vector<std::pair<std::string, const TreeEntry*>> batch(todo.begin() + first,
                                                                todo.begin() + std::min(todo.size(), first + kBatch));
    std::vector<std::pair<std::string, const TreeEntry*>> lock_order = batch;
    std::sort(lock_order.begin(), lock_order.end());
    std::vector<FileLock> locks;
    for (const auto& [etag, _] : lock_order) locks.push_back(cache_.lock_blob(etag));
    std::vector<DownloadJob> jobs;
    for (const auto& [etag, e] : batch) {
      std::error_code ec;
      if (fs::is_regular_file(cache_.blob(etag), ec) && fs::file_size(cache_.blob(etag), ec) == e->size) continue;  // another process won
      fs::create_directories(cache_.blob(etag).parent_path(), ec);
      DownloadJob job;
      job.url = repo_url() + "/resolve/" + encode_component(commit) + "/" + encode_path(e->path);
      job.partial = cache_.incomplete(etag);
      job.dest = cache_.blob(etag);
      job.size = e->size;
      if (e->lfs_sha256) job.sha256 = *e->lfs_sha256;
      else job.git_sha1 = e->oid;
      job.label = "'" + e->path + "' from " + repo_id_;
      jobs.push_back(std::move(job));
    }
    if (!jobs.empty()) http_.download(std::move(jobs), jobs_, progress.download);
  }
  for (const auto& e : entries)
    if (e.type == "file") cache_.link_snapshot(commit, e.path, e.etag());
  cache_.save_listing(commit, listing);
  return files;
}

std::vector<RepoFile> HubClient::cached_files(const std::string& commit) {
  const std::string where = "the cache (" + cache_.repo_dir().string() + ")";
  std::vector<RepoFile> files;
  if (auto listing = cache_.load_listing(commit)) {
    for (const auto& j : *listing) {
      TreeEntry e = parse_tree_entry(j.contains("lfs") && j["lfs"].is_string()
                                    ? json{{"type", "file"}, {"path", j["path"]}, {"size", j["size"]}, {"oid", j["oid"]}, {"lfs", {{"oid", j["lfs"]}}}}
                                    : json{{"type", "file"}, {"path", j["path"]}, {"size", j["size"]}, {"oid", j["oid"]}},
                                where);
      const fs::path blob = cache_.blob(e.etag());
      std::error_code ec;
      if (!fs::is_regular_file(blob, ec) || fs::file_size(blob, ec) != e.size)
        throw Error(ErrorKind::not_found, "'" + e.path + "' of '" + repo_id_ + "' at " + commit.substr(0, 12) + " is missing from " + where + "; run once without --offline");
      files.push_back({e.path, blob, e.size, false});
    }
    return files;
  }
  // A snapshot another tool (huggingface_hub, kernels) downloaded.
  const fs::path build = cache_.snapshot_dir(commit) / "build";
  std::error_code ec;
  if (!fs::is_directory(build, ec))
    throw Error(ErrorKind::not_found, "commit " + commit.substr(0, 12) + " of '" + repo_id_ + "' is not in " + where + "; run once without --offline");
  return list_local_repo(cache_.snapshot_dir(commit), cache_.repo_dir());
}

}  // namespace kwheel
