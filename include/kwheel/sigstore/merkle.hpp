#pragma once
// RFC 6962 Merkle tree inclusion proofs (section 2.1.1), the audit path a
// Rekor entry carries: leaf hash SHA-256(0x00 || leaf), node hash
// SHA-256(0x01 || left || right).
#include <cstdint>
#include <span>
#include <vector>

#include "kwheel/sigstore/codec.hpp"

namespace kwheel::sigstore {

Bytes merkle_leaf_hash(std::span<const unsigned char> leaf);

// Checks that `leaf` sits at `index` of a tree of `size` leaves whose root
// is `root`, by `proof` (lowest level first). Throws Error(input) saying
// what does not hold: the index outside the tree, a proof of the wrong
// length, a hash of the wrong size, or the root it computes.
void verify_inclusion(std::span<const unsigned char> leaf, std::uint64_t index, std::uint64_t size, const std::vector<Bytes>& proof,
                      std::span<const unsigned char> root);

}  // namespace kwheel::sigstore
