#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/sigstore/codec.hpp"
#include "kwheel/sigstore/verifier.hpp"

namespace kwheel::cli {

namespace {

namespace fs = std::filesystem;
using namespace kwheel::sigstore;

struct VerifyArgs {
  std::string bundle;
  std::string identity;
  std::string issuer;
  std::string key;
  std::string trusted_root;
  bool staging = false;
  std::string artifact;
};

// Bundles and roots are small; a larger file is refused before it is read.
constexpr std::uintmax_t kMaxInputFile = 16 << 20;

// The conformance protocol's FILE_OR_DIGEST: "sha256:" and 64 hex digits
// that is not a path on disk is a digest; anything else is a file.
Bytes artifact_digest(const std::string& arg) {
  std::error_code ec;
  const bool digest_shaped = arg.size() == 71 && arg.starts_with("sha256:") &&
                             arg.find_first_not_of("0123456789abcdefABCDEF", 7) == std::string::npos;
  if (digest_shaped && !fs::exists(arg, ec)) {
    Bytes d;
    for (size_t i = 7; i < arg.size(); i += 2) d.push_back(static_cast<unsigned char>(std::stoi(arg.substr(i, 2), nullptr, 16)));
    return d;
  }
  if (!fs::is_regular_file(arg, ec)) throw Error(ErrorKind::not_found, "the artifact '" + arg + "' is not a file (nor a sha256:<hex> digest)");
  return file_digest(arg, DigestAlgorithm::sha256);
}


}  // namespace

void register_verify(CLI::App& app, Output& out, int& exit_code) {
  auto args = std::make_shared<VerifyArgs>();
  auto* sub = app.add_subcommand("verify",
                                 "Verify a Sigstore bundle over a file or a sha256: digest, offline (sigstore-conformance's verify-bundle); "
                                 "exit 0 only when it verifies, 3 when it does not");
  sub->add_option("--bundle", args->bundle, "The Sigstore bundle (bundle.sigstore.json)")->required();
  auto* identity = sub->add_option("--certificate-identity", args->identity, "The signer identity the certificate must name (SAN: URI or email)");
  auto* issuer = sub->add_option("--certificate-oidc-issuer", args->issuer, "The OIDC issuer the certificate must name");
  auto* key = sub->add_option("--key", args->key, "A PEM public key to verify with instead of a certificate identity (not supported yet)");
  identity->needs(issuer);
  issuer->needs(identity);
  key->excludes(identity)->excludes(issuer);
  sub->add_option("--trusted-root", args->trusted_root, "A Sigstore trusted_root.json to use instead of the embedded public-good root");
  sub->add_flag("--staging", args->staging, "Trust Sigstore's staging instance instead of production");
  // Later modes (a variant directory, a wheel, an installed package) come
  // as further options beside this positional.
  sub->add_option("artifact", args->artifact, "The signed file, or sha256:<64 hex> (when no such file exists)")->required();
  add_output_flags(sub, out);
  sub->callback([args, &out, &exit_code] {
    if (args->key.empty() && args->identity.empty())
      throw Error(ErrorKind::usage, "verify needs --certificate-identity and --certificate-oidc-issuer (or --key)");
    if (!args->key.empty())
      throw Error(ErrorKind::input, "verify: --key (managed keys) is not supported yet; verify keyless bundles with --certificate-identity",
                  Reason::unsupported_bundle);
    const TrustedRoot root = args->trusted_root.empty()
                                 ? embedded_trusted_root(args->staging)
                                 : parse_trusted_root(read_small_file(args->trusted_root, kMaxInputFile, "the trusted root"), "the trusted root '" + args->trusted_root + "'");
    const Bytes digest = artifact_digest(args->artifact);
    const std::string text = read_small_file(args->bundle, kMaxInputFile, "the bundle");
    const std::string what = fs::path(args->bundle).filename().string();
    const SignerPolicy signer = SignerPolicy::identity(args->identity, args->issuer);
    const VerificationResult r =
        verify_bundle_text(text, digest, &signer, root, what, static_cast<std::int64_t>(std::time(nullptr)));
    if (out.json) {
      out.emit_json(to_json(r));
    } else if (!out.quiet) {
      std::cout << "verified: " << args->artifact << " signed by " << r.identity << " (" << r.issuer << "), log index " << r.log_index
                << ", at " << format_rfc3339(r.established_time) << "\n";
    }
    exit_code = 0;
  });
}

}  // namespace kwheel::cli
