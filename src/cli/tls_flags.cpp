#include "cli.hpp"

namespace kwheel::cli {

void add_tls_flags(CLI::App* sub, TlsFlags& flags, bool ca_bundle_alias) {
  sub->add_option("--cert", flags.cert,
                  "PEM file of CAs to trust for TLS, as pip's --cert (default: $KWHEEL_CA_BUNDLE, $SSL_CERT_FILE, $REQUESTS_CA_BUNDLE, $PIP_CERT, "
                  "then the system CAs)")
      ->type_name("FILE");
  // The Hub commands' name for it before every command took --cert; kept
  // for scripts, shown by --help no more.
  if (ca_bundle_alias) sub->add_option("--ca-bundle", flags.ca_bundle, "Same as --cert (its older name)")->type_name("FILE")->group("");
  sub->add_option("--client-cert", flags.client_cert,
                  "PEM file holding a client certificate and its private key, for servers that want one (mutual TLS), as pip's --client-cert "
                  "(default: $SSL_CLIENT_CERT, $PIP_CLIENT_CERT)")
      ->type_name("FILE");
}

}  // namespace kwheel::cli
