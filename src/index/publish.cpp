#include "kwheel/index/publish.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/enum_name.hpp"
#include "kwheel/base/environment.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/hub/curl_handles.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/index/published_copy.hpp"
#include "kwheel/index/pypirc.hpp"
#include "kwheel/index/simple_api.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

using curl::Url;
using CurlStr = curl::String;

struct ParsedUrl {
  std::string without_userinfo;
  std::optional<std::string> user, password;
  std::string scheme, host;
};

// Splits user:password@ off an upload URL (twine's _config_from_repository_url).
ParsedUrl parse_upload_url(const std::string& url, const std::string& what) {
  Url u(curl::library().url());
  if (!u) throw std::bad_alloc();
  // The URL may carry a password: never quote it in the error.
  if (curl::library().url_set(u.get(), CURLUPART_URL, url.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK)
    throw Error(ErrorKind::usage, what + " is not a valid URL; expected e.g. http://127.0.0.1:8080/ or https://upload.pypi.org/legacy/");
  ParsedUrl p;
  auto get = [&](CURLUPart part, unsigned flags = 0) -> std::optional<std::string> {
    char* out = nullptr;
    if (curl::library().url_get(u.get(), part, &out, flags) != CURLUE_OK || !out) return std::nullopt;
    CurlStr s(out);
    return std::string(s.get());
  };
  p.scheme = ascii_lower(get(CURLUPART_SCHEME).value_or(""));
  p.host = get(CURLUPART_HOST).value_or("");
  if ((p.scheme != "http" && p.scheme != "https") || p.host.empty())
    throw Error(ErrorKind::usage, what + " must be an http:// or https:// URL with a host");
  p.user = get(CURLUPART_USER, CURLU_URLDECODE);
  p.password = get(CURLUPART_PASSWORD, CURLU_URLDECODE);
  curl::library().url_set(u.get(), CURLUPART_USER, nullptr, 0);
  curl::library().url_set(u.get(), CURLUPART_PASSWORD, nullptr, 0);
  p.without_userinfo = get(CURLUPART_URL).value_or(url);
  return p;
}

bool is_pypi(const std::string& url) {
  return url.starts_with("https://upload.pypi.org/") || url.starts_with("https://test.pypi.org/") || url.starts_with("https://pypi.python.org/") ||
         url.starts_with("https://testpypi.python.org/");
}

std::string home_config() {
  return env_value("HOME").value_or(".") + "/.pypirc";
}

std::string expand_user(const std::string& path) {
  if (path == "~" || path.starts_with("~/")) {
    return env_value("HOME").value_or(".") + path.substr(1);
  }
  return path;
}

// Core metadata header -> upload form field, as twine's
// _RAW_TO_PACKAGE_METADATA (packaging's RawMetadata names, some renamed).
struct FieldMap {
  const char* header;  // lower-case
  const char* field;
  bool multiple;
};
constexpr FieldMap kFields[] = {
    {"metadata-version", "metadata_version", false},
    {"name", "name", false},
    {"version", "version", false},
    {"platform", "platform", true},
    {"summary", "summary", false},
    {"description", "description", false},
    {"keywords", "keywords", false},
    {"home-page", "home_page", false},
    {"author", "author", false},
    {"author-email", "author_email", false},
    {"license", "license", false},
    {"supported-platform", "supported_platform", true},
    {"download-url", "download_url", false},
    {"classifier", "classifiers", true},
    {"requires", "requires", true},
    {"provides", "provides", true},
    {"obsoletes", "obsoletes", true},
    {"maintainer", "maintainer", false},
    {"maintainer-email", "maintainer_email", false},
    {"requires-dist", "requires_dist", true},
    {"provides-dist", "provides_dist", true},
    {"obsoletes-dist", "obsoletes_dist", true},
    {"requires-python", "requires_python", false},
    {"requires-external", "requires_external", true},
    {"project-url", "project_urls", true},
    {"description-content-type", "description_content_type", false},
    {"provides-extra", "provides_extra", true},
    {"dynamic", "dynamic", true},
    {"license-expression", "license_expression", false},
    {"license-file", "license_file", true},
};

// pkg_resources.safe_name, which twine sends as the form's name.
std::string safe_name(const std::string& name) {
  std::string out;
  bool in_run = false;
  for (char c : name) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.';
    if (keep) out += c;
    else if (!in_run) out += '-';
    in_run = !keep;
  }
  return out;
}

