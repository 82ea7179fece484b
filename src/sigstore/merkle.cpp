#include "kwheel/sigstore/merkle.hpp"

#include <algorithm>
#include <bit>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"

namespace kwheel::sigstore {

namespace {

Bytes merkle_node(std::span<const unsigned char> left, std::span<const unsigned char> right) {
  Hasher h(DigestAlgorithm::sha256);
  h.update(std::string_view("\x01", 1));
  h.update(as_text(left));
  h.update(as_text(right));
  return h.finish();
}

}  // namespace

Bytes merkle_leaf_hash(std::span<const unsigned char> leaf) {
  Hasher h(DigestAlgorithm::sha256);
  h.update(std::string_view("\x00", 1));
  h.update(as_text(leaf));
  return h.finish();
}

void verify_inclusion(std::span<const unsigned char> leaf, std::uint64_t index, std::uint64_t size, const std::vector<Bytes>& proof,
                      std::span<const unsigned char> root) {
  if (index >= size)
    throw Error(ErrorKind::input, "the inclusion proof's index " + std::to_string(index) + " is outside a tree of " + std::to_string(size) + " leaves");
  // The path splits where the paths to `index` and to the last leaf part:
  // below, siblings sit either side (by the index's bits); above, on the
  // tree's right border, every sibling is a left one.
  const auto inner = static_cast<size_t>(std::bit_width(index ^ (size - 1)));
  const auto border = static_cast<size_t>(std::popcount(index >> inner));
  if (proof.size() != inner + border)
    throw Error(ErrorKind::input, "the inclusion proof has " + std::to_string(proof.size()) + " hashes, a tree of " + std::to_string(size) +
                                      " leaves needs " + std::to_string(inner + border) + " for index " + std::to_string(index));
  for (const auto& h : proof)
    if (h.size() != 32) throw Error(ErrorKind::input, "the inclusion proof holds a hash of " + std::to_string(h.size()) + " bytes, not 32");
  Bytes hash = merkle_leaf_hash(leaf);
  for (size_t i = 0; i < proof.size(); ++i)
    hash = (i < inner && ((index >> i) & 1) == 0) ? merkle_node(hash, proof[i]) : merkle_node(proof[i], hash);
  if (!std::ranges::equal(hash, root))
    throw Error(ErrorKind::input, "the inclusion proof computes the root " + to_hex(hash) + ", not the bundle's " + to_hex(root));
}

}  // namespace kwheel::sigstore
