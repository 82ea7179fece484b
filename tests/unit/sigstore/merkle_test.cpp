// RFC 6962 inclusion proofs: a real Rekor proof, and its mutations.
#include "kwheel/sigstore/merkle.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "sigstore/sigstore_fixtures.hpp"

using namespace kwheel;
using namespace kwheel::sigstore;
using namespace kwheel::testing::sigstore_fixtures;

namespace {

struct MerkleCase {
  Bytes leaf, root;
  std::uint64_t index, size;
  std::vector<Bytes> proof;
};

MerkleCase merkle_case(const std::string& name) {
  const auto e = bundle_json(name)["verificationMaterial"]["tlogEntries"][0];
  const auto& p = e["inclusionProof"];
  MerkleCase c{decode_base64(e["canonicalizedBody"].get<std::string>(), "body"), decode_base64(p["rootHash"].get<std::string>(), "root"),
               std::stoull(p["logIndex"].get<std::string>()), std::stoull(p["treeSize"].get<std::string>()), {}};
  for (const auto& h : p["hashes"]) c.proof.push_back(decode_base64(h.get<std::string>(), "hash"));
  return c;
}

}  // namespace

TEST(SigstoreMerkle, RekorProofsVerify) {
  for (const char* name : {"happy-path-v0.1", "happy-path-v0.3", "rekor2-happy-path"}) {
    const MerkleCase c = merkle_case(name);
    EXPECT_NO_THROW(verify_inclusion(c.leaf, c.index, c.size, c.proof, c.root)) << name;
  }
}

TEST(SigstoreMerkle, SingleLeafTree) {
  const Bytes leaf{'x'};
  EXPECT_NO_THROW(verify_inclusion(leaf, 0, 1, {}, merkle_leaf_hash(leaf)));
}

TEST(SigstoreMerkle, MutationsAreRefused) {
  MerkleCase c = merkle_case("happy-path-v0.3");
  auto flipped = c.proof;
  flipped[2][0] ^= 1;
  EXPECT_NE(kwheel::testing::error_of([&] { verify_inclusion(c.leaf, c.index, c.size, flipped, c.root); }).find("computes the root"), std::string::npos);
  auto shorter = c.proof;
  shorter.pop_back();
  EXPECT_NE(kwheel::testing::error_of([&] { verify_inclusion(c.leaf, c.index, c.size, shorter, c.root); }).find("hashes"), std::string::npos);
  EXPECT_NE(kwheel::testing::error_of([&] { verify_inclusion(c.leaf, c.size, c.size, c.proof, c.root); }).find("outside"), std::string::npos);
  c.leaf.push_back(' ');
  EXPECT_NE(kwheel::testing::error_of([&] { verify_inclusion(c.leaf, c.index, c.size, c.proof, c.root); }).find("computes the root"), std::string::npos);
}
