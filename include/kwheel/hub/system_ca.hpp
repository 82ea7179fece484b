#pragma once
// The system's CA store, found at run time. A libcurl built by a
// distribution has its CA bundle's path compiled in; the release wheel's
// statically built one has none, because the path depends on the distribution
// the wheel lands on (Debian and Ubuntu, RHEL and its rebuilds, Amazon
// Linux), not the one it was built on. With none compiled in, kwheel passes
// the first bundle of kSystemCaBundles that exists, as Go's crypto/x509 and
// rustls-native-certs look for it.
#include <span>
#include <string>

namespace kwheel {

// Where distributions keep their CA bundle (PEM), in the order tried.
inline constexpr const char* kSystemCaBundles[] = {
    "/etc/ssl/certs/ca-certificates.crt",                 // Debian, Ubuntu, Alpine, Arch
    "/etc/pki/tls/certs/ca-bundle.crt",                   // RHEL 8+, Rocky, Alma, Fedora, Amazon Linux
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // RHEL's extracted store (what ca-bundle.crt links to)
    "/etc/ssl/ca-bundle.pem",                             // openSUSE, SLES
    "/etc/ssl/cert.pem",                                  // Alpine's and macOS' alias
};

// The first of `candidates` that is a readable regular file (or a link to
// one); "" if none is.
std::string first_ca_bundle(std::span<const char* const> candidates);

// The bundle to pass as CURLOPT_CAINFO when the user named none: "" when
// this libcurl has a default of its own (a distribution's; the developer
// build), else first_ca_bundle(kSystemCaBundles). Looked up once.
const std::string& system_ca_bundle();

}  // namespace kwheel
