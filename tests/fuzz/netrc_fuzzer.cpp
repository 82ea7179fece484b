// A netrc file, read as pip reads it (parse_netrc, then netrc_credentials
// for a host the file names and for one it does not). Invariants: what
// comes back is hosts or Error(input); the error is the file's name, a
// line number and one of the reader's own sentences, so no token of the
// file (a password) can reach a message; every password the reader gives
// is one the file's bytes hold.
#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/hub/netrc.hpp"

using namespace kwheel;

namespace {

bool own_sentence(const std::string& message) {
  if (message == "fuzz.netrc: not UTF-8, which Python's netrc cannot read") return true;
  const std::string head = "fuzz.netrc line ";
  if (!message.starts_with(head)) return false;
  size_t i = head.size();
  while (i < message.size() && message[i] >= '0' && message[i] <= '9') ++i;
  if (i == head.size() || message.compare(i, 2, ": ") != 0) return false;
  const std::string why = message.substr(i + 2);
  for (const char* s : {"a word that is not 'machine', 'default' or 'macdef' where an entry must start", "'machine' is not followed by a host name",
                        "a word other than 'login', 'account' or 'password' inside an entry", "a 'macdef' is not ended by an empty line"})
    if (why == s) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz_string(data, size);
  NetrcHosts hosts;
  try {
    hosts = parse_netrc(text, "fuzz.netrc");
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);
    FUZZ_CHECK(own_sentence(e.what()));
    return 0;
  }
  for (const auto& [name, entry] : hosts) {
    FUZZ_CHECK(!name.empty());
    if (const auto c = netrc_credentials(hosts, name)) {
      FUZZ_CHECK(c->login == entry.login || (entry.login.empty() && c->login == entry.account));
      FUZZ_CHECK(c->password.reveal() == entry.password.reveal());
    }
  }
  // A host the file does not name (the fuzzer can write "machine \x01not-a-host"
  // too: then it is named) has no credentials without a default entry.
  if (!hosts.count("default") && !hosts.count("\x01not-a-host")) FUZZ_CHECK(!netrc_credentials(hosts, "\x01not-a-host"));
  return 0;
}
