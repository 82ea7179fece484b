#include "kwheel/sigstore/bundle.hpp"

#include <algorithm>
#include <charconv>

#include "kwheel/base/bounded_json.hpp"
#include "kwheel/base/enum_name.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/sigstore/public_key.hpp"

namespace kwheel::sigstore {

using nlohmann::json;

namespace {

// A bundle is a few KB (a certificate, a proof of ~30 hashes, a
// checkpoint); these bound a hostile one well above any real one.
constexpr JsonLimits kBundleLimits{16 << 20, 32, 200000};
constexpr size_t kMaxProofHashes = 64;  // a tree of 2^64 leaves needs 64
constexpr size_t kMaxChain = 10;
constexpr size_t kMaxParsedTimestamps = 1024;  // the verifier's own limit (32) is a check with its name

struct BundleField {
  const json& j;
  std::string where;  // "<what>'s verificationMaterial.tlogEntries[0]"

  Error error(const std::string& why) const { return Error(ErrorKind::input, where + " " + why); }
  const json* find(const char* key) const {
    if (!j.is_object()) throw error("is not a JSON object");
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  }
  BundleField at(const char* key) const {
    const json* v = find(key);
    if (!v) throw error(std::string("has no '") + key + "'");
    return {*v, where + "." + key};
  }
  std::optional<BundleField> opt(const char* key) const {
    const json* v = find(key);
    return v ? std::optional<BundleField>(BundleField{*v, where + "." + key}) : std::nullopt;
  }
  std::string str() const {
    if (!j.is_string()) throw error("is not a string");
    return j.get<std::string>();
  }
  Bytes b64() const { return decode_base64(str(), where); }
  // protobuf's JSON writes 64-bit integers as decimal strings; numbers
  // are accepted too. Negative values are malformed for every field here.
  std::uint64_t uint() const {
    if (j.is_number_unsigned()) return j.get<std::uint64_t>();
    if (j.is_number_integer()) throw error("is negative");
    const std::string s = str();
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size())
      throw error(s.starts_with('-') ? "is negative" : "is not a decimal integer");
    return v;
  }
  const json& list(size_t max) const {
    if (!j.is_array()) throw error("is not a list");
    if (j.size() > max) throw error("has more than " + std::to_string(max) + " items");
    return j;
  }
  BundleField item(size_t i) const { return {j[i], where + "[" + std::to_string(i) + "]"}; }
};

X509Ptr bundle_certificate(const BundleField& f) { return load_certificate_der(f.at("rawBytes").b64(), f.where); }

// A self-signed CA among the bundle's certificates: the bundle offering its
// own trust anchor. It is never trusted (chains are built only to the
// trusted root), but a bundle that carries one is malformed by the spec.
bool is_root_ca(X509* cert) {
  return X509_check_ca(cert) > 0 && X509_check_issued(cert, cert) == X509_V_OK;
}

BundleVersion version_of(const std::string& media, const std::string& where) {
  if (media == "application/vnd.dev.sigstore.bundle+json;version=0.1") return BundleVersion::v0_1;
  if (media == "application/vnd.dev.sigstore.bundle+json;version=0.2") return BundleVersion::v0_2;
  if (media == "application/vnd.dev.sigstore.bundle+json;version=0.3" || media == "application/vnd.dev.sigstore.bundle.v0.3+json")
    return BundleVersion::v0_3;
  throw Error(ErrorKind::input, where + " has the unsupported mediaType '" + media.substr(0, 100) + "'");
}

InclusionProof inclusion_proof(const BundleField& f) {
  InclusionProof p;
  p.log_index = f.at("logIndex").uint();
  p.root_hash = f.at("rootHash").b64();
  p.tree_size = f.at("treeSize").uint();
  if (auto hashes = f.opt("hashes"))
    for (size_t i = 0; i < hashes->list(kMaxProofHashes).size(); ++i) p.hashes.push_back(hashes->item(i).b64());
  auto cp = f.opt("checkpoint");
  if (!cp) throw f.error("has no checkpoint");
  p.checkpoint = cp->at("envelope").str();
  return p;
}

TlogEntry tlog_entry(const BundleField& f) {
  TlogEntry e;
  e.log_index = f.at("logIndex").uint();
  e.log_id = f.at("logId").at("keyId").b64();
  const BundleField kv = f.at("kindVersion");
  e.kind = kv.at("kind").str();
  e.version = kv.at("version").str();
  if (e.version != "0.0.1" && e.version != "0.0.2")
    throw kv.error("is version '" + e.version.substr(0, 32) + "'; kwheel verifies log entries of versions 0.0.1 and 0.0.2");
  if (auto t = f.opt("integratedTime"); t && t->uint() != 0) {
    if (t->uint() > static_cast<std::uint64_t>(INT64_MAX)) throw t->error("is out of range");
    e.integrated_time = static_cast<std::int64_t>(t->uint());
  }
  if (auto promise = f.opt("inclusionPromise")) e.signed_entry_timestamp = promise->at("signedEntryTimestamp").b64();
  auto proof = f.opt("inclusionProof");
  // Required by sigstore clients even where v0.1 of the spec was lax: an
  // entry without a proof is only a promise nobody can audit.
  if (!proof) throw f.error("has no inclusion proof");
  e.inclusion_proof = inclusion_proof(*proof);
  e.canonicalized_body = f.at("canonicalizedBody").b64();
  return e;
}

void signing_material(Bundle& b, const BundleField& vm) {
  if (b.version == BundleVersion::v0_3) {
    if (auto cert = vm.opt("certificate")) {
      b.certificate = bundle_certificate(*cert);
      return;
    }
  } else if (auto chain = vm.opt("x509CertificateChain")) {
    const BundleField certs = chain->at("certificates");
    const json& list = certs.list(kMaxChain);
    if (list.empty()) throw certs.error("is empty: the bundle has no signing certificate");
    b.certificate = bundle_certificate(certs.item(0));
    for (size_t i = 1; i < list.size(); ++i) b.chain.push_back(bundle_certificate(certs.item(i)));
    // A CA in the leaf's place is refused by the verifier's certificate
    // chain check, the same for every bundle version (verify_chain_at).
    for (const auto& c : b.chain)
      if (is_root_ca(c.get())) throw certs.error("holds a root certificate: a bundle must not carry its own trust anchor");
    return;
  }
  if (vm.opt("publicKey"))
    throw Error(ErrorKind::input, vm.where + " names a managed key; kwheel verifies certificate (keyless) bundles only",
                Reason::unsupported_bundle);
  throw vm.error(b.version == BundleVersion::v0_3 ? "has no certificate" : "has no x509CertificateChain");
}

// sigstore-python's Bundle._verify: what every bundle must hold.
void check_invariants(const Bundle& b, const std::string& what) {
  const auto bad = [&](const std::string& why) { return Error(ErrorKind::input, what + " " + why); };
  if (b.version == BundleVersion::v0_1) {
    if (!b.entry.signed_entry_timestamp) throw bad("is a v0.1 bundle without an inclusion promise");
  } else if (!b.entry.signed_entry_timestamp && b.timestamps.empty()) {
    throw bad("has neither an inclusion promise nor a signed timestamp: nothing establishes when it was signed");
  }
}

}  // namespace

