#include "kwheel/sigstore/openssl_handles.hpp"

#include <openssl/err.h>

#include <string>

namespace kwheel::sigstore {

X509Ptr share(X509* x) {
  if (x) X509_up_ref(x);
  return X509Ptr(x);
}

EvpPkeyPtr share(EVP_PKEY* k) {
  if (k) EVP_PKEY_up_ref(k);
  return EvpPkeyPtr(k);
}

std::string openssl_error() {
  const unsigned long code = ERR_peek_last_error();
  std::string text = "unknown OpenSSL error";
  if (code) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    // "error:0A000086:SSL routines::certificate verify failed": the reason
    // is what follows the last colon.
    text = buf;
    if (auto at = text.rfind(':'); at != std::string::npos && at + 1 < text.size()) text = text.substr(at + 1);
  }
  ERR_clear_error();
  return text;
}

}  // namespace kwheel::sigstore
