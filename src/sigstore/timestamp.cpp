#include "kwheel/sigstore/timestamp.hpp"

#include <algorithm>

#include "kwheel/base/error.hpp"

namespace kwheel::sigstore {

namespace {

TsRespPtr decode_response(std::span<const unsigned char> der) {
  const unsigned char* p = der.data();
  TsRespPtr resp(d2i_TS_RESP(nullptr, &p, static_cast<long>(der.size())));
  if (!resp || p != der.data() + der.size() || !TS_RESP_get_tst_info(resp.get())) {
    openssl_error();
    throw Error(ErrorKind::input, "a signed timestamp is not a DER RFC 3161 response with a token");
  }
  return resp;
}

std::int64_t gen_time_of(TS_RESP* resp) {
  const ASN1_GENERALIZEDTIME* t = TS_TST_INFO_get_time(TS_RESP_get_tst_info(resp));
  std::tm tm{};
  if (!t || ASN1_TIME_to_tm(t, &tm) != 1) throw Error(ErrorKind::input, "a signed timestamp has a malformed genTime");
  return static_cast<std::int64_t>(timegm(&tm));
}

// One TSA's verdict on one response: the token's signature by the signing
// certificate the trusted root lists for this TSA (its chain's first
// certificate), that certificate's chain to the TSA's root at genTime, and
// the message imprint over `signature`. A token signed by another
// certificate under the same root (one the TSA rotated out, or any other the
// root's owner issued) is not this authority's word: sigstore-python hands
// rfc3161-client the listed certificate as the one TSA certificate, and
// OpenSSL alone would accept any signer that chains to the root (issue 38,
// defect 6).
bool tsa_signed(TS_RESP* resp, const CertificateAuthority& tsa, std::span<const unsigned char> signature, std::int64_t gen_time) {
  X509StorePtr store(X509_STORE_new());
  X509StackPtr certs(sk_X509_new_null());
  if (!store || !certs) throw std::runtime_error("OpenSSL: cannot set up a timestamp verification");
  X509_STORE_add_cert(store.get(), tsa.chain.back().get());
  X509_VERIFY_PARAM_set_time(X509_STORE_get0_param(store.get()), static_cast<time_t>(gen_time));
  // The listed signing certificate and intermediates, for a token that does
  // not embed them.
  for (size_t i = 0; i + 1 < tsa.chain.size(); ++i) {
    X509Ptr c = share(tsa.chain[i].get());
    if (sk_X509_push(certs.get(), c.get()) > 0) c.release();
  }
  X509* signer_out = nullptr;
  const bool chained = TS_RESP_verify_signature(TS_RESP_get_token(resp), certs.get(), store.get(), &signer_out) == 1;
  const X509Ptr signer(signer_out);  // TS_RESP_verify_signature hands back a reference of its own
  openssl_error();
  if (!chained || !signer || X509_cmp(signer.get(), tsa.chain.front().get()) != 0) return false;
  // The rest of RFC 3161's checks on the signed token: its version and that
  // it stamps these bytes.
  TsVerifyCtxPtr ctx(TS_VERIFY_CTX_new());
  BioPtr data(BIO_new_mem_buf(signature.data(), static_cast<int>(signature.size())));
  if (!ctx || !data) throw std::runtime_error("OpenSSL: cannot set up a timestamp verification");
  // OpenSSL 3.0's TS_VERIFY_CTX_set_* take ownership (freed with the context).
  TS_VERIFY_CTX_set_flags(ctx.get(), TS_VFY_VERSION | TS_VFY_DATA);
  TS_VERIFY_CTX_set_data(ctx.get(), data.release());
  const bool ok = TS_RESP_verify_response(ctx.get(), resp) == 1;
  openssl_error();
  return ok;
}

}  // namespace

std::int64_t timestamp_gen_time(std::span<const unsigned char> response) { return gen_time_of(decode_response(response).get()); }

std::vector<std::int64_t> verify_timestamps(const std::vector<Bytes>& responses, std::span<const unsigned char> signature,
                                            const TrustedRoot& root, std::int64_t now) {
  if (responses.size() > kMaxTimestamps)
    throw Error(ErrorKind::input, "the bundle carries " + std::to_string(responses.size()) + " signed timestamps, more than " +
                                      std::to_string(kMaxTimestamps));
  for (size_t i = 0; i < responses.size(); ++i)
    if (std::find(responses.begin() + static_cast<std::ptrdiff_t>(i) + 1, responses.end(), responses[i]) != responses.end())
      throw Error(ErrorKind::input, "the bundle carries the same signed timestamp twice");
  std::vector<std::int64_t> times;
  for (const auto& der : responses) {
    TsRespPtr resp = decode_response(der);
    const std::int64_t gen_time = gen_time_of(resp.get());
    for (const auto& tsa : root.timestamp_authorities) {
      // A TSA not yet valid now is not one to trust (sigstore-python);
      // one without its root and signing certificate cannot be checked.
      if (tsa.valid_for.start > now || tsa.chain.size() < 2) continue;
      if (tsa_signed(resp.get(), tsa, signature, gen_time) && tsa.valid_for.contains(gen_time)) {
        times.push_back(gen_time);
        break;
      }
    }
  }
  return times;
}

}  // namespace kwheel::sigstore
