#include "kwheel/trust/chain_evidence.hpp"

#include <algorithm>

#include "kwheel/base/error.hpp"
#include "kwheel/kernel/kernel_digest.hpp"
#include "kwheel/kernel/kernel_layout.hpp"
#include "kwheel/kernel/kernel_metadata.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/sigstore/verifier.hpp"

namespace kwheel {

namespace {

// The digest keys paths relative to the variant; a wheel's package holds
// them as kernel_layout packed them. A flat variant's files are the
// package's own, keyed alike; a nested variant's package is a directory of
// the variant, its files keyed under it. Some keys are never packed: a
// compat variant's <pkg>/__init__.py shim, a nested variant's files outside
// its package; those may be absent, and are checked when present.
struct DigestKeys {
  bool flat = true;
  std::string package;  // empty: the files are keyed as the digest keys them

  DigestKeys(const KernelDigest& digest, std::string pkg) : package(std::move(pkg)) {
    flat = package.empty() || digest.files.count("__init__.py");
  }
  std::string key(const std::string& path) const { return flat ? path : package + "/" + path; }
  bool packed(const std::string& key) const {
    if (package.empty()) return true;
    return flat ? key != package + "/__init__.py" : key.starts_with(package + "/");
  }
  std::string shown(const std::string& key) const {
    if (package.empty()) return key;
    return flat ? package + "/" + key : key;
  }
};

// The first file at fault, or "": every digested file there, every file
// digested, every hash equal.
std::string digest_fault(const KernelDigest& digest, const Evidence& ev) {
  const DigestKeys keys(digest, ev.package);
  std::map<std::string, const EvidenceFile*> by_key;
  for (const auto& [path, file] : ev.files)
    if (digest_covers(path)) by_key[keys.key(path)] = &file;
  for (const auto& [key, _] : digest.files)
    if (!by_key.count(key) && keys.packed(key)) return "'" + keys.shown(key) + "' is listed in metadata.json's digest but missing";
  for (const auto& [key, file] : by_key)
    if (!digest.files.count(key)) return "'" + file->shown + "' is not listed in metadata.json's digest";
  const auto algorithm = digest.algorithm == "sha512" ? DigestAlgorithm::sha512 : DigestAlgorithm::sha256;
  for (const auto& [key, file] : by_key) {
    const std::string& expected = digest.files.at(key);
    const bool same = !file->record_hash.empty() && algorithm == DigestAlgorithm::sha256
                          ? file->record_hash == as_record_hash(expected)
                          : standard_b64(file->digest(algorithm)) == expected;
    if (!same) return "'" + file->shown + "' does not match its " + digest.algorithm + " in metadata.json's digest";
  }
  return "";
}

void fail_at(ChainItem& item, ChainCheck check, std::string why) {
  item.failed = check;
  item.why = std::move(why);
}

// The signature, before metadata.json is parsed (kernels' rule: never
// parse unverified metadata). False when the item failed here.
bool check_signature(ChainItem& item, const Evidence& ev, const ChainOptions& o) {
  SignatureOptions judge = o.signatures;
  judge.require = false;  // the signer is judged last, after the digest: a broken chain outranks an unsigned one
  try {
    item.signature = check_metadata_signature(*ev.metadata, ev.bundle, judge, ev.where + ": " + kSignatureFile, o.now);
  } catch (const sigstore::VerificationError& e) {
    // A bundle kwheel cannot verify yet is not proof of forgery.
    fail_at(item, e.reason() == Reason::unsupported_bundle ? ChainCheck::input : ChainCheck::signature, e.what());
    return false;
  }
  if (item.signature->result) item.passed.push_back(ChainCheck::signature);
  return true;
}

// Why the signed name is not the distribution's, or "". kwheel packs a
// kernel named S as the package S with '_' (kernel_layout), and the package
// checked is the one the distribution's name imports (import_package.hpp):
// equal, the distribution is [prefix]S and `import` loads the signed files.
std::string name_fault(const KernelMetadata& md, const Evidence& ev) {
  if (!md.name || !ev.distribution) return "";
  if (*md.python_name() != ev.package)
    return "metadata.json is signed for the kernel '" + *md.name + "' (package '" + *md.python_name() + "/'), but it is in '" + ev.package +
           "/', the package of the distribution '" + ev.distribution->name + "'; a signature vouches only for the kernel it names";
  // Implied when the package was found from the name; not when a renamed (--name) one was taken as the only package.
  if (!normalize_name(ev.distribution->name).ends_with(normalize_name(*md.name)))
    return "metadata.json is signed for the kernel '" + *md.name + "', but the distribution is named '" + ev.distribution->name +
           "'; a signature vouches only for the kernel it names ([prefix]" + *md.name + ")";
  return "";
}

// Why the signed kernel version is not the distribution's, or "". The
// signature covers N alone: kwheel's version is N.B, B the length of the
// Hub commit's history, which nothing signed records (docs/security.md).
std::string version_fault(const KernelMetadata& md, const Evidence& ev) {
  if (!md.version || !ev.distribution) return "";
  const auto v = Version::try_parse(ev.distribution->version);
  if (v && v->epoch() == 0 && !v->release().empty() && v->release().front() == static_cast<long long>(*md.version)) return "";
  return "metadata.json is signed for kernel version " + std::to_string(*md.version) + ", but the distribution is version '" +
         ev.distribution->version + "'; a build of kernel version " + std::to_string(*md.version) + " is " + std::to_string(*md.version) +
         ".B, so this is another build sold under its version";
}

// Why no trusted signer vouches for the files, or "".
std::string trust_gap(const ChainItem& item, bool has_digest) {
  const SignatureVerdict& v = *item.signature;
  // Appended, not operator+: GCC 12 at -O2 takes the chained form for an overflow (-Warray-bounds).
  if (v.status == SignatureVerdict::Status::unsigned_) return std::string("unsigned: no ").append(kSignatureFile);
  if (!v.signed_by_trusted()) return "signed by " + sigstore::describe(v.result->signer) + ", who is not a trusted signer (--trusted-signer)";
  if (!has_digest) return "metadata.json has no digest, so its signature vouches for no file";
  return "";
}

// The name and version checks, once a signature verified (unsigned text
// binds nothing). False when the item failed here.
bool bind_signed_facts(ChainItem& item, const KernelMetadata& md, const Evidence& ev) {
  if (!ev.distribution) return true;
  if (auto why = name_fault(md, ev); !why.empty()) {
    fail_at(item, ChainCheck::name, why);
    return false;
  }
  if (md.name) item.passed.push_back(ChainCheck::name);
  if (auto why = version_fault(md, ev); !why.empty()) {
    fail_at(item, ChainCheck::version, why);
    return false;
  }
  if (md.version) item.passed.push_back(ChainCheck::version);
  return true;
}

}  // namespace

EvidenceFile evidence_file_on_disk(std::string shown, std::filesystem::path source, std::string record_hash) {
  return {std::move(shown), std::move(record_hash), [source = std::move(source)](DigestAlgorithm a) { return file_digest(source, a); }};
}

std::vector<RepoFile> regular_files_below(const std::filesystem::path& dir) {
  std::vector<RepoFile> out;
  for (auto it = std::filesystem::recursive_directory_iterator(dir); it != std::filesystem::recursive_directory_iterator(); ++it) {
    const auto rel = it->path().lexically_relative(dir).generic_string();
    if (it->is_symlink()) throw Error(ErrorKind::input, "'" + it->path().string() + "' is a symbolic link; verify checks files, not links");
    if (it->is_directory()) continue;
    if (!it->is_regular_file()) throw Error(ErrorKind::input, "'" + it->path().string() + "' is not a regular file");
    out.push_back({rel, it->path(), it->file_size(), false});
  }
  std::sort(out.begin(), out.end(), [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
  return out;
}

std::string package_with_metadata(const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    auto slash = p.find('/');
    if (slash != std::string::npos && p.substr(slash + 1) == "metadata.json" && !p.substr(0, slash).ends_with(".dist-info"))
      return p.substr(0, slash);
  }
  return "";
}

std::string outside_the_signed_package(const std::vector<std::string>& paths, const std::string& package, const std::string& dist_info) {
  if (package.empty()) return "";
  for (const auto& p : paths) {
    if (p.starts_with(dist_info + "/") || p.ends_with("/")) continue;
    if (!p.starts_with(package + "/"))
      return "'" + p + "' is outside the package '" + package + "/' that metadata.json's digest covers; kwheel writes nothing else into a wheel";
    if (is_bytecode(p)) return "'" + p + "' is bytecode, which no digest covers and kwheel never packs; Python would run it instead of the verified source";
  }
  return "";
}

void check_evidence(ChainItem& item, const Evidence& ev, const ChainOptions& o) {
  const std::string allow = "; pass --allow-unsigned to accept it";
  if (!ev.metadata) {
    // The signed file is gone and its signature stayed: a broken chain, never "unsigned".
    if (ev.bundle) return fail_at(item, ChainCheck::signature, std::string("it has ").append(kSignatureFile).append(" but no metadata.json for it to sign"));
    if (!o.allow_unsigned) fail_at(item, ChainCheck::signer, std::string("no metadata.json: nothing vouches for its files").append(allow));
    return;
  }
  if (!check_signature(item, ev, o)) return;
  KernelMetadata md;
  try {
    md = parse_kernel_metadata(*ev.metadata, ev.where);
  } catch (const Error& e) {
    return fail_at(item, ChainCheck::input, e.what());
  }
  if (md.digest) {
    if (auto why = digest_fault(*md.digest, ev); !why.empty()) return fail_at(item, ChainCheck::digest, why);
    item.passed.push_back(ChainCheck::digest);
  }
  if (item.signature->result && !bind_signed_facts(item, md, ev)) return;
  if (auto gap = trust_gap(item, md.digest.has_value()); !gap.empty() && !o.allow_unsigned) fail_at(item, ChainCheck::signer, gap.append(allow));
}

}  // namespace kwheel
