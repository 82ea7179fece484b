// Variants checked against metadata.json digests. The expected hashes in
// tests/unit/data/kernel-digest/ were computed by kernels 0.17.2's own
// Digest.hash_variant (kernels-data, Rust) over the files beside them, so
// these tests compare kwheel with kernels, not with itself.
#include "kwheel/kernel/kernel_digest.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

using namespace kwheel;
using kwheel::testing::error_of;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(KWHEEL_SOURCE_DIR) / "tests/unit/data/kernel-digest";
const std::string kVariant = "torch211-cxx11-cpu-x86_64-linux";

VariantInput vector_variant() {
  VariantInput v{kVariant, {}};
  const fs::path dir = kData / kVariant;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      v.files.push_back({e.path().lexically_relative(dir).generic_string(), e.path(), e.file_size(), false});
  return v;
}

KernelDigest expected(const std::string& algorithm) {
  std::ifstream in(kData / "expected-by-kernels-0.17.2.json");
  auto j = nlohmann::json::parse(in);
  KernelDigest d;
  d.algorithm = algorithm;
  for (auto& [path, hash] : j[algorithm].items()) d.files[path] = hash.get<std::string>();
  return d;
}

}  // namespace

TEST(KernelDigest, CoversWhatKernelsHashes) {
  EXPECT_FALSE(digest_covers("metadata.json"));
  EXPECT_FALSE(digest_covers("metadata.json.sigstore"));
  EXPECT_FALSE(digest_covers("__pycache__/_ops.cpython-311.pyc"));
  EXPECT_FALSE(digest_covers("sub/__pycache__/x.py"));
  EXPECT_FALSE(digest_covers("stray.pyc"));
  EXPECT_TRUE(digest_covers("sub/metadata.json"));  // only the top-level one is skipped
  EXPECT_TRUE(digest_covers("my_kernel/__init__.py"));
  EXPECT_TRUE(digest_covers(".hidden"));
}

TEST(KernelDigest, AgreesWithKernelsOnBothAlgorithms) {
  VariantInput v = vector_variant();
  // Files kernels skips may be present without being listed.
  v.files.push_back({"__pycache__/_ops.cpython-311.pyc", v.files.front().source, 0, false});
  v.files.push_back({"metadata.json.sigstore", v.files.front().source, 0, false});
  for (const char* alg : {"sha256", "sha512"}) {
    KernelDigest d = expected(alg);
    EXPECT_NO_THROW(check_digest_files(d, v)) << alg;
    EXPECT_NO_THROW(check_digest_hashes(d, v, {})) << alg;
  }
}

TEST(KernelDigest, RecordHashesStandInForReadingFiles) {
  VariantInput v = vector_variant();
  KernelDigest d = expected("sha256");
  // sha256("hello world") as RECORD spells it: urlsafe, unpadded.
  std::map<std::string, std::string> known{{"_my_kernel_cpu_abc1234.abi3.so", "sha256=uU0nuZNNPgilLlLX2n2r-sSE7-N6U4DukIj3rOLvzek"}};
  EXPECT_NO_THROW(check_digest_hashes(d, v, known));
  known["_my_kernel_cpu_abc1234.abi3.so"] = "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU";
  auto e = error_of([&] { check_digest_hashes(d, v, known); });
  EXPECT_NE(e.find("variant '" + kVariant + "': '_my_kernel_cpu_abc1234.abi3.so' does not match its sha256"), std::string::npos) << e;
}

TEST(KernelDigest, MismatchMissingAndUnlistedNameTheFile) {
  TempDir t;
  fs::copy(kData / kVariant, t.path() / kVariant, fs::copy_options::recursive);
  std::ofstream(t.path() / kVariant / "sub/mod.py", std::ios::binary) << "x = 2\n";
  VariantInput v{kVariant, {}};
  for (const auto& e : fs::recursive_directory_iterator(t.path() / kVariant))
    if (e.is_regular_file()) v.files.push_back({e.path().lexically_relative(t.path() / kVariant).generic_string(), e.path(), e.file_size(), false});
  KernelDigest d = expected("sha256");
  auto e = error_of([&] { check_digest_hashes(d, v, {}); });
  EXPECT_NE(e.find("'sub/mod.py' does not match its sha256 in metadata.json's digest"), std::string::npos) << e;

  KernelDigest extra = d;
  extra.files["sub/gone.py"] = "AAAA";
  e = error_of([&] { check_digest_files(extra, v); });
  EXPECT_NE(e.find("'sub/gone.py' is missing from the variant but listed in"), std::string::npos) << e;

  KernelDigest fewer = d;
  fewer.files.erase("sub/empty.txt");
  e = error_of([&] { check_digest_files(fewer, v); });
  EXPECT_NE(e.find("'sub/empty.txt' is in the variant but not listed in"), std::string::npos) << e;
}
