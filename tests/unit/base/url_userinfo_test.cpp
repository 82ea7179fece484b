// The user:password@ of a URL as a person typed it, removed for messages
// and registered for redaction. The cases are the shapes RFC 3986 allows
// (any scheme, case-insensitive; "//" network paths), those pip and curl
// read as a login (the last '@' of the authority; percent-encoding), and
// the ones a user writes by mistake (no scheme, one slash, a capital
// scheme, an unencoded '#' in the password), whatever kwheel then does
// with the URL.
#include "kwheel/base/url_userinfo.hpp"

#include <gtest/gtest.h>

#include "kwheel/base/error.hpp"
#include "kwheel/base/secret.hpp"

using namespace kwheel;

TEST(UrlUserinfo, RemovedForAnySchemeInAnyCase) {
  EXPECT_EQ(without_userinfo("https://u:pw@h.example/simple/"), "https://h.example/simple/");
  EXPECT_EQ(without_userinfo("HTTPS://u:pw@h.example/simple/"), "HTTPS://h.example/simple/");
  EXPECT_EQ(without_userinfo("hTtP://u:pw@127.0.0.1:8080/"), "hTtP://127.0.0.1:8080/");
  EXPECT_EQ(without_userinfo("ftp://u:pw@h/"), "ftp://h/");
  EXPECT_EQ(without_userinfo("git+ssh://u:pw@h/x.git"), "git+ssh://h/x.git");
  EXPECT_EQ(without_userinfo("s3://key:secret@bucket"), "s3://bucket");
  EXPECT_EQ(without_userinfo("//u:pw@h/x"), "//h/x");
}

TEST(UrlUserinfo, AUserAloneAfterTheSchemeIsRemovedToo) {
  // pip reads a user alone as a token ("TOKEN@host"), and redacts it.
  EXPECT_EQ(without_userinfo("https://tok3n@h/simple/"), "https://h/simple/");
  EXPECT_EQ(without_userinfo("https://@h/"), "https://h/");
}

TEST(UrlUserinfo, TheLastAtOfTheAuthorityEndsIt) {
  // pip's split_auth_from_netloc: rsplit('@', 1).
  EXPECT_EQ(without_userinfo("https://ci@team:p@ss@h/x"), "https://h/x");
  // A '/' ends the authority; an '@' after it is the path's.
  EXPECT_EQ(without_userinfo("https://h/files/a@1.whl"), "https://h/files/a@1.whl");
  EXPECT_EQ(without_userinfo("http://user@h/a@b"), "http://h/a@b");
  // An unencoded '#' or '?' in a password still belongs to it (no parser
  // would send it, but it is what the user typed as the password).
  EXPECT_EQ(without_userinfo("https://u:p#ss?w@h/simple/"), "https://h/simple/");
}

TEST(UrlUserinfo, SlashesAfterTheSchemeOneOrMoreAndBackslashes) {
  EXPECT_EQ(without_userinfo("https:/u:pw@h/x"), "https:/h/x");
  EXPECT_EQ(without_userinfo("https:///u:pw@h/x"), "https:///h/x");
  EXPECT_EQ(without_userinfo("https:\\\\u:pw@h\\x"), "https:\\\\h\\x");
}

TEST(UrlUserinfo, NoSchemeOnlyWhenAColonMarksAPassword) {
  EXPECT_EQ(without_userinfo("u:pw@h/simple/"), "h/simple/");
  EXPECT_EQ(without_userinfo("u:pw@h"), "h");
  EXPECT_EQ(without_userinfo("https:u:pw@h/"), "h/");
  // Paths and scp-like names without a password are left as they are.
  EXPECT_EQ(without_userinfo("wheels@2/dist"), "wheels@2/dist");
  EXPECT_EQ(without_userinfo("git@github.com:org/repo.git"), "git@github.com:org/repo.git");
  EXPECT_EQ(without_userinfo("/srv/wheels@2/x:y@z"), "/srv/wheels@2/x:y@z");
  EXPECT_EQ(without_userinfo("kernels-community/relu"), "kernels-community/relu");
  EXPECT_EQ(without_userinfo(""), "");
}

TEST(UrlUserinfo, PercentEncodedDelimitersAreReadAsWhatTheyStandFor) {
  EXPECT_EQ(without_userinfo("https%3A%2F%2Fu%3Apw%40h%2Fsimple"), "https%3A%2F%2Fh%2Fsimple");
  EXPECT_EQ(without_userinfo("https://u%3Apw%40h/simple/"), "https://h/simple/");
  EXPECT_EQ(without_userinfo("https%253A%252F%252Fu%253Apw%2540h"), "https%253A%252F%252Fh");
  // Encoded characters of the password itself go with it.
  EXPECT_EQ(without_userinfo("https://ci%40team:p%3Aa%2Fs%40s%20w@h/"), "https://h/");
  // Nothing encoded that forms a login: as it is.
  EXPECT_EQ(without_userinfo("https://h/simple/a%40b/"), "https://h/simple/a%40b/");
  EXPECT_EQ(without_userinfo("100%"), "100%");
  EXPECT_EQ(without_userinfo("%4"), "%4");
}

TEST(UrlUserinfo, HoldsUserinfo) {
  EXPECT_TRUE(holds_userinfo("HTTPS://u:p@h/"));
  EXPECT_TRUE(holds_userinfo("https://u@h/"));
  EXPECT_TRUE(holds_userinfo("u:p@h"));
  EXPECT_TRUE(holds_userinfo("https%3A%2F%2Fu%3Ap%40h"));
  EXPECT_FALSE(holds_userinfo("https://h/simple/"));
  EXPECT_FALSE(holds_userinfo("https://h/packages/a@1.whl"));
  EXPECT_FALSE(holds_userinfo("file:///srv/site/simple/"));
}

TEST(UrlUserinfo, PasswordsAreRegisteredAsWrittenAndDecoded) {
  register_userinfo_password("HTTPS://u:capitalSchemePW1@h/");
  register_userinfo_password("ftp://u:p%2DftpPW2@h/");
  register_userinfo_password("u:schemelessPW3@h/");
  register_userinfo_password("https%3A%2F%2Fu%3AencodedPW4%40h");
  register_userinfo_password("https://u:hash#PW5@h/");
  const std::string said =
      Error(ErrorKind::usage, "capitalSchemePW1 p-ftpPW2 p%2DftpPW2 schemelessPW3 encodedPW4 encoded%50W4 hash#PW5 hash%23PW5").what();
  for (const char* leak : {"capitalScheme", "ftpPW2", "schemeless", "encodedPW4", "encoded%50", "hash"}) EXPECT_EQ(said.find(leak), std::string::npos) << said;
}

TEST(UrlUserinfo, AUserNameAloneIsNotRegistered) {
  // Messages name the user whose credentials were refused; only passwords go.
  register_userinfo_password("https://just-a-user-name@h/");
  register_userinfo_password("wheels@2/dist");
  EXPECT_EQ(redact_secrets("just-a-user-name wheels 2"), "just-a-user-name wheels 2");
}

TEST(UrlUserinfo, LowerScheme) {
  EXPECT_EQ(lower_scheme("HTTPS://U:PW@Host/Simple/"), "https://U:PW@Host/Simple/");
  EXPECT_EQ(lower_scheme("File:///srv/Site/"), "file:///srv/Site/");
  EXPECT_EQ(lower_scheme("https://h/"), "https://h/");
  // Not a URL: a directory keeps its name.
  EXPECT_EQ(lower_scheme("Wheels:2024/dist"), "Wheels:2024/dist");
  EXPECT_EQ(lower_scheme("Dist"), "Dist");
}
