#pragma once
// The sigstore-conformance suite's bundle-verify cases (tests/data/
// sigstore-conformance, SOURCE.md) as the unit tests read them, and the
// defaults its client uses.
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "kwheel/base/digest.hpp"
#include "kwheel/sigstore/codec.hpp"
#include "kwheel/sigstore/trusted_root.hpp"
#include "kwheel/sigstore/verifier.hpp"

namespace kwheel::testing::sigstore_fixtures {

inline const std::filesystem::path kCases = std::filesystem::path(KWHEEL_TEST_DATA) / "sigstore-conformance" / "bundle-verify";
inline const std::string kIdentity =
    "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/"
    "extremely-dangerous-oidc-beacon.yml@refs/heads/main";
inline const std::string kIssuer = "https://token.actions.githubusercontent.com";

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string bundle_text(const std::string& name) { return read_text(kCases / name / "bundle.sigstore.json"); }
inline nlohmann::json bundle_json(const std::string& name) { return nlohmann::json::parse(bundle_text(name)); }

// The case's own trusted root, else the embedded production one.
inline sigstore::TrustedRoot root_for(const std::string& name) {
  const auto custom = kCases / name / "trusted_root.json";
  if (std::filesystem::exists(custom)) return sigstore::parse_trusted_root(read_text(custom), custom.filename().string());
  return sigstore::embedded_trusted_root(false);
}

inline sigstore::Bytes artifact_digest() { return sigstore::sha256(read_text(kCases / "a.txt")); }

inline std::int64_t now() { return static_cast<std::int64_t>(std::time(nullptr)); }

// Verifies `text` as case `name`'s bundle over a.txt with the defaults.
inline sigstore::VerificationResult verify_as(const std::string& name, const std::string& text) {
  const sigstore::SignerPolicy expected = sigstore::SignerPolicy::identity(kIdentity, kIssuer);
  return sigstore::verify_bundle_text(text, artifact_digest(), &expected, root_for(name), "bundle.sigstore.json", now());
}

// The check that refuses `text` (as case `name`'s bundle), or nullopt.
inline std::optional<sigstore::Check> refused_by(const std::string& name, const std::string& text, std::string* message = nullptr) {
  try {
    verify_as(name, text);
  } catch (const sigstore::VerificationError& e) {
    if (message) *message = e.what();
    return e.check();
  }
  return std::nullopt;
}

// `b64` with one bit of its decoded byte `at` flipped, re-encoded.
inline std::string flip_b64(const std::string& b64, size_t at = 0) {
  sigstore::Bytes raw = sigstore::decode_base64(b64, "fixture");
  raw.at(at) ^= 0x01;
  return kwheel::standard_b64(raw);
}

}  // namespace kwheel::testing::sigstore_fixtures
