// Signed-note checkpoints: Rekor v1 (ECDSA) and v2 (Ed25519, cosigned).
#include "kwheel/sigstore/checkpoint.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "sigstore/sigstore_fixtures.hpp"

using namespace kwheel;
using namespace kwheel::sigstore;
using namespace kwheel::testing::sigstore_fixtures;

namespace {

struct CheckpointCase {
  std::string envelope;
  Bytes log_id, root_hash;
};

CheckpointCase checkpoint_case(const std::string& name) {
  const auto e = bundle_json(name)["verificationMaterial"]["tlogEntries"][0];
  return {e["inclusionProof"]["checkpoint"]["envelope"], decode_base64(e["logId"]["keyId"].get<std::string>(), "id"),
          decode_base64(e["inclusionProof"]["rootHash"].get<std::string>(), "root")};
}

}  // namespace

TEST(SigstoreCheckpoint, Parses) {
  const SignedNote note = parse_signed_note(checkpoint_case("happy-path-v0.3").envelope);
  ASSERT_EQ(note.signatures.size(), 1u);
  EXPECT_EQ(note.signatures[0].name, "rekor.sigstore.dev");
  const Checkpoint c = parse_checkpoint(note.text);
  EXPECT_EQ(c.origin, "rekor.sigstore.dev - 2605736670972794746");
  EXPECT_EQ(c.size, 75408393u);
}

TEST(SigstoreCheckpoint, VerifiesV1AndCosignedV2) {
  for (const char* name : {"happy-path-v0.3", "rekor2-happy-path", "rekor2-checkpoint-cosigned", "rekor2-checkpoint-origin-not-first",
                           "rekor2-checkpoint-multiple-cosigs"}) {
    const CheckpointCase c = checkpoint_case(name);
    EXPECT_NO_THROW(verify_checkpoint(c.envelope, c.log_id, c.root_hash, root_for(name).tlogs, {})) << name;
  }
}

TEST(SigstoreCheckpoint, MutationsAreRefused) {
  const CheckpointCase c = checkpoint_case("happy-path-v0.3");
  const auto& keys = root_for("happy-path-v0.3").tlogs;
  std::string bad = c.envelope;
  bad[bad.find('\n') + 1] ^= 1;  // the signed size
  EXPECT_NE(kwheel::testing::error_of([&] { verify_checkpoint(bad, c.log_id, c.root_hash, keys, {}); }).find("does not verify"), std::string::npos);
  Bytes other_root = c.root_hash;
  other_root[0] ^= 1;
  EXPECT_NE(kwheel::testing::error_of([&] { verify_checkpoint(c.envelope, c.log_id, other_root, keys, {}); }).find("root hash"), std::string::npos);
  Bytes other_log = c.log_id;
  other_log[0] ^= 1;
  EXPECT_NE(kwheel::testing::error_of([&] { verify_checkpoint(c.envelope, other_log, c.root_hash, keys, {}); }).find("no signature of log"),
            std::string::npos);
  for (const char* malformed : {"origin\n1\nAAAA\n", "a\n\nb\n\n\xe2\x80\x94 x AAAAAAA=\n", "o\n1\nAA==\n\n\xe2\x80\x94 x AAAAAAA="})
    EXPECT_NE(kwheel::testing::error_of([&] { parse_signed_note(malformed); }).find("malformed checkpoint"), std::string::npos) << malformed;
}

TEST(SigstoreCheckpoint, KeyMustBeValidAtEveryGivenTime) {
  // The suite's root ends the log key's validFor at this bundle's
  // integrated time (closed interval): inside it the checkpoint verifies,
  // one second after it no key may vouch, and every time given must hold.
  const std::string name = "trust-root-tlog-validity-end-inclusive";
  const CheckpointCase c = checkpoint_case(name);
  const TrustedRoot root = root_for(name);
  const std::int64_t end = std::stoll(bundle_json(name)["verificationMaterial"]["tlogEntries"][0]["integratedTime"].get<std::string>());
  EXPECT_NO_THROW(verify_checkpoint(c.envelope, c.log_id, c.root_hash, root.tlogs, std::vector{end}));
  EXPECT_NE(kwheel::testing::error_of([&] { verify_checkpoint(c.envelope, c.log_id, c.root_hash, root.tlogs, std::vector{end + 1}); })
                .find("valid at the signing time"),
            std::string::npos);
  EXPECT_NE(kwheel::testing::error_of([&] { verify_checkpoint(c.envelope, c.log_id, c.root_hash, root.tlogs, std::vector{end, end + 1}); })
                .find("valid at the signing time"),
            std::string::npos);
}
