#pragma once
// Streaming message digests over OpenSSL EVP (sha256 for RECORD and LFS
// objects, sha1 for git blob ids), and the encodings wheels and the Hub use.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct evp_md_ctx_st;

namespace kwheel {

enum class DigestAlgorithm { sha256, sha1, sha512 };

class Hasher {
 public:
  explicit Hasher(DigestAlgorithm algorithm = DigestAlgorithm::sha256);
  Hasher(Hasher&&) noexcept = default;
  Hasher& operator=(Hasher&&) noexcept = default;
  ~Hasher();

  void update(std::span<const std::byte> data);
  void update(std::string_view data);
  // Finalises; the hasher is reset afterwards and can be reused.
  std::vector<unsigned char> finish();

 private:
  struct CtxFree {
    void operator()(evp_md_ctx_st* ctx) const noexcept;
  };
  DigestAlgorithm algorithm_;
  std::unique_ptr<evp_md_ctx_st, CtxFree> ctx_;
};

std::string to_hex(std::span<const unsigned char> digest);
// RFC 4648 section 5 alphabet, no '=' padding: what RECORD wants.
std::string urlsafe_b64_nopad(std::span<const unsigned char> digest);

// RFC 4648 section 4 (standard alphabet, '=' padded): what kernels'
// metadata.json digests hold.
std::string standard_b64(std::span<const unsigned char> digest);

// The digest of a whole file, read in bounded chunks. Throws Error(io).
std::vector<unsigned char> file_digest(const std::filesystem::path& path, DigestAlgorithm algorithm);
std::string sha256_file_hex(const std::filesystem::path& path);
std::string sha256_hex(std::string_view data);

// Exactly 64 lowercase hex digits: a sha256 as requirements.txt's
// --hash=sha256: and pylock.toml hold it (pip lowers an index's uppercase
// digits first; so do kwheel's page readers).
bool is_sha256_hex(std::string_view text);

}  // namespace kwheel
