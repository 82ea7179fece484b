#pragma once
// `kwheel verify`: the chain of evidence a kernel carries, re-checked where
// its files are now. A wheel and an installed package carry metadata.json
// and metadata.json.sigstore inside their package, so the chain is
//   the files against RECORD (wheels, installs),
//   metadata.json against its signature, by a signer the policy trusts,
//   the files against metadata.json's digest (every digested file there,
//   every file digested),
// and a variant directory or repo checkout has the same chain without RECORD.
// One item per variant, wheel or installed distribution; each says which
// checks passed and, when one failed, which and why, naming the file.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kwheel/kernel/kernel_signature.hpp"

namespace kwheel {

class WheelArchive;  // wheel/wheel_reader.hpp

// The links of the chain, and the two ways an item fails outside them.
enum class ChainCheck {
  input,      // the item cannot be read as what it claims to be (not a wheel, bad metadata.json, no package its name imports)
  record,     // a file against RECORD, and the package directory's files against RECORD's rows
  package,    // the one package directory `import` loads for the distribution's name, nothing beside it (import_package.hpp)
  signature,  // metadata.json.sigstore against metadata.json and the trusted root
  digest,     // a file against metadata.json's digest
  name,       // the signed name against the package and the distribution's name
  version,    // the signed kernel version N against the distribution's version (N.B)
  signer,     // the chain holds, but no trusted signer vouches for it (unsigned, untrusted, no digest)
};
const char* check_name(ChainCheck check);

struct ChainOptions {
  SignatureOptions signatures;  // --trusted-signer, --trusted-root; `require` is not used: allow_unsigned decides
  bool allow_unsigned = false;  // --allow-unsigned: an item no trusted signer vouches for passes (a broken chain never does)
  std::int64_t now = 0;         // wall-clock seconds, for certificate validity
  // The caller already held a wheel's members to its RECORD (kwheel index
  // does when a wheel joins the site, and its sha256 on every run since):
  // hashing every member again would only repeat that.
  bool record_verified = false;
};

struct ChainItem {
  std::string name;      // "relu 1.2+torch.cpu" (wheel, install) or the variant directory's name
  std::string location;  // the wheel, the variant directory, or the installed package's directory
  std::string package;   // wheels, installs: the import package checked, once found ("relu")
  std::vector<ChainCheck> passed;     // in the order checked
  std::optional<SignatureVerdict> signature;  // once the bundle (or its absence) was judged
  std::optional<ChainCheck> failed;   // the check that failed; none: the item passed
  std::string why;                    // for people, naming the file at fault

  bool ok() const { return !failed; }
  nlohmann::json to_json() const;
  // "OK    relu 1.2 (site-packages/relu): RECORD, signed by ..., digest" or
  // "FAIL  relu 1.2 (...): digest: 'relu/_ops.py' does not match ...".
  std::string describe() const;
};

// A variant directory (metadata.json at its top): one item.
ChainItem verify_variant_dir(const std::filesystem::path& dir, const ChainOptions& options);
// A repo checkout (build/<variant>/...): one item per variant.
std::vector<ChainItem> verify_checkout(const std::filesystem::path& dir, const ChainOptions& options);
// A .whl file: one item.
ChainItem verify_wheel(const std::filesystem::path& wheel, const ChainOptions& options);
// The same for a wheel already open (kwheel index reads each wheel once,
// from memory: opening it again by its path read it twice).
ChainItem verify_wheel(const WheelArchive& wheel, const ChainOptions& options);
// An installed distribution: verify_installed.hpp.

// What the argument is, decided by its shape: with `name`, a site-packages
// directory; else a .whl file, a directory of .whl files, a repo checkout
// (a build/ directory), or a variant directory (metadata.json at its top).
// Error(not_found / input) naming the path when it is none of these.
std::vector<ChainItem> verify_target(const std::filesystem::path& target, const std::optional<std::string>& name, const ChainOptions& options);

// The exit code for these items (src/main.cpp's table): 0 when every item
// passed; else 8 when a chain is broken (record, package, signature,
// digest, name, version), else
// 3 when an item could not be read, else 9 (a signer policy refused one).
int chain_exit_code(const std::vector<ChainItem>& items);

}  // namespace kwheel
