#pragma once
// `kwheel pin`: the requirements.txt lines that install the one build of a
// kernel that fits an environment, pinned by version (local label included)
// and sha256, from a directory of wheels or a simple index (PEP 691 JSON or
// PEP 503 HTML, over HTTP(S) or file://). The fit is decided by the same
// filename/label rules `kwheel validate` uses (kwheel/validate/compat.hpp).
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/hub/connection.hpp"
#include "kwheel/hub/transport.hpp"
#include "kwheel/validate/compat.hpp"
#include "kwheel/index/simple_api.hpp"
#include "kwheel/validate/interpreter.hpp"

namespace kwheel {

struct PinRequest {
  std::string source;                  // a directory of wheels, or an index URL (http(s)://, file://)
  std::optional<std::string> name;     // the project; needed when the source holds several
  std::optional<std::string> version;  // a PEP 440 specifier set, e.g. ">=0.1,<0.2"
  InterpreterInfo target;              // probe_interpreter(), or described_target()
  std::string target_described;        // for the comment line
  std::string device = "auto";
  bool extra_index = false;            // --extra-index-url instead of --index-url
  // `pin --lock`: only wheels whose METADATA records this Hub commit of
  // this repo (kwheel's "Hub revision" Project-URL) are candidates. Read
  // from the wheels of a directory or file:// index, or from PEP 658
  // metadata files over HTTP. What an index serves must hash to what its
  // page says (the wheel of a file:// index, the .metadata file over HTTP):
  // other bytes fail the pin with Error(input) naming the file and both
  // hashes; metadata the page gives no sha256 for is not read.
  std::optional<std::string> repo_id;
  std::optional<std::string> commit;
  std::shared_ptr<Transport> transport;  // where index requests go; none: libcurl (tests pass a fake)
  // TLS and the keyring provider for an index URL. Credentials come from
  // the URL's userinfo, the netrc file, then keyring after a 401 (pip's
  // order, kwheel/hub/connection.hpp); the URL written and reported never
  // carries them.
  ConnectionSettings connection;
  // Read the chosen wheels' METADATA into PinResult::requires_dist, for
  // pin_dependencies (index/pin_dependencies.hpp). Off, pin reads no
  // METADATA beyond what --lock needs.
  bool read_requirements = false;
  // From a variant index (index/pin_variants.hpp): the machine uv's NVIDIA
  // provider would see; both unset: detected as uv detects it.
  std::optional<std::string> cuda_driver;  // "X.Y" or "none"
  std::optional<std::string> sm_arch;      // "X.Y"
};

struct PinCandidate {
  IndexFile file;
  LocalLabel label;
  std::optional<std::string> problem;  // why it does not fit; nullopt when it does
  // The problem is its Requires-Python (index entry or METADATA), which
  // excludes the target's Python: the header names such newer versions.
  bool python_excluded = false;
};

struct PinResult {
  std::string project;                 // normalized name
  std::string version;                 // the pinned version, local label included
  std::vector<IndexFile> files;        // the fitting files of that version (one hash each)
  LocalLabel label;
  std::string index_line;              // "--index-url URL", or "" for a directory
  std::string page_format;             // what was read: "directory", "json" (PEP 691) or "html" (PEP 503)
  std::string requirement;             // "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:..."
  std::string text;                    // the whole requirements.txt snippet
  // Comment lines of `text` below its first: the newer versions passed over
  // for their Requires-Python ("# passed over: img2gray 2 (requires Python
  // >=3.99 by its index entry, the target has 3.11.2)"), or that
  // Requires-Python was not checked (a described target).
  std::vector<std::string> notes;
  std::vector<PinCandidate> candidates;
  // An index URL: where its CA bundle and its credentials came from
  // (connection.hpp's names: "--cert", "SSL_CERT_FILE", "system"; "the URL",
  // a netrc path, "keyring (...)", or "" for none). Never a secret.
  std::string ca_from;
  std::string credentials_from;
  std::vector<std::string> requires_dist;  // the chosen wheel's Requires-Dist, with PinRequest::read_requirements
  // From a variant index: the chosen variant's label and the machine it was
  // chosen for; "" otherwise.
  std::string variant_label;
  std::string variant_machine;
};

// An environment described on the command line: torch X.Y with CUDA X.Y,
// or CPU-only when `cuda` is empty. Python and platform are left unknown
// (not checked, Requires-Python included: the header says so); every
// fitting file of the chosen version is hashed.
InterpreterInfo described_target(const std::string& torch, const std::optional<std::string>& cuda);

// Throws Error(not_found) listing the available variants when nothing fits,
// Error(input/network) when the source cannot be read.
PinResult pin(const PinRequest& request);

nlohmann::json to_json(const PinResult& result);

// `pin` without --name: every kernel of the source (a directory's wheels,
// an index's root page), each pinned as pin() pins it, under one index
// line. A project is a kernel when the METADATA of one of its wheels says
// so (index/pin_metadata.hpp project_is_kernel); the others (a kernel's
// Python dependencies, a team's other packages) are left out and counted
// in one comment line; pin_dependencies pins what the kernels need of them.
// One kernel gives pin()'s own result, that line added. A kernel with no
// fitting build is an Error naming it, its kind kept: a requirements file
// missing a kernel would fail later, where it is harder to see. No kernel
// at all: Error(not_found) naming the projects and --name.
struct PinSetResult {
  std::vector<PinResult> kernels;      // by project name
  std::string text;                    // the whole requirements.txt
  std::vector<std::string> left_out;   // the projects that are not kernels, sorted
};
PinSetResult pin_all(const PinRequest& request);

// The projects a source holds (a directory's wheels, an index's root
// page), normalized and sorted.
std::vector<std::string> pin_source_projects(const PinRequest& request);

// "--index-url URL" or "--extra-index-url URL" and the comment lines of a
// pin file start with these; the kernels' requirement lines follow them.
bool is_pin_index_line(const std::string& line);

// {"ok", "requirements", "kernels": [to_json(PinResult), ...], "left_out": [...]};
// one kernel: its to_json(PinResult) with "left_out".
nlohmann::json to_json(const PinSetResult& result);

// `pin --lock`: every kernel of a kernels.lock, each pinned at its locked
// commit under one index line.
struct LockPinResult {
  std::string lock;                    // the lock file as named
  std::vector<PinResult> kernels;      // one per lock entry, in the lock's order
  std::string text;                    // the whole requirements.txt
};

// `base` says where and for what; its repo_id and commit come from each
// entry (and, from an index URL, the project name: the repo's name part).
// An entry's Error is rethrown with its kind and reason, its message
// prefixed "lock entry 'ORG/NAME' (commit 0123456789ab): ".
LockPinResult pin_lock(const PinRequest& base, const std::string& lock);

// {"ok", "lock", "requirements", "kernels": [to_json(PinResult), ...]}.
nlohmann::json to_json(const LockPinResult& result);

}  // namespace kwheel
