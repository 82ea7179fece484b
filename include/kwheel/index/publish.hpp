#pragma once
// Uploading wheels to a package index with the legacy upload API that twine
// uses (PyPI's "forklift", pypiserver, devpi, Artifactory, ...): one
// multipart/form-data POST per file with `:action=file_upload`,
// `protocol_version=1`, the wheel's core metadata as form fields and the file
// itself, streamed from disk. Credentials are resolved the way twine 7
// resolves them and sent as HTTP Basic auth to the repository's origin only.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/hub/connection.hpp"
#include "kwheel/hub/http.hpp"
#include "kwheel/base/secret.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {

// Where credentials may come from, most specific first (twine's order):
// --username/--password (or TWINE_USERNAME/TWINE_PASSWORD), then the
// repository URL's user:password@, then the .pypirc section.
struct RepositorySources {
  std::optional<std::string> repository_url;  // --repository-url / TWINE_REPOSITORY_URL: .pypirc is not read
  std::optional<std::string> repository;      // --repository / TWINE_REPOSITORY: a .pypirc section
  std::string config_file;                    // --config-file; empty = ~/.pypirc (may be absent)
  std::optional<std::string> username;        // --username / TWINE_USERNAME
  std::optional<Secret> password;             // --password / TWINE_PASSWORD
  // --cert then TWINE_CERT, --client-cert then TWINE_CLIENT_CERT (tls_sources);
  // the .pypirc section's ca_cert and client_cert follow, then the shared
  // variables (kwheel/hub/connection.hpp).
  TlsSources tls;
};

struct Repository {
  std::string url;          // upload endpoint, without user info
  std::string username;     // empty: anonymous
  Secret password;
  TlsSettings tls;
  std::string described;    // "--repository-url http://..." or "[private] in /home/u/.pypirc", for messages
};

// Throws Error(usage) when no repository is named or the URL is not
// http(s); Error(input) for an unreadable/malformed .pypirc or a missing
// section; Error(auth) for a password without a username (or the reverse).
Repository resolve_repository(const RepositorySources& sources);

// The form fields twine 7 sends for a wheel (package.py metadata_dictionary
// + repository.py _upload), in that order, the file part last.
std::vector<FormPart> upload_form(const WheelArchive& wheel, const std::string& sha256_hex);

// twine's skip_upload(): pypiserver answers 409, PyPI and others 400 with
// "already exist(s)" in the reason phrase or the body.
bool says_already_exists(long status, const std::string& reason, const std::string& body);

// The server's explanation in one line: the <pre>/<title>/<h1> of an HTML
// error page or the text itself, whitespace collapsed, at most 300 bytes.
std::string server_message(const std::string& reason, const std::string& body);

struct PublishOptions {
  // A file the index says it already has counts as success when the
  // index's simple page gives it this file's sha256 (devpi's "identical
  // file" answer says so itself); other bytes, or an index whose page does
  // not say, fail the file.
  bool skip_existing = false;
  // The simple index to compare with (--index-url); none: derived from the
  // upload URL for the servers kwheel knows (published_copy.hpp). It gets
  // the credentials only on the upload URL's origin.
  std::optional<std::string> index_url;
  unsigned jobs = 4;          // uploads at once
  unsigned max_attempts = 5;  // per file, first try included (5xx and network errors only)
  std::chrono::milliseconds backoff{500};
  std::chrono::seconds stall_timeout{60};  // an upload or answer that moves no byte this long is dropped and retried
  std::string user_agent;
  std::shared_ptr<Transport> transport;  // where uploads go; none: libcurl (tests pass a fake)
};

struct UploadResult {
  std::filesystem::path file;
  // exists: the index had the file already with these bytes
  // (--skip-existing, sha256 compared on its simple page), or said it
  // received identical bytes (devpi's 200 "Upload of identical file").
  enum class Status { uploaded, exists, failed } status = Status::failed;
  long http_status = 0;
  unsigned attempts = 0;      // requests sent
  std::string sha256;
  uint64_t size = 0;
  std::string message;        // one line; never holds the password
  int exit_code = 0;          // the failure's ErrorKind
  // The index refused the upload as such, whatever the file: credentials
  // (401/403), no upload endpoint there (404/405), a redirect.
  bool index_refused = false;
};

// Checks every wheel first (a readable archive whose RECORD matches), and
// --index-url (an http(s) URL without user info: Error(usage)), so a bad
// file stops the run before anything is uploaded; then uploads the first
// file alone: an index that refuses uploads as such (index_refused) is one
// Error of that kind, and no other file is sent. The rest go at most
// `jobs` at once. Results come back in input order; `on_done` sees each as
// it finishes (called under a lock, from the uploading threads).
std::vector<UploadResult> publish(const std::vector<std::filesystem::path>& wheels, const Repository& repo, const PublishOptions& options,
                                  const std::function<void(const UploadResult&)>& on_done = {});

const char* status_name(UploadResult::Status status);
nlohmann::json to_json(const UploadResult& result);

}  // namespace kwheel
