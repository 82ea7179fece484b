// kwheel verify's chain on small variants, wheels and installs written here.
// Signatures need a Sigstore instance (tests/sigstore, driven from
// tests/integration/test_verify_installed.py); these tests cover the rest
// of the chain: RECORD, the digest and its layouts, the signer verdict of an
// unsigned item, and the exit codes.
#include "kwheel/trust/verify_installed.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/packaging/record.hpp"
#include "test_support.hpp"

using namespace kwheel;
namespace fs = std::filesystem;
using Files = std::vector<std::pair<std::string, std::string>>;

namespace {

std::string sha256_b64(const std::string& data) {
  Hasher h;
  h.update(data);
  return standard_b64(h.finish());
}

// metadata.json for kernel "relu" whose digest lists `files` (variant-relative).
std::string metadata_over(const Files& files) {
  nlohmann::json digest = nlohmann::json::object();
  for (const auto& [path, data] : files) digest[path] = sha256_b64(data);
  return nlohmann::json{{"name", "relu"}, {"id", "_relu_cpu_abc"}, {"version", 1}, {"license", "Apache-2.0"},
                        {"backend", {{"type", "cpu"}}}, {"digest", {{"algorithm", "sha256"}, {"files", digest}}}}
      .dump();
}

const Files kFlat = {{"__init__.py", "from ._ops import ops\n"}, {"_ops.py", "ops = 1\n"}, {"layers/__init__.py", "x = 2\n"}};

void write(const fs::path& file, const std::string& data) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << data;
}

fs::path variant_dir(const fs::path& root, const Files& files, const std::string& metadata) {
  const fs::path dir = root / "torch-cpu";
  for (const auto& [path, data] : files) write(dir / path, data);
  write(dir / "metadata.json", metadata);
  return dir;
}

ChainOptions allow_unsigned() {
  ChainOptions o;
  o.allow_unsigned = true;
  o.now = 1'800'000'000;
  return o;
}

// The wheel kwheel writes from a flat variant: every file under relu/.
fs::path flat_wheel(const fs::path& dir, const Files& files, const std::string& metadata) {
  Files members;
  for (const auto& [path, data] : files) members.push_back({"relu/" + path, data});
  members.push_back({"relu/metadata.json", metadata});
  members.push_back({"relu-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: relu\nVersion: 1.0\n"});
  members.push_back({"relu-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"});
  const fs::path wheel = dir / "relu-1.0-py3-none-any.whl";
  kwheel::testing::write_test_wheel(wheel, members, "relu-1.0.dist-info/RECORD");
  return wheel;
}

// What pip leaves in site-packages for that wheel, RECORD included.
fs::path installed(const fs::path& site, const Files& files, const std::string& metadata) {
  std::vector<RecordEntry> rows;
  auto add = [&](const std::string& path, const std::string& data) {
    write(site / path, data);
    Hasher h;
    h.update(data);
    rows.push_back({path, "sha256=" + urlsafe_b64_nopad(h.finish()), data.size()});
  };
  for (const auto& [path, data] : files) add("relu/" + path, data);
  add("relu/metadata.json", metadata);
  add("relu-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: relu\nVersion: 1.0\n");
  rows.push_back({"relu-1.0.dist-info/RECORD", "", std::nullopt});
  write(site / "relu-1.0.dist-info/RECORD", format_record(rows));
  return site;
}

}  // namespace

TEST(VerifyChain, VariantDirectoryHoldsWithoutSignatureWhenAllowed) {
  TempDir tmp;
  const auto dir = variant_dir(tmp.path(), kFlat, metadata_over(kFlat));
  const ChainItem item = verify_variant_dir(dir, allow_unsigned());
  EXPECT_TRUE(item.ok()) << item.why;
  EXPECT_EQ(item.passed, std::vector<ChainCheck>{ChainCheck::digest});
  ASSERT_TRUE(item.signature);
  EXPECT_EQ(item.signature->status, SignatureVerdict::Status::unsigned_);
  EXPECT_NE(item.describe().find("OK"), std::string::npos);
}

TEST(VerifyChain, UnsignedFailsOnTheSignerUnlessAllowed) {
  TempDir tmp;
  const auto dir = variant_dir(tmp.path(), kFlat, metadata_over(kFlat));
  ChainOptions strict = allow_unsigned();
  strict.allow_unsigned = false;
  const ChainItem item = verify_variant_dir(dir, strict);
  EXPECT_EQ(item.failed, ChainCheck::signer);
  EXPECT_NE(item.why.find("unsigned"), std::string::npos) << item.why;
  EXPECT_EQ(chain_exit_code({item}), 9);
}

