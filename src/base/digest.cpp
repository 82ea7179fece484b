#include "kwheel/base/digest.hpp"

#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "kwheel/base/error.hpp"

namespace kwheel {

void Hasher::CtxFree::operator()(evp_md_ctx_st* ctx) const noexcept { EVP_MD_CTX_free(ctx); }

namespace {
const EVP_MD* md_for(DigestAlgorithm a) {
  switch (a) {
    case DigestAlgorithm::sha1: return EVP_sha1();
    case DigestAlgorithm::sha512: return EVP_sha512();
    case DigestAlgorithm::sha256: break;
  }
  return EVP_sha256();
}
}  // namespace

Hasher::Hasher(DigestAlgorithm algorithm) : algorithm_(algorithm), ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), md_for(algorithm_), nullptr) != 1)
    throw std::runtime_error("OpenSSL: cannot initialise a digest context");
}

Hasher::~Hasher() = default;

void Hasher::update(std::span<const std::byte> data) {
  if (!data.empty() && EVP_DigestUpdate(ctx_.get(), data.data(), data.size()) != 1)
    throw std::runtime_error("OpenSSL: digest update failed");
}

void Hasher::update(std::string_view data) { update(std::as_bytes(std::span(data.data(), data.size()))); }

std::vector<unsigned char> Hasher::finish() {
  std::vector<unsigned char> out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_.get(), out.data(), &len) != 1 ||
      EVP_DigestInit_ex(ctx_.get(), md_for(algorithm_), nullptr) != 1)
    throw std::runtime_error("OpenSSL: digest finalisation failed");
  out.resize(len);
  return out;
}

std::string to_hex(std::span<const unsigned char> digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(digest.size() * 2);
  for (unsigned char b : digest) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

namespace {

std::string b64(std::span<const unsigned char> data, const char* alphabet, bool pad) {
  std::string out;
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    unsigned v = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    out += alphabet[v & 63];
  }
  if (size_t rest = data.size() - i; rest) {
    unsigned v = data[i] << 16 | (rest == 2 ? data[i + 1] << 8 : 0);
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += rest == 2 ? std::string(1, alphabet[(v >> 6) & 63]) : std::string(pad ? "=" : "");
    if (pad) out += '=';
  }
  return out;
}

}  // namespace

std::string urlsafe_b64_nopad(std::span<const unsigned char> data) {
  return b64(data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", false);
}

std::string standard_b64(std::span<const unsigned char> data) {
  return b64(data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", true);
}

std::vector<unsigned char> file_digest(const std::filesystem::path& path, DigestAlgorithm algorithm) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, "cannot read '" + path.string() + "': " + std::strerror(errno));
  Hasher h(algorithm);
  std::array<char, 1 << 16> buf{};
  while (in) {
    in.read(buf.data(), buf.size());
    h.update(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) throw Error(ErrorKind::io, "read error on '" + path.string() + "'");
  return h.finish();
}

std::string sha256_file_hex(const std::filesystem::path& path) { return to_hex(file_digest(path, DigestAlgorithm::sha256)); }

std::string sha256_hex(std::string_view data) {
  Hasher h;
  h.update(data);
  return to_hex(h.finish());
}

bool is_sha256_hex(std::string_view text) { return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos; }

}  // namespace kwheel
