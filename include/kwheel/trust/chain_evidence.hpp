#pragma once
// The part of `kwheel verify`'s chain every kind of item shares, once its
// files are known to be the ones RECORD lists: metadata.json against its
// signature, the files against metadata.json's digest, and the signer
// against the policy (verify_chain.hpp).
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/hub/repo_file.hpp"
#include "kwheel/trust/verify_chain.hpp"

namespace kwheel {

// One file of the item, as the digest check sees it.
struct EvidenceFile {
  std::string shown;        // how messages name it: "relu/_ops.py"
  std::string record_hash;  // "sha256=<urlsafe b64>" when RECORD already verified these bytes, else ""
  std::function<std::vector<unsigned char>(DigestAlgorithm)> digest;  // hashes the bytes
};

// What a wheel's METADATA (held to its filename) or an install's METADATA
// (held to its .dist-info) says the distribution is: what pip resolves,
// lists and imports under. Unsigned: the signed metadata.json must agree.
struct Distribution {
  std::string name;     // "acme-relu"
  std::string version;  // "1.2+torch.cpu"
};

struct Evidence {
  std::string where;                    // "wheel 'relu-1.2-py3-none-any.whl'", for the verifier's messages
  std::optional<std::string> metadata;  // metadata.json's bytes, if the item has one
  std::optional<std::string> bundle;    // metadata.json.sigstore's bytes, if any
  // The import package for a wheel or an install ("relu"), whose files are
  // keyed relative to it; empty for a variant directory, whose files are
  // keyed as metadata.json's digest keys them.
  std::string package;
  std::map<std::string, EvidenceFile> files;
  std::optional<Distribution> distribution;  // none for a variant directory
};

// A file on disk, hashed when asked.
EvidenceFile evidence_file_on_disk(std::string shown, std::filesystem::path source, std::string record_hash = "");

// Runs `body` on a fresh item; an Error it throws (an unreadable file, a
// malformed listing) fails the item as input instead of ending the run.
template <class Body>
inline ChainItem checked_item(std::string name, std::string location, Body body) {
  ChainItem item;
  item.name = std::move(name);
  item.location = std::move(location);
  try {
    body(item);
  } catch (const Error& e) {
    item.failed = ChainCheck::input;
    item.why = e.what();
  } catch (const std::filesystem::filesystem_error& e) {
    // A directory that cannot be walked (permissions): the item's fault, named, not kwheel's.
    item.failed = ChainCheck::input;
    item.why = "cannot read '" + e.path1().string() + "': " + e.code().message() + "; check its permissions";
  }
  return item;
}

// Every regular file below `dir`, relative to it, sorted. Links and other
// special files are an Error(input): verify reads what is there, not what
// a link points at.
std::vector<RepoFile> regular_files_below(const std::filesystem::path& dir);

// The top-level directory of `paths` (a wheel's members, RECORD's rows)
// that holds metadata.json, or "": where a kernel's package is.
std::string package_with_metadata(const std::vector<std::string>& paths);

// What a wheel or an install may hold, since the signature covers only the
// package's files (through metadata.json's digest): one top-level package
// holding metadata.json, and the .dist-info kwheel writes (RECORD vouches
// for that). Why `paths` (members, or RECORD's rows) hold anything else, or
// "": another top-level module or a .pth (run at Python's start), a .data
// directory, scripts, or bytecode, which no digest covers and kwheel never
// packs (Python runs a .pyc instead of the verified source). `package` is
// the one holding metadata.json; none: nothing is signed, nothing to confine.
std::string outside_the_signed_package(const std::vector<std::string>& paths, const std::string& package, const std::string& dist_info);

// Appends to `item` what passes and, at the first failure, records it
// (item.failed, item.why) and stops. A verified signature binds what it
// signs to the distribution: its name must be the package's (and so the
// end of the distribution's name), its version N the distribution's N.B.
void check_evidence(ChainItem& item, const Evidence& evidence, const ChainOptions& options);

}  // namespace kwheel
