// Digests and encodings against published vectors: FIPS 180-2 / NIST CSRC
// examples for SHA-256 and SHA-1 (also in RFC 6234), RFC 4648 section 10
// for base64 (re-spelled with the urlsafe alphabet and '=' stripped, as
// RECORD wants), and Python's base64.urlsafe_b64encode for RECORD hashes.
#include "kwheel/base/digest.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kwheel/base/error.hpp"

using namespace kwheel;
namespace fs = std::filesystem;

namespace {

std::vector<unsigned char> bytes(std::string_view s) { return {s.begin(), s.end()}; }

std::string hex_of(DigestAlgorithm a, std::string_view data) {
  Hasher h(a);
  h.update(data);
  return to_hex(h.finish());
}

const std::string kTwoBlock = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("kwheel-digest-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(Digest, Sha256NistVectors) {
  EXPECT_EQ(hex_of(DigestAlgorithm::sha256, ""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of(DigestAlgorithm::sha256, "abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of(DigestAlgorithm::sha256, kTwoBlock), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Digest, Sha1NistVectors) {
  EXPECT_EQ(hex_of(DigestAlgorithm::sha1, ""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(hex_of(DigestAlgorithm::sha1, "abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(hex_of(DigestAlgorithm::sha1, kTwoBlock), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}

TEST(Digest, MillionAInPiecesAndReuse) {
  // One million 'a' fed in uneven pieces; then the same hasher is reused.
  Hasher h;
  const std::string chunk(997, 'a');
  size_t left = 1000000;
  while (left) {
    size_t n = std::min(left, chunk.size());
    h.update(std::string_view(chunk.data(), n));
    left -= n;
  }
  EXPECT_EQ(to_hex(h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  h.update("abc");
  EXPECT_EQ(to_hex(h.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  Hasher s1(DigestAlgorithm::sha1);
  for (int i = 0; i < 1000; ++i) s1.update(std::string(1000, 'a'));
  EXPECT_EQ(to_hex(s1.finish()), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(Digest, UrlsafeBase64WithoutPaddingRfc4648) {
  // RFC 4648 section 10 vectors, lengths 0..6, '=' removed.
  EXPECT_EQ(urlsafe_b64_nopad(bytes("")), "");
  EXPECT_EQ(urlsafe_b64_nopad(bytes("f")), "Zg");
  EXPECT_EQ(urlsafe_b64_nopad(bytes("fo")), "Zm8");
  EXPECT_EQ(urlsafe_b64_nopad(bytes("foo")), "Zm9v");
  EXPECT_EQ(urlsafe_b64_nopad(bytes("foob")), "Zm9vYg");
  EXPECT_EQ(urlsafe_b64_nopad(bytes("fooba")), "Zm9vYmE");
  EXPECT_EQ(urlsafe_b64_nopad(bytes("foobar")), "Zm9vYmFy");
}

TEST(Digest, UrlsafeAlphabet) {
  // Standard base64 would give "+/8=", "++++" and "////".
  EXPECT_EQ(urlsafe_b64_nopad(std::vector<unsigned char>{0xfb, 0xff}), "-_8");
  EXPECT_EQ(urlsafe_b64_nopad(std::vector<unsigned char>{0xfb, 0xef, 0xbe}), "----");
  EXPECT_EQ(urlsafe_b64_nopad(std::vector<unsigned char>{0xff, 0xff, 0xff}), "____");
  EXPECT_EQ(urlsafe_b64_nopad(std::vector<unsigned char>{0x00}), "AA");
}

TEST(Digest, RecordHashOfAbcMatchesPython) {
  // base64.urlsafe_b64encode(hashlib.sha256(b"abc").digest()).rstrip(b"=")
  Hasher h;
  h.update("abc");
  auto d = h.finish();
  ASSERT_EQ(d.size(), 32u);
  EXPECT_EQ(urlsafe_b64_nopad(d), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
  EXPECT_EQ(urlsafe_b64_nopad(d).size(), 43u);
}

TEST(Digest, HexIsLowercase) {
  EXPECT_EQ(to_hex(std::vector<unsigned char>{0x00, 0x0f, 0xab, 0xff}), "000fabff");
  EXPECT_EQ(to_hex(std::vector<unsigned char>{}), "");
}

TEST(Digest, FileHashCrossesChunkBoundaries) {
  const fs::path dir = temp_dir();
  const fs::path f = dir / "million-a";
  {
    std::ofstream out(f, std::ios::binary);
    out << std::string(1000000, 'a');
  }
  EXPECT_EQ(sha256_file_hex(f), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  const fs::path empty = dir / "empty";
  std::ofstream(empty).close();
  EXPECT_EQ(sha256_file_hex(empty), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  fs::remove_all(dir);
}

TEST(Digest, MissingFileIsIoError) {
  try {
    sha256_file_hex("/nonexistent/kwheel/file");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kwheel/file"), std::string::npos);
  }
}