// Every <...> becomes one space (what replacing the regex <[^>]*> with " "
// does, without std::regex's per-character recursion: error pages come from
// the server and may be long).
std::string tags_to_spaces(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find('<', i);
    size_t close = open == std::string::npos ? std::string::npos : text.find('>', open + 1);
    if (close == std::string::npos) break;
    out.append(text, i, open - i);
    out += ' ';
    i = close + 1;
  }
  out.append(text, i, std::string::npos);
  return out;
}

std::string inner_of(const std::string& body, const std::string& tag) {
  std::string lb = ascii_lower(body);
  size_t a = lb.find("<" + tag);
  if (a == std::string::npos) return "";
  a = lb.find('>', a);
  size_t b = lb.find("</" + tag, a);
  if (a == std::string::npos || b == std::string::npos) return "";
  return body.substr(a + 1, b - a - 1);
}

std::string human_size(uint64_t n) {
  std::ostringstream s;
  if (n >= (1u << 20)) s << (n * 10 / 1048576) / 10.0 << " MiB";
  else if (n >= 1024) s << (n * 10 / 1024) / 10.0 << " KiB";
  else s << n << " B";
  return s.str();
}

}  // namespace

Repository resolve_repository(const RepositorySources& src) {
  Repository repo;
  std::optional<std::string> cfg_user;
  std::optional<Secret> cfg_password;
  std::optional<std::string> cfg_ca, cfg_client_cert;
  std::string cfg_where;  // the .pypirc section, for messages
  std::string where_to_fix;
  if (src.repository_url && !src.repository_url->empty()) {
    ParsedUrl p = parse_upload_url(*src.repository_url, "--repository-url");
    repo.url = p.without_userinfo;
    cfg_user = p.user;
    if (p.password) cfg_password = Secret(*p.password);
    repo.described = "--repository-url " + repo.url;
    where_to_fix = "--username/--password or TWINE_USERNAME/TWINE_PASSWORD";
  } else if (src.repository && !src.repository->empty()) {
    const bool explicit_file = !src.config_file.empty();
    const std::string path = explicit_file ? expand_user(src.config_file) : home_config();
    std::string text;
    std::error_code ec;
    const bool file_exists = fs::exists(path, ec);
    if (file_exists) {
      std::ifstream in(path, std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      if (!in && !in.eof()) throw Error(ErrorKind::input, "cannot read config file '" + path + "'");
      text = ss.str();
    } else if (explicit_file) {
      throw Error(ErrorKind::input, "config file '" + path + "' does not exist; pass --config-file PATH to a .pypirc, or --repository-url URL");
    }
    auto repos = pypirc_repositories(parse_ini(text, path));
    auto it = repos.find(*src.repository);
    if (it == repos.end() && !file_exists)
      throw Error(ErrorKind::input, "repository '" + *src.repository + "' (--repository, TWINE_REPOSITORY) names a section of a .pypirc, and there is no '" + path + "'; create it with [distutils] index-servers = " +
                                        *src.repository + " and a [" + *src.repository + "] section (repository, username), or pass --repository-url URL (or --config-file PATH)");
    if (it == repos.end()) {
      std::string known;
      for (const auto& [name, _] : repos) known += (known.empty() ? "" : ", ") + name;
      throw Error(ErrorKind::input, "'" + path + "' has no repository '" + *src.repository + "' (twine reads the sections named in [distutils] index-servers; known: " +
                                        known + "); add it to index-servers with a [" + *src.repository + "] section, or pass --repository-url URL");
    }
    if (!it->second.repository)
      throw Error(ErrorKind::input, "section [" + *src.repository + "] of '" + path + "' has no 'repository = URL' line; add the index's upload URL there");
    ParsedUrl p = parse_upload_url(*it->second.repository, "the repository URL of [" + *src.repository + "] in '" + path + "'");
    repo.url = p.without_userinfo;
    cfg_user = it->second.username;
    cfg_password = it->second.password;
    cfg_ca = it->second.ca_cert;
    cfg_client_cert = it->second.client_cert;
    cfg_where = "[" + *src.repository + "] of " + path;
    repo.described = "[" + *src.repository + "] in " + path;
    where_to_fix = "the [" + *src.repository + "] section of " + path + ", --username/--password or TWINE_USERNAME/TWINE_PASSWORD";
  } else {
    throw Error(ErrorKind::usage,
                "name the index to upload to: --repository-url URL (or TWINE_REPOSITORY_URL), or --repository NAME for a section of ~/.pypirc (or TWINE_REPOSITORY)");
  }
  std::optional<std::string> user = src.username ? src.username : cfg_user;
  std::optional<Secret> password = src.password ? src.password : cfg_password;
  if (!user && is_pypi(repo.url)) user = "__token__";  // twine's default for PyPI API tokens
  if (password && !password->empty() && (!user || user->empty()))
    throw Error(ErrorKind::auth, "a password was given for " + repo.url + " but no username; pass --username (for an API token: --username __token__) or set TWINE_USERNAME");
  if (user && !user->empty() && (!password || password->empty()))
    throw Error(ErrorKind::auth, "no password for user '" + *user + "' at " + repo.url + "; set it in " + where_to_fix);
  repo.username = user.value_or("");
  if (password) repo.password = *password;
  // twine's order (--cert, TWINE_CERT, the section's ca_cert), then the
  // variables every command reads.
  TlsSources tls = src.tls;
  if (cfg_ca && !cfg_ca->empty()) tls.ca.push_back({"ca_cert in " + cfg_where, expand_user(*cfg_ca)});
  if (cfg_client_cert && !cfg_client_cert->empty()) tls.client_cert.push_back({"client_cert in " + cfg_where, expand_user(*cfg_client_cert)});
  repo.tls = resolve_tls(tls);
  return repo;
}

std::vector<FormPart> upload_form(const WheelArchive& wheel, const std::string& sha256_hex) {
  // Header names are case-insensitive: index the archive's fields by lower case.
  std::multimap<std::string, std::string> fields;
  for (const auto& [k, v] : wheel.metadata()) fields.emplace(ascii_lower(k), v);
  std::string metadata_version = fields.count("metadata-version") ? fields.find("metadata-version")->second : "1.0";
  const bool license_files_allowed = Version::try_parse(metadata_version).value_or(Version::parse("0")) >= Version::parse("2.4");

  std::vector<FormPart> parts;
  auto add = [&](const std::string& name, const std::string& value) { parts.push_back(FormPart{name, value, {}, {}, {}}); };
  for (const auto& f : kFields) {
    if (std::string(f.field) == "license_file" && !license_files_allowed) continue;
    auto [it, end] = fields.equal_range(f.header);
    if (it == end) continue;
    if (std::string(f.field) == "name") {
      // twine sends pkg_resources.safe_name(): runs of other characters become
      // '-' (re.sub('[^A-Za-z0-9.]+', '-', name); by hand, as std::regex
      // overflows the stack on a long run, and the name is the wheel's).
      add("name", safe_name(trim(it->second)));
      continue;
    }
    if (std::string(f.field) == "keywords") {
      // packaging splits on commas, twine joins with ", ".
      std::string joined, item;
      std::istringstream in(it->second);
      while (std::getline(in, item, ','))
        if (auto s = trim(item); !s.empty()) joined += (joined.empty() ? "" : ", ") + s;
      add("keywords", joined);
      continue;
    }
    for (; it != end; ++it) {
      std::string value = it->second;
      if (std::string(f.field) == "project_urls") {
        size_t comma = value.find(',');
        value = comma == std::string::npos ? trim(value) + ", " : trim(value.substr(0, comma)) + ", " + trim(value.substr(comma + 1));
      } else if (std::string(f.field) != "description") {
        value = trim(value);
      }
      add(f.field, value);
      if (!f.multiple) break;
    }
  }
  const WheelFilename& fn = wheel.filename();
  std::string pyversion;
  for (const auto& p : fn.python) pyversion += (pyversion.empty() ? "" : ".") + p;
  add("pyversion", pyversion);
  add("filetype", "bdist_wheel");
  add("sha256_digest", sha256_hex);
  add(":action", "file_upload");
  add("protocol_version", "1");
  parts.push_back(FormPart{"content", "", wheel.path(), wheel.path().filename().string(), "application/octet-stream"});
  return parts;
}

bool says_already_exists(long status, const std::string& reason, const std::string& body) {
  if (status == 409) return true;
  return status == 400 && (ascii_lower(reason).find("already exist") != std::string::npos || ascii_lower(body).find("already exist") != std::string::npos);
}

std::string server_message(const std::string& reason, const std::string& body) {
  std::string text = body;
  if (ascii_lower(body).find("<html") != std::string::npos || ascii_lower(body).find("<!doctype") != std::string::npos) {
    text = inner_of(body, "pre");
    // bottle (pypiserver) prints an abort() without a message as <pre>None</pre>.
    if (trim(text) == "None") text.clear();
    if (trim(text).empty()) text = inner_of(body, "h1");
    if (trim(text).empty()) text = inner_of(body, "title");
    text = html_unescape(tags_to_spaces(text));
  }
  std::string out;
  bool space = false;
  for (unsigned char c : text) {
    if (std::isspace(c) || c < 0x20) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += static_cast<char>(c);
  }
  if (out.empty()) out = trim(reason);
  if (out.size() > 300) out = out.substr(0, 297) + "...";
  return out;
}

namespace {

// Results and forms of the wheels, in input order. Every file is checked
// before the first byte goes out.
void prepare(const std::vector<fs::path>& wheels, std::vector<UploadResult>& results, std::vector<std::vector<FormPart>>& forms) {
  results.resize(wheels.size());
  forms.resize(wheels.size());
  for (size_t i = 0; i < wheels.size(); ++i) {
    WheelArchive archive(wheels[i]);
    if (auto problems = archive.verify_record(); !problems.empty())
      throw Error(ErrorKind::input, "refusing to publish '" + wheels[i].string() + "': RECORD check failed: " + problems.front() +
                                        "; rebuild the wheel");
    results[i].file = wheels[i];
    results[i].sha256 = sha256_file_hex(wheels[i]);
    results[i].size = fs::file_size(wheels[i]);
    forms[i] = upload_form(archive, results[i].sha256);
  }
}

// Basic auth to the repository's origin only, and the upload's own retry
// budget and timeouts.
HttpOptions upload_http_options(const Repository& repo, const PublishOptions& o) {
  HttpOptions http;
  http.auth_origin = url_origin(repo.url);
  http.username = repo.username;
  http.token = repo.password;
  http.max_attempts = std::max(1u, o.max_attempts);
  http.backoff = o.backoff;
  http.stall_timeout = o.stall_timeout;
  http.user_agent = o.user_agent;
  apply_tls(repo.tls, http);
  http.tls_fix = "pass its CA certificate with --cert FILE (or TWINE_CERT, or ca_cert in .pypirc)";
  return http;
}

void fail_result(UploadResult& r, const Repository& repo, ErrorKind kind, const std::string& why) {
  r.status = UploadResult::Status::failed;
  r.exit_code = static_cast<int>(kind);
  r.message = repo.password.redact(redact_secrets(why));
}

// Where --skip-existing reads what the index holds: --index-url, checked
// before anything is uploaded, else the upload server's known layout.
std::optional<std::string> simple_index_of(const Repository& repo, const PublishOptions& o) {
  if (!o.index_url) return derived_simple_index(repo.url);
  // Credentials come from the upload's sources and go to its origin only:
  // a URL carrying others is refused, and never quoted.
  ParsedUrl p = parse_upload_url(*o.index_url, "--index-url");
  if (p.user || p.password)
    throw Error(ErrorKind::usage, "--index-url must not carry user:password@; the upload's credentials are sent to it when it is on the upload URL's origin");
  return p.without_userinfo;
}

// --skip-existing: "already exists" names a file, not its bytes. It counts
// as published only when the index's simple page gives it this file's
// sha256; other bytes, or an index that does not say, fail it (closed).
void skip_if_same_bytes(UploadResult& r, const Repository& repo, const PublishOptions& o, const HttpOptions& http,
                        const std::optional<std::string>& simple_index, const std::string& answer, const std::string& retried) {
  const std::string name = r.file.filename().string();
  const std::string on = name + " is already on " + repo.url + " (" + answer + ")" + retried;
  const std::string fix = "; pass --index-url URL, the index's simple index (pypiserver: http://HOST/simple/, devpi: http://HOST/USER/INDEX/+simple/), so --skip-existing can compare the bytes";
  if (!simple_index) return fail_result(r, repo, ErrorKind::usage, on + ", and kwheel does not know where this index's simple pages are to compare the bytes" + fix);
  PublishedCopy copy;
  try {
    HttpClient client(http, o.transport);
    copy = published_copy(client, *simple_index, name);
  } catch (const Error& e) {
    return fail_result(r, repo, e.kind(), on + ", and kwheel cannot compare the bytes: " + e.what() + fix);
  }
  if (copy.sha256 != r.sha256)
    return fail_result(r, repo, ErrorKind::input, name + " is already on " + repo.url + " with other bytes: this file's sha256 is " + r.sha256 + ", the index's is " +
                                                      copy.sha256 + " (" + copy.page + "); an index keeps published files unchanged: publish a new version");
  r.status = UploadResult::Status::exists;
  r.message = "already on the index with the same bytes (sha256 compared on " + copy.page + "), skipped" + retried;
}

// Whether the server's message says no more than the status line
// ("Forbidden", "Error: 403 Forbidden"): then it is left out.
bool restates_status(const std::string& said, long status, const std::string& reason) {
  std::string s = ascii_lower(trim(said));
  if (s.starts_with("error:")) s = trim(s.substr(6));
  const std::string r = ascii_lower(trim(reason));
  return s.empty() || s == r || s == std::to_string(status) || s == std::to_string(status) + " " + r;
}

// What the index's answer to one upload means, as twine reads it.
void read_answer(UploadResult& r, const HttpResponse& resp, const Repository& repo, const PublishOptions& o, const HttpOptions& http,
                 const std::optional<std::string>& simple_index) {
  const std::string name = r.file.filename().string();
  r.http_status = resp.status;
  // Redacted before server_message cuts it short (a cut secret would no
  // longer match); every registered form first, so the whole Basic
  // credential goes before the password's own forms break it up.
  const std::string said = server_message(resp.reason, repo.password.redact(redact_secrets(resp.body)));
  const std::string status = "HTTP " + std::to_string(resp.status) + (resp.reason.empty() ? "" : " " + trim(resp.reason));
  const std::string detail = restates_status(said, resp.status, resp.reason) ? "" : ": " + said;
  if (resp.status >= 200 && resp.status < 300 && ascii_lower(resp.reason + " " + said).find("identical") != std::string::npos) {
    // devpi: "200 Upload of identical file to non volatile index." The
    // index compared the bytes itself: nothing new was stored.
    r.status = UploadResult::Status::exists;
    r.message = "the index already has these exact bytes: " + status;
  } else if (resp.status >= 200 && resp.status < 300) {
    r.status = UploadResult::Status::uploaded;
    r.message = human_size(r.size);
  } else if (says_already_exists(resp.status, resp.reason, resp.body)) {
    const std::string retried = r.attempts > 1 ? " (an earlier, interrupted attempt of this run may have stored it)" : "";
    if (o.skip_existing) {
      skip_if_same_bytes(r, repo, o, http, simple_index, status + detail, retried);
    } else {
      fail_result(r, repo, ErrorKind::input, name + " is already on " + repo.url + " (" + status + detail + ")" + retried +
                                                 "; an index keeps published files unchanged: pass --skip-existing to accept the copy there, or publish a new version");
    }
  } else if (resp.status == 401 || resp.status == 403) {
    r.index_refused = true;
    fail_result(r, repo, ErrorKind::auth, repo.username.empty()
                                              ? repo.url + " wants credentials (" + status + "); pass --username and TWINE_PASSWORD (or --password), or use a .pypirc section"
                                              : repo.url + " refused the credentials of user '" + repo.username + "' (" + status + detail +
                                                    "); check the password or token for " + repo.described);
  } else if (resp.status >= 300 && resp.status < 400) {
    r.index_refused = true;
    fail_result(r, repo, ErrorKind::usage, repo.url + " answered " + status + " to " + display_url(resp.header("location")) +
                                               "; uploads are not redirected (credentials stay with the URL you gave): pass the final upload URL as --repository-url");
  } else if (resp.status == 404 || resp.status == 405 || resp.status == 501) {
    r.index_refused = true;
    fail_result(r, repo, ErrorKind::not_found, "no upload endpoint at " + repo.url + " (" + status + detail +
                                                   "); check --repository-url (pypiserver: the server root /, devpi: /USER/INDEX/, PyPI: /legacy/)");
  } else {
    fail_result(r, repo, ErrorKind::input, repo.url + " rejected " + name + " (" + status + detail + ")");
  }
}

void upload_one(UploadResult& r, const std::vector<FormPart>& form, const Repository& repo, const PublishOptions& o, const HttpOptions& http,
                const std::optional<std::string>& simple_index) {
  HttpClient client(http, o.transport);
  try {
    HttpResponse resp = client.post_multipart(repo.url, form);
    r.attempts = static_cast<unsigned>(client.stats().requests);
    read_answer(r, resp, repo, o, http, simple_index);
  } catch (const Error& e) {
    r.attempts = static_cast<unsigned>(client.stats().requests);
    fail_result(r, repo, e.kind(), std::string(e.what()));
  }
}

// work(i) for every i below `count`, on at most `jobs` threads (this one
// included).
void run_parallel(size_t count, unsigned jobs, const std::function<void(size_t)>& work) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < count;) work(i);
  };
  const unsigned n = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(count)));
  std::vector<std::jthread> threads;
  for (unsigned t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
}

}  // namespace

