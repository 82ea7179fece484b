// Redaction of secrets in every shape they come back in: literal, percent-
// encoded (as in a redirect target or a URL's user info), JSON- and
// \x-escaped, and base64 (inside "Authorization: Basic" echoed by a
// server), through Secret::redact, the process-wide registry that every
// kwheel::Error passes through, and the stream buffer main() prints with.
#include "kwheel/base/secret.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "kwheel/base/error.hpp"

using namespace kwheel;

namespace {

std::string b64(const std::string& s) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < s.size(); i += 3) {
    uint32_t n = static_cast<unsigned char>(s[i]) << 16;
    if (i + 1 < s.size()) n |= static_cast<unsigned char>(s[i + 1]) << 8;
    if (i + 2 < s.size()) n |= static_cast<unsigned char>(s[i + 2]);
    out += a[(n >> 18) & 63];
    out += a[(n >> 12) & 63];
    out += i + 1 < s.size() ? a[(n >> 6) & 63] : '=';
    out += i + 2 < s.size() ? a[n & 63] : '=';
  }
  return out;
}

std::string percent_all(const std::string& s, bool lower_hex) {
  const char* hex = lower_hex ? "0123456789abcdef" : "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    out += '%';
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

// The password has characters URLs and JSON must escape.
const std::string kPassword = "p@ss w/rd:\"Zq81&x";

}  // namespace

TEST(Secret, RedactsTheLiteralSecret) {
  Secret s("hf_abcdefghijklmnopqrstuvwxyz012345");
  EXPECT_EQ(s.redact("token hf_abcdefghijklmnopqrstuvwxyz012345 and again hf_abcdefghijklmnopqrstuvwxyz012345."),
            "token *** and again ***.");
  EXPECT_EQ(Secret().redact("nothing to hide"), "nothing to hide");
}

TEST(Secret, RedactsPercentEncodings) {
  Secret s(kPassword);
  const std::string reserved = "p%40ss%20w%2Frd%3A%22Zq81%26x";      // encodeURIComponent
  const std::string form = "p%40ss+w%2Frd%3A%22Zq81%26x";            // application/x-www-form-urlencoded
  const std::string mixed = "p%40ss%20w/rd:%22Zq81&x";               // only what a path must escape
  const std::string twice = "p%2540ss%2520w%252Frd%253A%2522Zq81%2526x";  // encoded again by a redirect
  for (const auto& form_of : {reserved, form, mixed, twice, percent_all(kPassword, false), percent_all(kPassword, true)}) {
    const std::string text = "Location: http://u:" + form_of + "@other.example/x?sig=" + form_of + "&z=1";
    EXPECT_EQ(s.redact(text), "Location: http://u:***@other.example/x?sig=***&z=1") << form_of;
  }
}

TEST(Secret, RedactsJsonAndPrintableEscapes) {
  Secret s(kPassword);
  EXPECT_EQ(s.redact(R"({"echo": "p@ss w\/rd:\"Zq81&x"})"), R"({"echo": "***"})");
  EXPECT_EQ(s.redact(R"({"echo": "p\u0040ss w/rd:\u0022Zq81\u0026x"})"), R"({"echo": "***"})");
  Secret ctl(std::string("tab\there\x01zz"));
  EXPECT_EQ(ctl.redact("got tab\\x09here\\x01zz!"), "got ***!");
}

TEST(Secret, RedactsBasicCredentialsAndBase64AtAnyOffset) {
  Secret s(kPassword);
  for (const std::string user : {"u", "al", "bob", "__token__"}) {
    const std::string basic = b64(user + ":" + kPassword);
    const std::string echoed = s.redact("server said: Authorization: Basic " + basic);
    EXPECT_EQ(echoed.find(basic), std::string::npos) << user;
    EXPECT_NE(echoed.find("***"), std::string::npos) << user;
  }
  // The secret alone, and inside a longer base64 blob at each alignment.
  for (const std::string prefix : {"", "x", "xy", "xyz"}) {
    const std::string blob = b64(prefix + kPassword + "tail");
    const std::string out = s.redact("blob=" + blob);
    EXPECT_NE(out.find("***"), std::string::npos) << prefix;
    EXPECT_LT(out.size(), std::string("blob=").size() + blob.size()) << prefix;
  }
  // base64url too (URL-safe tokens, JWT-style).
  std::string url = b64(kPassword);
  for (char& c : url) c = c == '+' ? '-' : c == '/' ? '_' : c;
  EXPECT_NE(s.redact(url).find("***"), std::string::npos);
}

TEST(Secret, LeavesOtherTextAlone) {
  Secret s("hf_abcdefghijklmnopqrstuvwxyz012345");
  const std::string text = "HTTP 404 from https://hub.example/api/kernels/org/k/refs?x=%41%42 \\x41 \"ok\" aGVsbG8gd29ybGQ=";
  EXPECT_EQ(s.redact(text), text);
}

TEST(SecretRegistry, ErrorsAndPrintedLinesAreRedacted) {
  const std::string token = "hf_registryTestTokenQQ98765432";
  register_secret(Secret(token));
  register_secret_form(b64("someone:" + token));
  // Every kwheel::Error message.
  Error e(ErrorKind::network, "HTTP 418 from http://h/x?t=" + percent_all(token, true) + " echo Basic " + b64("someone:" + token));
  EXPECT_EQ(std::string(e.what()), "HTTP 418 from http://h/x?t=*** echo Basic ***");
  EXPECT_EQ(redact_secrets("a " + token + " b"), "a *** b");

  // Everything main() prints: the secret split across writes is still caught.
  std::ostringstream sink;
  {
    RedactingStreambuf buf(sink.rdbuf());
    std::ostream out(&buf);
    out << "first line " << token.substr(0, 10) << std::flush << token.substr(10) << "\n";
    out << "{\n  \"error\": \"" << token << "\"\n}" << std::endl;
    out << "no newline at the end " << token;
  }
  EXPECT_EQ(sink.str(), "first line ***\n{\n  \"error\": \"***\"\n}\nno newline at the end ***");
}
