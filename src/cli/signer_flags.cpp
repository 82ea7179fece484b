#include "cli.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/sigstore/trusted_root.hpp"

namespace kwheel::cli {

namespace {
// Sigstore roots are small; see read_small_file.
constexpr uint64_t kMaxTrustedRootBytes = 16 << 20;
}  // namespace

void add_signer_flags(CLI::App* sub, SignerFlags& flags) {
  sub->add_option("--trusted-signer", flags.trusted_signers,
                  "Trust this signer beside kernels' defaults: a GitHub workflow (https://github.com/ORG/REPO/.github/workflows/FILE@refs/heads/BRANCH) "
                  "or issuer=URL,identity=ID (repeatable)");
  sub->add_option("--trusted-root", flags.trusted_root,
                  "Sigstore trusted root (trusted_root.json) to verify signatures with, e.g. a company's own Sigstore (default: Sigstore's production root, built in)");
}

SignatureOptions signature_options(const SignerFlags& flags) {
  SignatureOptions s;
  for (const auto& spec : flags.trusted_signers) s.signers.add(spec);
  if (!flags.trusted_root.empty())
    s.trusted_root = std::make_shared<const sigstore::TrustedRoot>(sigstore::parse_trusted_root(
        read_small_file(flags.trusted_root, kMaxTrustedRootBytes, "--trusted-root"), "--trusted-root '" + flags.trusted_root + "'"));
  return s;
}

}  // namespace kwheel::cli