std::vector<UploadResult> publish(const std::vector<fs::path>& wheels, const Repository& repo, const PublishOptions& o,
                                  const std::function<void(const UploadResult&)>& on_done) {
  std::vector<UploadResult> results;
  std::vector<std::vector<FormPart>> forms;
  prepare(wheels, results, forms);
  const std::optional<std::string> simple_index = simple_index_of(repo, o);
  const HttpOptions http = upload_http_options(repo, o);
  if (results.empty()) return results;
  // The first file goes alone: wrong credentials or a wrong URL are one
  // error, not one per file, and nothing else is sent to such an index.
  upload_one(results[0], forms[0], repo, o, http, simple_index);
  if (const UploadResult& first = results[0]; first.index_refused)
    throw Error(static_cast<ErrorKind>(first.exit_code),
                first.message + (results.size() > 1 ? "; none of the " + std::to_string(results.size()) + " files was uploaded" : ""));
  std::mutex done_mutex;
  auto done = [&](size_t i) {
    if (!on_done) return;
    std::lock_guard lock(done_mutex);
    on_done(results[i]);
  };
  done(0);
  run_parallel(results.size() - 1, o.jobs, [&](size_t i) {
    upload_one(results[i + 1], forms[i + 1], repo, o, http, simple_index);
    done(i + 1);
  });
  return results;
}

const char* status_name(UploadResult::Status s) {
  using S = UploadResult::Status;
  static constexpr EnumName<S> names[] = {{S::uploaded, "uploaded"}, {S::exists, "exists"}, {S::failed, "failed"}};
  return enum_name(s, names).data();
}

nlohmann::json to_json(const UploadResult& r) {
  nlohmann::json j{{"file", r.file.string()},      {"filename", r.file.filename().string()}, {"status", status_name(r.status)},
                   {"http_status", r.http_status}, {"attempts", r.attempts},                {"sha256", r.sha256},
                   {"size", r.size},               {"message", r.message}};
  if (r.status == UploadResult::Status::failed) j["exit_code"] = r.exit_code;
  return j;
}

}  // namespace kwheel
