#include "cli.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/digest.hpp"
#include "kwheel/sigstore/trusted_root.hpp"

namespace kwheel::cli {

namespace {

// Sigstore trusted roots are a few KiB to a few hundred; see read_small_file.
constexpr uint64_t kMaxTrustedRootBytes = 16 << 20;

}  // namespace

void add_signature_flags(CLI::App* sub, SignatureArgs& a, bool with_require) {
  if (with_require)
    sub->add_flag("--require-signature", a.require,
                  "Refuse a variant whose metadata.json is not signed (metadata.json.sigstore) by a trusted signer; without it such a variant is built with a warning");
  sub->add_option("--trusted-signer", a.signers,
                  "Trust this signer beside kernels' defaults: a GitHub workflow (https://github.com/ORG/REPO/.github/workflows/FILE@refs/heads/BRANCH) "
                  "or issuer=URL,identity=ID (repeatable)")->type_name("SIGNER");
  sub->add_option("--trusted-root", a.trusted_root,
                  "Sigstore trusted root (trusted_root.json) to verify signatures with, e.g. a company's own Sigstore (default: Sigstore's production root, built in)")->type_name("FILE");
}

SignatureOptions signature_options(const SignatureArgs& a) {
  SignatureOptions s;
  for (const auto& spec : a.signers) s.signers.add(spec);
  if (!a.trusted_root.empty()) {
    const std::string root = read_small_file(a.trusted_root, kMaxTrustedRootBytes, "--trusted-root");
    s.trusted_root = std::make_shared<const sigstore::TrustedRoot>(sigstore::parse_trusted_root(root, "--trusted-root '" + a.trusted_root + "'"));
    s.trusted_root_sha256 = sha256_hex(root);
  }
  s.require = a.require;
  return s;
}

}  // namespace kwheel::cli