std::string_view to_string(BundleVersion v) {
  static constexpr EnumName<BundleVersion> names[] = {{BundleVersion::v0_1, "0.1"}, {BundleVersion::v0_2, "0.2"}, {BundleVersion::v0_3, "0.3"}};
  return enum_name(v, names);
}

Bundle parse_bundle(std::string_view text, const std::string& what) {
  auto j = parse_bounded_json(text, kBundleLimits, ErrorKind::input, what, "is it a Sigstore bundle?");
  if (!j) throw Error(ErrorKind::input, what + " is not JSON; is it a Sigstore bundle?");
  const BundleField root{*j, what};
  Bundle b;
  b.media_type = root.at("mediaType").str();
  b.version = version_of(b.media_type, what);
  const BundleField vm = root.at("verificationMaterial");
  signing_material(b, vm);
  const BundleField entries = vm.at("tlogEntries");
  if (entries.list(16).size() != 1) throw entries.error("holds " + std::to_string(entries.j.size()) + " log entries; a bundle has exactly one");
  b.entry = tlog_entry(entries.item(0));
  if (auto tvd = vm.opt("timestampVerificationData"))
    if (auto ts = tvd->opt("rfc3161Timestamps"))
      for (size_t i = 0; i < ts->list(kMaxParsedTimestamps).size(); ++i) b.timestamps.push_back(ts->item(i).at("signedTimestamp").b64());
  if (auto ms = root.opt("messageSignature")) {
    MessageSignature m;
    m.signature = ms->at("signature").b64();
    if (auto md = ms->opt("messageDigest")) {
      const std::string alg = md->at("algorithm").str();
      if (alg != "SHA2_256") throw md->error("uses '" + alg.substr(0, 32) + "'; kwheel verifies SHA2_256 digests");
      m.sha256 = md->at("digest").b64();
    }
    b.message_signature = std::move(m);
  } else if (root.opt("dsseEnvelope")) {
    b.dsse = true;
  } else {
    throw root.error("has neither a messageSignature nor a dsseEnvelope");
  }
  check_invariants(b, what);
  return b;
}

}  // namespace kwheel::sigstore