TEST(VerifyChain, VariantDirectoryNamesTheChangedFile) {
  TempDir tmp;
  const auto dir = variant_dir(tmp.path(), kFlat, metadata_over(kFlat));
  write(dir / "_ops.py", "ops = 666\n");
  const ChainItem item = verify_variant_dir(dir, allow_unsigned());
  EXPECT_EQ(item.failed, ChainCheck::digest);
  EXPECT_NE(item.why.find("'_ops.py' does not match"), std::string::npos) << item.why;
  EXPECT_EQ(chain_exit_code({item}), 8);
}

TEST(VerifyChain, DigestCatchesAddedAndMissingFiles) {
  TempDir tmp;
  const auto dir = variant_dir(tmp.path(), kFlat, metadata_over(kFlat));
  write(dir / "extra.py", "evil = 1\n");
  auto item = verify_variant_dir(dir, allow_unsigned());
  EXPECT_EQ(item.failed, ChainCheck::digest);
  EXPECT_NE(item.why.find("'extra.py' is not listed"), std::string::npos) << item.why;
  fs::remove(dir / "extra.py");
  fs::remove(dir / "layers/__init__.py");
  item = verify_variant_dir(dir, allow_unsigned());
  EXPECT_EQ(item.failed, ChainCheck::digest);
  EXPECT_NE(item.why.find("'layers/__init__.py' is listed in metadata.json's digest but missing"), std::string::npos) << item.why;
}

TEST(VerifyChain, BytecodeIsOutsideTheDigest) {
  TempDir tmp;
  const auto dir = variant_dir(tmp.path(), kFlat, metadata_over(kFlat));
  write(dir / "__pycache__/_ops.cpython-311.pyc", "bytecode");
  EXPECT_TRUE(verify_variant_dir(dir, allow_unsigned()).ok());
}

TEST(VerifyChain, GarbageSignatureIsNotASignature) {
  TempDir tmp;
  const auto dir = variant_dir(tmp.path(), kFlat, metadata_over(kFlat));
  write(dir / "metadata.json.sigstore", "{\"mediaType\": \"application/vnd.dev.sigstore.bundle.v0.3+json\"}");
  const ChainItem item = verify_variant_dir(dir, allow_unsigned());
  EXPECT_FALSE(item.ok());
  EXPECT_NE(chain_exit_code({item}), 0);
  EXPECT_NE(chain_exit_code({item}), 9);  // a bundle that does not verify is never "unsigned"
}

TEST(VerifyChain, WheelHoldsAndNamesTheMemberAtFault) {
  TempDir tmp;
  const std::string md = metadata_over(kFlat);
  auto item = verify_wheel(flat_wheel(tmp.path(), kFlat, md), allow_unsigned());
  EXPECT_TRUE(item.ok()) << item.why;
  EXPECT_EQ(item.name, "relu 1.0");
  EXPECT_EQ(item.passed, (std::vector<ChainCheck>{ChainCheck::record, ChainCheck::package, ChainCheck::digest}));
  // RECORD agrees with the changed bytes (the wheel was rewritten whole),
  // the digest does not.
  Files changed = kFlat;
  changed[1].second = "ops = 666\n";
  item = verify_wheel(flat_wheel(tmp.path(), changed, md), allow_unsigned());
  EXPECT_EQ(item.failed, ChainCheck::digest);
  EXPECT_NE(item.why.find("'relu/_ops.py'"), std::string::npos) << item.why;
}

TEST(VerifyChain, NestedWheelKeysItsFilesUnderThePackage) {
  TempDir tmp;
  // A nested variant's files are relu/...; its digest keys them so, and a
  // file outside the package (never packed) may be absent from the wheel.
  Files variant = {{"relu/__init__.py", "x = 1\n"}, {"relu/_ops.py", "y = 2\n"}, {"README.md", "not packed\n"}};
  Files package = {{"__init__.py", "x = 1\n"}, {"_ops.py", "y = 2\n"}};
  const auto item = verify_wheel(flat_wheel(tmp.path(), package, metadata_over(variant)), allow_unsigned());
  EXPECT_TRUE(item.ok()) << item.why;
}

