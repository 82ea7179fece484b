// Bundle parsing: every media type, and the invariants checked before any
// cryptography.
#include "kwheel/sigstore/bundle.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "sigstore/sigstore_fixtures.hpp"

using namespace kwheel;
using namespace kwheel::sigstore;
using namespace kwheel::testing::sigstore_fixtures;
using nlohmann::json;

namespace {

std::string bundle_error(const json& b) { return kwheel::testing::error_of([&] { parse_bundle(b.dump(), "b.json"); }); }

}  // namespace

TEST(SigstoreBundle, EveryMediaType) {
  const std::pair<const char*, BundleVersion> cases[] = {{"happy-path-v0.1", BundleVersion::v0_1},
                                                         {"happy-path-v0.2", BundleVersion::v0_2},
                                                         {"happy-path-v0.3", BundleVersion::v0_3},
                                                         {"happy-path-v0.3-new-mediaType", BundleVersion::v0_3}};
  for (const auto& [name, version] : cases) {
    const Bundle b = parse_bundle(bundle_text(name), name);
    EXPECT_EQ(b.version, version) << name;
    EXPECT_TRUE(b.certificate) << name;
    EXPECT_TRUE(b.message_signature) << name;
    EXPECT_EQ(b.entry.kind, "hashedrekord");
  }
  const Bundle v2 = parse_bundle(bundle_text("rekor2-happy-path"), "b");
  EXPECT_EQ(v2.entry.version, "0.0.2");
  EXPECT_FALSE(v2.entry.integrated_time);
  EXPECT_EQ(v2.timestamps.size(), 1u);
}

TEST(SigstoreBundle, MalformedBundlesAreRefused) {
  json b = bundle_json("happy-path-v0.3");
  b["mediaType"] = "application/vnd.dev.sigstore.bundle+json;version=0.4";
  EXPECT_NE(bundle_error(b).find("unsupported mediaType"), std::string::npos);
  b = bundle_json("happy-path-v0.3");
  b["messageSignature"]["signature"] = "not base64!";
  EXPECT_NE(bundle_error(b).find("messageSignature.signature is not valid base64"), std::string::npos);
  b = bundle_json("happy-path-v0.3");
  b["verificationMaterial"]["tlogEntries"][0]["logIndex"] = "-1";
  EXPECT_NE(bundle_error(b).find("logIndex is negative"), std::string::npos);
  b = bundle_json("happy-path-v0.3");
  b["verificationMaterial"]["tlogEntries"].push_back(b["verificationMaterial"]["tlogEntries"][0]);
  EXPECT_NE(bundle_error(b).find("exactly one"), std::string::npos);
  b = bundle_json("happy-path-v0.3");
  b["verificationMaterial"]["tlogEntries"][0]["inclusionProof"].erase("checkpoint");
  EXPECT_NE(bundle_error(b).find("has no checkpoint"), std::string::npos);
  b = bundle_json("happy-path-v0.1");
  b["verificationMaterial"]["tlogEntries"][0].erase("inclusionPromise");
  EXPECT_NE(bundle_error(b).find("without an inclusion promise"), std::string::npos);
  b = bundle_json("happy-path-v0.3");
  b["verificationMaterial"]["tlogEntries"][0]["kindVersion"]["version"] = "0.0.3";
  EXPECT_NE(bundle_error(b).find("0.0.1 and 0.0.2"), std::string::npos);
}

TEST(SigstoreBundle, BoundedInput) {
  std::string deep(100, '[');
  EXPECT_NE(kwheel::testing::error_of([&] { parse_bundle(deep, "b.json"); }).find("nests deeper"), std::string::npos);
  json b = bundle_json("happy-path-v0.3");
  auto& hashes = b["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]["hashes"];
  while (hashes.size() <= 64) hashes.push_back(hashes[0]);
  EXPECT_NE(bundle_error(b).find("more than 64"), std::string::npos);
}

TEST(SigstoreBundle, ManagedKeyIsUnsupported) {
  try {
    parse_bundle(bundle_text("managed-key-happy-path"), "b.json");
    ADD_FAILURE() << "parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.reason(), Reason::unsupported_bundle) << e.what();
  }
}
