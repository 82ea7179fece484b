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
#include "kwheel/trust/verify_installed.hpp"

namespace kwheel::cli {

namespace {

namespace fs = std::filesystem;
using namespace kwheel::sigstore;

struct VerifyArgs {
  // sigstore-conformance's protocol: one bundle over one file or digest.
  std::string bundle;
  std::string identity;
  std::string issuer;
  std::string key;
  bool staging = false;
  // The chain of a kernel's files (verify_chain.hpp).
  SignatureArgs signers;
  bool allow_unsigned = false;
  std::string python;
  std::string artifact;  // the protocol's FILE_OR_DIGEST; a chain's target; with --python, NAME
  std::string name;      // with a site-packages target: the distribution
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


// The protocol mode, exactly as sigstore-conformance drives it.
void verify_bundle(const VerifyArgs& a, const Output& out) {
  // The protocol names its one signer; a policy or a chain option here would be silently ignored.
  if (!a.signers.signers.empty() || a.allow_unsigned || !a.python.empty() || !a.name.empty())
    throw Error(ErrorKind::usage, "verify --bundle takes one artifact and --certificate-identity/--certificate-oidc-issuer; "
                                  "--trusted-signer, --allow-unsigned, --python and NAME belong to verifying a kernel (without --bundle)");
  if (a.key.empty() && a.identity.empty())
    throw Error(ErrorKind::usage, "verify --bundle needs --certificate-identity and --certificate-oidc-issuer (or --key)");
  if (!a.key.empty())
    throw Error(ErrorKind::input, "verify: --key (managed keys) is not supported yet; verify keyless bundles with --certificate-identity",
                Reason::unsupported_bundle);
  const std::string& trusted_root = a.signers.trusted_root;
  if (a.staging && !trusted_root.empty())
    throw Error(ErrorKind::usage, "--staging and --trusted-root each choose the trusted root; pass one of them");
  const TrustedRoot root = trusted_root.empty()
                               ? embedded_trusted_root(a.staging)
                               : parse_trusted_root(read_small_file(trusted_root, kMaxInputFile, "the trusted root"), "the trusted root '" + trusted_root + "'");
  const Bytes digest = artifact_digest(a.artifact);
  const std::string text = read_small_file(a.bundle, kMaxInputFile, "the bundle");
  const std::string what = fs::path(a.bundle).filename().string();
  const SignerPolicy signer = SignerPolicy::identity(a.identity, a.issuer);
  const VerificationResult r = verify_bundle_text(text, digest, &signer, root, what, static_cast<std::int64_t>(std::time(nullptr)));
  if (out.json) {
    out.emit_json(to_json(r));
  } else if (!out.quiet) {
    std::cout << "verified: " << a.artifact << " signed by " << r.identity << " (" << r.issuer << "), log index " << r.log_index << ", at "
              << format_rfc3339(r.established_time) << "\n";
  }
}

// A kernel's chain of evidence, one item per variant, wheel or install.
int verify_chain(const VerifyArgs& a, const Output& out) {
  if (!a.identity.empty() || !a.key.empty())
    throw Error(ErrorKind::usage, "--certificate-identity, --certificate-oidc-issuer and --key belong to verify --bundle");
  ChainOptions o;
  if (a.staging && !a.signers.trusted_root.empty())
    throw Error(ErrorKind::usage, "--staging and --trusted-root each choose the trusted root; pass one of them");
  o.signatures = signature_options(a.signers);
  if (a.staging)
    o.signatures.trusted_root = std::make_shared<const TrustedRoot>(embedded_trusted_root(true));
  o.allow_unsigned = a.allow_unsigned;
  o.now = static_cast<std::int64_t>(std::time(nullptr));
  std::vector<ChainItem> items;
  if (!a.python.empty()) {
    if (!a.name.empty()) throw Error(ErrorKind::usage, "verify --python PY takes one NAME, not a path and a NAME");
    items.push_back(verify_installed_for(a.python, a.artifact, o));
  } else {
    items = verify_target(a.artifact, a.name.empty() ? std::nullopt : std::optional(a.name), o);
  }
  const int code = chain_exit_code(items);
  if (out.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& i : items) list.push_back(i.to_json());
    out.emit_json({{"ok", code == 0}, {"exit_code", code}, {"items", list}});
  } else {
    for (const auto& i : items)
      if (!out.quiet) std::cout << i.describe() << "\n";
      else if (!i.ok()) out.error(i.describe());  // -q: only what does not hold, on stderr
  }
  return code;
}

}  // namespace

void register_verify(CLI::App& app, Output& out, int& exit_code) {
  auto args = std::make_shared<VerifyArgs>();
  auto* sub = app.add_subcommand(
      "verify",
      "Verify a kernel's chain of evidence, offline: a variant directory, a repo checkout, a wheel, a directory of wheels, "
      "an installed package (SITE_PACKAGES NAME, or --python PY NAME). Each item's files against RECORD (wheels, installs) and "
      "metadata.json's digest, and metadata.json against metadata.json.sigstore by a trusted signer; for wheels and installs, the files "
      "checked are the package the distribution's name imports (not what RECORD lists), and the signed name and version must be the "
      "distribution's; one line per item. "
      "Exit 0 when every item holds; 8 when a chain is broken (RECORD, package, digest, signature, name, version), 3 when an item cannot be read, "
      "9 when no trusted signer vouches for one (unsigned, an untrusted signer, no digest) and --allow-unsigned is not given. "
      "With --bundle: verify one Sigstore bundle over a file or a sha256: digest (sigstore-conformance's verify-bundle; exit 3 when it does not verify)");
  sub->add_option("--bundle", args->bundle, "The Sigstore bundle (bundle.sigstore.json): verify it alone, over the artifact")->type_name("FILE");
  auto* identity = sub->add_option("--certificate-identity", args->identity, "With --bundle: the signer identity the certificate must name (SAN: URI or email)")->type_name("ID");
  auto* issuer = sub->add_option("--certificate-oidc-issuer", args->issuer, "With --bundle: the OIDC issuer the certificate must name")->type_name("URL");
  auto* key = sub->add_option("--key", args->key, "With --bundle: a PEM public key to verify with instead of a certificate identity (not supported yet)")->type_name("FILE");
  identity->needs(issuer);
  issuer->needs(identity);
  key->excludes(identity)->excludes(issuer);
  add_signature_flags(sub, args->signers, false);
  sub->add_flag("--staging", args->staging, "Trust Sigstore's staging instance instead of production");
  sub->add_flag("--allow-unsigned", args->allow_unsigned,
                "Pass items no trusted signer vouches for (unsigned, signed by someone else, no digest); a broken chain still fails");
  sub->add_option("--python", args->python, "Verify NAME as installed for this Python interpreter")->type_name("PYTHON");
  sub->add_option("artifact", args->artifact,
                  "What to verify: a variant directory, a repo checkout, a .whl, a directory of wheels, or a site-packages directory "
                  "(then NAME); with --python, NAME; with --bundle, the signed file or sha256:<64 hex>")->type_name("PATH")
      ->required();
  sub->add_option("name", args->name, "The installed distribution, after a site-packages directory")->type_name("NAME");
  add_output_flags(sub, out);
  add_examples(sub, {"kwheel verify dist                                  # every wheel: RECORD, digest, signature",
                     "kwheel verify --python /opt/venv/bin/python img2gray  # an install, as it is now",
                     "kwheel verify --bundle metadata.json.sigstore --certificate-identity ID --certificate-oidc-issuer URL metadata.json"});
  sub->callback([args, &out, &exit_code] {
    if (!args->bundle.empty()) {
      verify_bundle(*args, out);
      exit_code = 0;
    } else {
      exit_code = verify_chain(*args, out);
    }
  });
}

}  // namespace kwheel::cli