TEST(VerifyChain, CompatShimMayBeLeftOut) {
  TempDir tmp;
  Files variant = kFlat;
  variant.push_back({"relu/__init__.py", "from .. import *\n"});
  const auto item = verify_wheel(flat_wheel(tmp.path(), kFlat, metadata_over(variant)), allow_unsigned());
  EXPECT_TRUE(item.ok()) << item.why;
}

TEST(VerifyChain, WheelWithoutMetadataIsUnsigned) {
  TempDir tmp;
  const fs::path wheel = tmp.path() / "relu-1.0-py3-none-any.whl";
  kwheel::testing::write_test_wheel(wheel, {{"relu/__init__.py", "x"}, {"relu-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: relu\nVersion: 1.0\n"},
                                    {"relu-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}},
                            "relu-1.0.dist-info/RECORD");
  ChainOptions strict = allow_unsigned();
  strict.allow_unsigned = false;
  const auto item = verify_wheel(wheel, strict);
  EXPECT_EQ(item.failed, ChainCheck::signer);
  EXPECT_TRUE(verify_wheel(wheel, allow_unsigned()).ok());
}

TEST(VerifyChain, AnUnsignedWheelBuiltWithNameStillReadsItsOnePackage) {
  TempDir tmp;
  // kwheel build --name k of kernel relu: the wheel k installs relu/, which no ending of "k" names.
  Files members = {{"k-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: k\nVersion: 1.0\n"},
                   {"k-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}};
  for (const auto& [path, data] : kFlat) members.push_back({"relu/" + path, data});
  members.push_back({"relu/metadata.json", metadata_over(kFlat)});
  const fs::path wheel = tmp.path() / "k-1.0-py3-none-any.whl";
  kwheel::testing::write_test_wheel(wheel, members, "k-1.0.dist-info/RECORD");
  const auto item = verify_wheel(wheel, allow_unsigned());
  EXPECT_TRUE(item.ok()) << item.why;
  EXPECT_EQ(item.package, "relu");
}

TEST(VerifyChain, AWheelCarryingMetadataAnywhereIsConfinedToThePackageItsNameImports) {
  TempDir tmp;
  // img2gray's own package carries no metadata.json; relu's signed one rides beside it.
  Files members = {{"img2gray/__init__.py", "x = 1\n"}, {"img2gray-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: img2gray\nVersion: 1.0\n"},
                   {"img2gray-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}};
  for (const auto& [path, data] : kFlat) members.push_back({"relu/" + path, data});
  members.push_back({"relu/metadata.json", metadata_over(kFlat)});
  const fs::path wheel = tmp.path() / "img2gray-1.0-py3-none-any.whl";
  kwheel::testing::write_test_wheel(wheel, members, "img2gray-1.0.dist-info/RECORD");
  const auto item = verify_wheel(wheel, allow_unsigned());
  EXPECT_EQ(item.failed, ChainCheck::digest);
  EXPECT_NE(item.why.find("outside the package 'img2gray/'"), std::string::npos) << item.why;
  EXPECT_EQ(item.location, wheel.string());
}

TEST(VerifyChain, InstalledPackageIsTheOneItsNameImportsNotTheOneRecordLists) {
  TempDir tmp;
  const fs::path site = installed(tmp.path() / "site-packages", kFlat, metadata_over(kFlat));
  // A distribution "gelu" whose RECORD lists relu's files, while gelu/ holds what import gelu runs.
  write(site / "gelu/__init__.py", "import os\n");
  fs::create_directories(site / "gelu-1.0.dist-info");
  write(site / "gelu-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: gelu\nVersion: 1.0\n");
  fs::copy_file(site / "relu-1.0.dist-info/RECORD", site / "gelu-1.0.dist-info/RECORD");
  auto item = verify_installed(site, "gelu", allow_unsigned());
  EXPECT_EQ(item.failed, ChainCheck::record);
  EXPECT_EQ(item.location, (site / "gelu").string());
  EXPECT_NE(item.why.find("'gelu/__init__.py' is in the package directory but RECORD does not list it"), std::string::npos) << item.why;
}

TEST(VerifyChain, InstalledPackageAgainstRecordThenDigest) {
  TempDir tmp;
  const std::string md = metadata_over(kFlat);
  const fs::path site = installed(tmp.path() / "site-packages", kFlat, md);
  auto item = verify_installed(site, "ReLU", allow_unsigned());
  EXPECT_TRUE(item.ok()) << item.why;
  EXPECT_EQ(item.location, (site / "relu").string());
  // Bytecode pip compiled is in RECORD without a hash (docs/security.md says what that leaves open);
  // bytecode RECORD does not list was put there after the install, and would run instead of the source.
  write(site / "relu/__pycache__/_ops.cpython-311.pyc", "bytecode pip wrote");
  EXPECT_EQ(verify_installed(site, "relu", allow_unsigned()).failed, ChainCheck::record);
  {
    std::ofstream record(site / "relu-1.0.dist-info/RECORD", std::ios::app);
    record << "relu/__pycache__/_ops.cpython-311.pyc,,\n";
  }
  EXPECT_TRUE(verify_installed(site, "relu", allow_unsigned()).ok());

  write(site / "relu/_ops.py", "ops = 2\n");  // one byte changed
  item = verify_installed(site, "relu", allow_unsigned());
  EXPECT_EQ(item.failed, ChainCheck::record);
  EXPECT_NE(item.why.find("'relu/_ops.py' does not match its RECORD hash"), std::string::npos) << item.why;
  EXPECT_EQ(chain_exit_code({item}), 8);
}

TEST(VerifyChain, InstalledFileAddedAfterTheInstallFailsRecordThenTheDigest) {
  TempDir tmp;
  const fs::path site = installed(tmp.path() / "site-packages", kFlat, metadata_over(kFlat));
  write(site / "relu/sitecustomize.py", "import os\n");
  auto item = verify_installed(site, "relu", allow_unsigned());
  EXPECT_EQ(item.failed, ChainCheck::record);
  EXPECT_NE(item.why.find("'relu/sitecustomize.py' is in the package directory but RECORD does not list it"), std::string::npos) << item.why;
  {
    std::ofstream record(site / "relu-1.0.dist-info/RECORD", std::ios::app);
    record << "relu/sitecustomize.py,,\n";  // listed, as one who rewrites RECORD would
  }
  item = verify_installed(site, "relu", allow_unsigned());
  EXPECT_EQ(item.failed, ChainCheck::digest);
  EXPECT_NE(item.why.find("'relu/sitecustomize.py' is not listed"), std::string::npos) << item.why;
}

TEST(VerifyChain, InstalledNameNotThereIsNotFound) {
  TempDir tmp;
  const fs::path site = installed(tmp.path() / "site-packages", kFlat, metadata_over(kFlat));
  try {
    verify_installed(site, "gelu", allow_unsigned());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::not_found);
  }
}

TEST(VerifyChain, TargetIsDecidedByItsShape) {
  TempDir tmp;
  const std::string md = metadata_over(kFlat);
  const auto dir = variant_dir(tmp.path() / "repo/build", kFlat, md);
  EXPECT_EQ(verify_target(dir, std::nullopt, allow_unsigned()).size(), 1u);
  const auto checkout = verify_target(tmp.path() / "repo", std::nullopt, allow_unsigned());
  ASSERT_EQ(checkout.size(), 1u);
  EXPECT_TRUE(checkout[0].ok()) << checkout[0].why;
  fs::create_directories(tmp.path() / "wheels");
  flat_wheel(tmp.path() / "wheels", kFlat, md);
  const auto wheels = verify_target(tmp.path() / "wheels", std::nullopt, allow_unsigned());
  ASSERT_EQ(wheels.size(), 1u);
  EXPECT_TRUE(wheels[0].ok()) << wheels[0].why;
  fs::create_directories(tmp.path() / "empty");
  EXPECT_THROW(verify_target(tmp.path() / "empty", std::nullopt, allow_unsigned()), Error);
}

TEST(VerifyChain, ExitCodeRanksABrokenChainFirst) {
  ChainItem broken, unreadable, refused, fine;
  broken.failed = ChainCheck::digest;
  unreadable.failed = ChainCheck::input;
  refused.failed = ChainCheck::signer;
  EXPECT_EQ(chain_exit_code({fine}), 0);
  EXPECT_EQ(chain_exit_code({refused, unreadable}), 3);
  EXPECT_EQ(chain_exit_code({refused, unreadable, broken}), 8);
  EXPECT_EQ(chain_exit_code({refused, fine}), 9);
  EXPECT_EQ(nlohmann::json(broken.to_json())["failed"], "digest");
}
