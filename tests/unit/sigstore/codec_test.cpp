// Base64 by RFC 4648's test vectors (section 10) and RFC 3339 times.
#include "kwheel/sigstore/codec.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"

using namespace kwheel;
using namespace kwheel::sigstore;

TEST(SigstoreCodec, Base64Rfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"Zg==", "f"},       {"Zm8=", "fo"},     {"Zm9v", "foo"},
                                                         {"Zm9vYg==", "foob"}, {"Zm9vYmE=", "fooba"}, {"Zm9vYmFy", "foobar"}, {"Zm9vYg", "foob"}};
  for (const auto& [in, out] : vectors) EXPECT_EQ(as_text(decode_base64(in, "x")), out) << in;
  EXPECT_EQ(as_text(decode_base64("Zm9v\nYmFy\n", "x")), "foobar");  // MIME line breaks
}

TEST(SigstoreCodec, Base64RefusesWhatIsNot) {
  for (const char* bad : {"Zm9v YmFy", "Zm9vYg=", "Z", "Zm9vYh==", "Zm-_", "Zg===", "Zm9v!"})
    EXPECT_EQ(kwheel::testing::error_of([&] { decode_base64(bad, "the field"); }), "the field is not valid base64") << bad;
}

TEST(SigstoreCodec, Rfc3339) {
  EXPECT_EQ(parse_rfc3339("2023-07-12T15:56:36Z", "t"), 1689177396);
  EXPECT_EQ(parse_rfc3339("2023-07-12T15:56:36.123Z", "t"), 1689177396);
  EXPECT_EQ(parse_rfc3339("2023-07-12T17:56:36+02:00", "t"), 1689177396);
  EXPECT_EQ(format_rfc3339(1689177396), "2023-07-12T15:56:36Z");
  for (const char* bad : {"2023-07-12", "2023-07-12T15:56:36", "2023-13-12T15:56:36Z", "2023-07-12T15:56:36.Z", "x023-07-12T15:56:36Z"})
    EXPECT_NE(kwheel::testing::error_of([&] { parse_rfc3339(bad, "validFor.start"); }).find("validFor.start is not an RFC 3339 time"), std::string::npos)
        << bad;
}
