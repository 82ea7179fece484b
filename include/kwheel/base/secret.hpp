#pragma once
// A token or password. It has no operator<< and no implicit conversion, so
// it cannot end up in a log line, an error message or a JSON report by
// accident; the only way out is reveal(), used where a request is built.
//
// Servers and URLs hand secrets back in other shapes than the one we hold
// (percent-encoded in a redirect target, base64 inside "Authorization:
// Basic" echoed in an error page, JSON- or \x-escaped): redaction matches
// every one of those, not just the literal bytes.
#include <string>

#include "kwheel/base/filter_streambuf.hpp"

namespace kwheel {

class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}
  bool empty() const { return value_.empty(); }
  const std::string& reveal() const { return value_; }
  // Replaces every occurrence of the secret, in any of the encodings above,
  // with "***" (for third-party messages, e.g. a server echoing a header),
  // after every registered secret (redact_secrets).
  std::string redact(std::string text) const;

 private:
  std::string value_;
};

// Process-wide: secrets kwheel sends (HttpClient registers its token, and
// the exact "Authorization: Basic" credential it builds) are scrubbed from
// every kwheel::Error and, through RedactingStreambuf, from everything the
// CLI prints. Registering the same value twice is harmless.
void register_secret(const Secret& secret);
// `form` is matched as it is (and percent/JSON/\x-escaped), never decoded:
// for values built from a secret, such as base64("user:password").
void register_secret_form(const std::string& form);
// `text` with every registered secret, in every encoding, replaced by "***".
std::string redact_secrets(std::string text);

// Passes text on to `target` a line at a time, registered secrets redacted.
// A partial line waits for its newline (or the destructor), so a secret
// written in two pieces is still seen whole.
class RedactingStreambuf : public FilterStreambuf {
 public:
  explicit RedactingStreambuf(std::streambuf* target);
};

}  // namespace kwheel
