#pragma once
// Errors are exceptions that carry one user-facing line: what failed, on
// which input, and what to do. The CLI prints what() verbatim and maps the
// kind to a documented exit code.
#include <stdexcept>
#include <string>

#include "kwheel/base/secret.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {

enum class ErrorKind {
  usage = 2,      // bad command line or option value
  input = 3,      // a repo, variant, wheel or file the user gave is malformed
  network = 4,    // Hub / index unreachable, HTTP errors, retries exhausted
  not_found = 5,  // repo, revision, version or file does not exist
  auth = 6,       // 401/403, gated repo, bad index credentials
  io = 7,         // local filesystem failure (disk full, permissions)
  validation = 8, // a wheel failed `kwheel validate`
  policy = 9,     // a policy refuses it: ELF evidence against the platform tag, an untrusted publisher
  untested = 10,  // `kwheel validate` ran no wheel: every one was SKIP (no fitting torch, no GPU), without --allow-skip
};

// What exactly went wrong, for callers that decide on it (fall back to
// another repo type, list what exists, ...). The message is for people;
// code never parses it.
enum class Reason {
  unspecified,
  repo_not_found,      // the Hub says RepoNotFound (or 401 without a code)
  revision_not_found,  // a branch, tag, commit or version that is not there
  entry_not_found,     // a path that is not in the repo at that commit
  untrusted_publisher, // the Hub does not mark the repo's org trustedKernelPublisher, and no opt-in covers it
  unsupported_bundle,  // a Sigstore bundle kwheel does not verify yet (a DSSE envelope, a managed key): not proof of forgery
};

class Error : public std::runtime_error {
 public:
  // Messages quote names from repos, wheels and servers; printable() keeps
  // what() one line of valid UTF-8 whatever those hold (a NUL would even
  // cut the C string what() returns). Messages quote URLs and server
  // answers too, which may carry a token in any encoding: registered secrets
  // are redacted here, once for every error.
  Error(ErrorKind kind, const std::string& message, Reason reason = Reason::unspecified)
      : std::runtime_error(printable(redact_secrets(message))), kind_(kind), reason_(reason) {}
  ErrorKind kind() const noexcept { return kind_; }
  Reason reason() const noexcept { return reason_; }
  int exit_code() const noexcept { return static_cast<int>(kind_); }

 private:
  ErrorKind kind_;
  Reason reason_;
};

}  // namespace kwheel
