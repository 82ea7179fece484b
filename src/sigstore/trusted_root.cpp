#include "kwheel/sigstore/trusted_root.hpp"

#include <algorithm>

#include "kwheel/base/bounded_json.hpp"
#include "kwheel/base/embedded_data.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/sigstore/public_key.hpp"

namespace kwheel::sigstore {

using nlohmann::json;

namespace {

// The production root is ~10 KB with a dozen entries; these leave room
// for years of key rotation and nothing more.
constexpr JsonLimits kRootLimits{4 << 20, 16, 20000};
constexpr size_t kMaxEntries = 256;

const json& root_member(const json& j, const char* key, const std::string& what) {
  static const json kNull;
  if (!j.is_object()) throw Error(ErrorKind::input, what + " is not a JSON object");
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string root_string(const json& j, const char* key, const std::string& what) {
  const json& v = root_member(j, key, what);
  if (!v.is_string()) throw Error(ErrorKind::input, what + " has no string '" + key + "'");
  return v.get<std::string>();
}

const json& root_array(const json& j, const char* key, const std::string& what) {
  static const json kEmpty = json::array();
  const json& v = root_member(j, key, what);
  if (v.is_null()) return kEmpty;
  if (!v.is_array()) throw Error(ErrorKind::input, what + "'s '" + key + "' is not a list");
  if (v.size() > kMaxEntries) throw Error(ErrorKind::input, what + "'s '" + key + "' has more than " + std::to_string(kMaxEntries) + " entries");
  return v;
}

// No validFor at all: valid always (sigstore-python's rule). A validFor
// without its start is a malformed root: the conformance suite's
// trust-root-tlog-missing-validity-start_fail.
TimeRange time_range(const json& parent, const std::string& what) {
  const json& v = root_member(parent, "validFor", what);
  if (v.is_null()) return {};
  const json& start = root_member(v, "start", what + "'s validFor");
  if (!start.is_string()) throw Error(ErrorKind::input, what + "'s validFor has no start");
  TimeRange r{parse_rfc3339(start.get<std::string>(), what + "'s validFor.start"), std::nullopt};
  if (const json& end = root_member(v, "end", what); !end.is_null()) {
    if (!end.is_string()) throw Error(ErrorKind::input, what + "'s validFor.end is not a string");
    r.end = parse_rfc3339(end.get<std::string>(), what + "'s validFor.end");
  }
  return r;
}

// The hash a key's declared details name; nullopt for details kwheel does
// not verify with (the key is then left out, as sigstore-python does).
std::optional<const EVP_MD*> digest_for_details(const std::string& details) {
  if (details == "PKIX_ECDSA_P256_SHA_256" || details == "PKIX_RSA_PKCS1V15_2048_SHA256" ||
      details == "PKIX_RSA_PKCS1V15_3072_SHA256" || details == "PKIX_RSA_PKCS1V15_4096_SHA256")
    return EVP_sha256();
  if (details == "PKIX_ECDSA_P384_SHA_384") return EVP_sha384();
  if (details == "PKIX_ECDSA_P521_SHA_512") return EVP_sha512();
  if (details == "PKIX_ED25519") return nullptr;
  return std::nullopt;
}

std::vector<LogKey> log_keys(const json& root, const char* key, const std::string& what) {
  std::vector<LogKey> out;
  const json& list = root_array(root, key, what);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = what + "'s " + key + "[" + std::to_string(i) + "]";
    const json& pk = root_member(list[i], "publicKey", where);
    if (!pk.is_object()) throw Error(ErrorKind::input, where + " has no publicKey");
    LogKey k;
    k.base_url = root_member(list[i], "baseUrl", where).is_string() ? list[i]["baseUrl"].get<std::string>() : "";
    k.valid_for = time_range(pk, where + ".publicKey");
    if (const json& id = root_member(list[i], "logId", where); id.is_object())
      k.log_id = decode_base64(root_string(id, "keyId", where + ".logId"), where + ".logId.keyId");
    const Bytes raw = decode_base64(root_string(pk, "rawBytes", where + ".publicKey"), where + ".publicKey.rawBytes");
    const auto md = digest_for_details(root_member(pk, "keyDetails", where).is_string() ? pk["keyDetails"].get<std::string>() : "");
    if (!md) continue;
    try {
      k.key = load_spki_der(raw, where + ".publicKey");
    } catch (const Error&) {
      continue;  // PKCS#1 RSA and the like: not a key sigstore-python loads either
    }
    k.md = *md;
    k.key_id = key_id(k.key.get());
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<CertificateAuthority> authorities(const json& root, const char* key, const std::string& what) {
  std::vector<CertificateAuthority> out;
  const json& list = root_array(root, key, what);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = what + "'s " + key + "[" + std::to_string(i) + "]";
    CertificateAuthority ca;
    ca.uri = root_member(list[i], "uri", where).is_string() ? list[i]["uri"].get<std::string>() : "";
    ca.valid_for = time_range(list[i], where);
    const json& chain = root_member(list[i], "certChain", where);
    if (!chain.is_object()) throw Error(ErrorKind::input, where + " has no certChain");
    const json& certs = root_array(chain, "certificates", where + ".certChain");
    for (size_t c = 0; c < certs.size(); ++c) {
      const std::string cw = where + ".certChain.certificates[" + std::to_string(c) + "]";
      ca.chain.push_back(load_certificate_der(decode_base64(root_string(certs[c], "rawBytes", cw), cw + ".rawBytes"), cw));
    }
    if (ca.chain.empty()) throw Error(ErrorKind::input, where + " has no certificate");
    out.push_back(std::move(ca));
  }
  return out;
}

}  // namespace

TrustedRoot parse_trusted_root(std::string_view text, const std::string& what) {
  auto j = parse_bounded_json(text, kRootLimits, ErrorKind::input, what, "is it a Sigstore trusted_root.json?");
  if (!j || !j->is_object()) throw Error(ErrorKind::input, what + " is not a JSON object; is it a Sigstore trusted_root.json?");
  const std::string media = root_string(*j, "mediaType", what);
  if (media != "application/vnd.dev.sigstore.trustedroot+json;version=0.1")
    throw Error(ErrorKind::input, what + " has the unsupported mediaType '" + media + "'");
  TrustedRoot root;
  root.tlogs = log_keys(*j, "tlogs", what);
  root.ctlogs = log_keys(*j, "ctlogs", what);
  root.certificate_authorities = authorities(*j, "certificateAuthorities", what);
  root.timestamp_authorities = authorities(*j, "timestampAuthorities", what);
  if (root.tlogs.empty()) throw Error(ErrorKind::input, what + " has no usable transparency log key");
  if (root.certificate_authorities.empty()) throw Error(ErrorKind::input, what + " has no certificate authority");
  return root;
}

TrustedRoot embedded_trusted_root(bool staging) {
  const char* name = staging ? "trusted_root_staging" : "trusted_root";
  const std::string_view text = embedded_data(name);
  if (text.empty()) throw std::runtime_error(std::string("the embedded Sigstore root ") + name + " is missing");
  return parse_trusted_root(text, std::string("the embedded ") + (staging ? "staging" : "production") + " Sigstore trusted root");
}

bool verify_with_log_keys(const std::vector<LogKey>& keys, std::span<const unsigned char> log_id, std::span<const unsigned char> signature,
                          std::span<const unsigned char> data, std::span<const std::int64_t> valid_at) {
  std::vector<const LogKey*> usable;
  for (const auto& k : keys)
    if (std::ranges::all_of(valid_at, [&](std::int64_t t) { return k.valid_for.contains(t); })) usable.push_back(&k);
  std::vector<const LogKey*> named;
  for (const LogKey* k : usable)
    if (std::ranges::equal(k->key_id, log_id)) named.push_back(k);
  // The log ID is an unauthenticated hint: with no key of that ID, every
  // key is a candidate (a forged ID still needs a valid signature).
  const auto& candidates = named.empty() ? usable : named;
  return std::ranges::any_of(candidates, [&](const LogKey* k) { return verify_message(k->key.get(), k->md, signature, data); });
}

}  // namespace kwheel::sigstore
