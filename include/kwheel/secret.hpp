#pragma once
// A token or password. It has no operator<< and no implicit conversion, so
// it cannot end up in a log line, an error message or a JSON report by
// accident; the only way out is reveal(), used where a request is built.
#include <string>

namespace kwheel {

class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}
  bool empty() const { return value_.empty(); }
  const std::string& reveal() const { return value_; }
  // Removes every occurrence of the secret from `text` (for third-party
  // messages, e.g. a server echoing a header back).
  std::string redact(std::string text) const;

 private:
  std::string value_;
};

}  // namespace kwheel
