#include "kwheel/kernel/kernel_digest.hpp"

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/kernel/kernel_layout.hpp"

namespace kwheel {

namespace {

Error violation(const VariantInput& v, const std::string& path, const std::string& what) {
  return Error(ErrorKind::input, "variant '" + v.name + "': '" + path + "' " + what +
                                     " metadata.json's digest; the files are not the ones kernel-builder built, refusing to package them");
}

}  // namespace

std::string as_record_hash(const std::string& standard) {
  std::string out = "sha256=";
  for (char c : standard) {
    if (c == '=') break;
    out += c == '+' ? '-' : c == '/' ? '_' : c;
  }
  return out;
}

bool digest_covers(std::string_view path) {
  return path != "metadata.json" && path != "metadata.json.sigstore" && !is_bytecode(path);
}

void check_digest_files(const KernelDigest& digest, const VariantInput& v) {
  std::map<std::string, bool> present;
  for (const auto& f : v.files)
    if (digest_covers(f.path)) present[f.path] = true;
  for (const auto& [path, _] : digest.files)
    if (!present.count(path)) throw violation(v, path, "is missing from the variant but listed in");
  for (const auto& [path, _] : present)
    if (!digest.files.count(path)) throw violation(v, path, "is in the variant but not listed in");
}

void check_digest_hashes(const KernelDigest& digest, const VariantInput& v, const std::map<std::string, std::string>& known) {
  const auto algorithm = digest.algorithm == "sha512" ? DigestAlgorithm::sha512 : DigestAlgorithm::sha256;
  for (const auto& f : v.files) {
    auto expected = digest.files.find(f.path);
    if (expected == digest.files.end()) continue;
    bool ok;
    if (auto k = known.find(f.path); k != known.end() && algorithm == DigestAlgorithm::sha256) ok = k->second == as_record_hash(expected->second);
    else ok = standard_b64(file_digest(f.source, algorithm)) == expected->second;
    if (!ok) throw violation(v, f.path, "does not match its " + digest.algorithm + " in");
  }
}

}  // namespace kwheel
