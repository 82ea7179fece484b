#pragma once
// Every OpenSSL object the Sigstore verifier holds lives in a unique_ptr
// with the matching free function (as base/digest holds its EVP_MD_CTX), so
// an early throw on hostile input leaks nothing and no code calls a *_free
// by hand.
#include <openssl/bio.h>
#include <openssl/ct.h>
#include <openssl/evp.h>
#include <openssl/ts.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <memory>

namespace kwheel::sigstore {

template <class T, void (*Free)(T*)>
struct OpensslFree {
  void operator()(T* p) const noexcept { Free(p); }
};

using X509Ptr = std::unique_ptr<X509, OpensslFree<X509, X509_free>>;
using X509StorePtr = std::unique_ptr<X509_STORE, OpensslFree<X509_STORE, X509_STORE_free>>;
using X509StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, OpensslFree<X509_STORE_CTX, X509_STORE_CTX_free>>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpensslFree<EVP_PKEY, EVP_PKEY_free>>;
using EvpPkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, OpensslFree<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using EvpMdCtxPtr = std::unique_ptr<EVP_MD_CTX, OpensslFree<EVP_MD_CTX, EVP_MD_CTX_free>>;
using BioPtr = std::unique_ptr<BIO, OpensslFree<BIO, BIO_free_all>>;
using TsRespPtr = std::unique_ptr<TS_RESP, OpensslFree<TS_RESP, TS_RESP_free>>;
using TsVerifyCtxPtr = std::unique_ptr<TS_VERIFY_CTX, OpensslFree<TS_VERIFY_CTX, TS_VERIFY_CTX_free>>;
using CtlogStorePtr = std::unique_ptr<CTLOG_STORE, OpensslFree<CTLOG_STORE, CTLOG_STORE_free>>;
using CtPolicyCtxPtr = std::unique_ptr<CT_POLICY_EVAL_CTX, OpensslFree<CT_POLICY_EVAL_CTX, CT_POLICY_EVAL_CTX_free>>;
using Asn1TimePtr = std::unique_ptr<ASN1_TIME, OpensslFree<ASN1_TIME, ASN1_TIME_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, OpensslFree<GENERAL_NAMES, GENERAL_NAMES_free>>;
using ExtKeyUsagePtr = std::unique_ptr<EXTENDED_KEY_USAGE, OpensslFree<EXTENDED_KEY_USAGE, EXTENDED_KEY_USAGE_free>>;
using Asn1BitStringPtr = std::unique_ptr<ASN1_BIT_STRING, OpensslFree<ASN1_BIT_STRING, ASN1_BIT_STRING_free>>;

// Stacks are macros over OPENSSL_sk_*; their owning free pops each element.
struct X509StackFree {
  void operator()(STACK_OF(X509) * s) const noexcept { sk_X509_pop_free(s, X509_free); }
};
using X509StackPtr = std::unique_ptr<STACK_OF(X509), X509StackFree>;
struct SctStackFree {
  void operator()(STACK_OF(SCT) * s) const noexcept { SCT_LIST_free(s); }
};
using SctListPtr = std::unique_ptr<STACK_OF(SCT), SctStackFree>;

// A new reference to `x` (X509_up_ref): a second owner, not a copy.
X509Ptr share(X509* x);
EvpPkeyPtr share(EVP_PKEY* k);

// OpenSSL's last error as text ("certificate has expired" style), and the
// error queue emptied so that the next failure reads its own reason.
std::string openssl_error();

}  // namespace kwheel::sigstore
