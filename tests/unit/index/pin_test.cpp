// kwheel::pin over a directory of real wheel archives (zip + dist-info +
// RECORD), through pin.hpp's public API only. Hashes are computed by
// coreutils' sha256sum, not by kwheel; which build fits is what the wheel
// naming rules of docs/wheel-naming.md and the binary distribution format
// spec say.
#include "kwheel/index/pin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "error_support.hpp"
#include "fake_transport.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

namespace kwheel {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::linux_cpython311;
using testing::sha256sum;

const std::string kCommitA = "1111111111111111111111111111111111111111";
const std::string kCommitB = "2222222222222222222222222222222222222222";

// A wheel's METADATA as kwheel writes it (the kernel marker included), with
// a Hub revision when `commit` is given.
std::string metadata_text(const std::string& name, const std::string& version, const std::optional<std::string>& commit) {
  std::string metadata = "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\nKeywords: hf-kernel\n";
  if (commit) metadata += "Project-URL: Hub revision, https://huggingface.co/kernels/org/" + name + "/tree/" + *commit + "\n";
  return metadata;
}

class PinTest : public ::testing::Test {
 protected:
  PinTest() : dir_("unit") {}
  // A wheel named `filename` in the directory: a package, METADATA (with
  // a Hub revision when `commit` is given), WHEEL and RECORD.
  fs::path wheel(const std::string& filename, const std::optional<std::string>& commit = std::nullopt) {
    const std::string name = filename.substr(0, filename.find('-'));
    const std::string rest = filename.substr(name.size() + 1);
    const std::string version = rest.substr(0, rest.find('-'));
    const std::string dist_info = name + "-" + version + ".dist-info";
    const std::string metadata = metadata_text(name, version, commit);
    const fs::path path = dir_.path() / filename;
    testing::write_test_wheel(path,
                              {{name + "/__init__.py", "# " + filename + "\n"},
                               {dist_info + "/METADATA", metadata},
                               {dist_info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp39-abi3-linux_x86_64\n"}},
                              dist_info + "/RECORD");
    return path;
  }
  PinRequest request(InterpreterInfo target) const {
    PinRequest r;
    r.source = dir_.path().string();
    r.target = std::move(target);
    return r;
  }
  const fs::path& dir() const { return dir_.path(); }

 private:
  TempDir dir_;
};

const PinCandidate& candidate(const PinResult& r, const std::string& filename) {
  auto it = std::find_if(r.candidates.begin(), r.candidates.end(), [&](const PinCandidate& c) { return c.file.filename == filename; });
  if (it == r.candidates.end()) throw std::runtime_error("no candidate " + filename);
  return *it;
}

TEST_F(PinTest, PicksTheBuildForTheInterpretersTorchAndCuda) {
  const fs::path fit = wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  wheel("img2gray-0.1.0+torch2.7.cu128-cp39-abi3-manylinux_2_28_x86_64.whl");
  wheel("img2gray-0.1.0+torch2.8.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  const PinResult r = pin(request(linux_cpython311("2.7.1", "12.6")));
  EXPECT_EQ(r.project, "img2gray");
  EXPECT_EQ(r.version, "0.1.0+torch2.7.cu126");
  EXPECT_EQ(r.page_format, "directory");
  EXPECT_EQ(r.index_line, "");
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].filename, fit.filename().string());
  EXPECT_EQ(r.files[0].sha256, sha256sum(fit));
  EXPECT_EQ(r.requirement, "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + sha256sum(fit));
  EXPECT_EQ(r.label.cuda, std::optional<std::string>("12.6"));
  EXPECT_EQ(r.candidates.size(), 3u);
  EXPECT_TRUE(candidate(r, "img2gray-0.1.0+torch2.7.cu128-cp39-abi3-manylinux_2_28_x86_64.whl").problem.has_value());
  EXPECT_TRUE(candidate(r, "img2gray-0.1.0+torch2.8.cu126-cp39-abi3-manylinux_2_28_x86_64.whl").problem.has_value());
  EXPECT_FALSE(candidate(r, fit.filename().string()).problem.has_value());
  // The snippet pip reads: the requirement line, and how to find the files.
  EXPECT_TRUE(r.text.ends_with(r.requirement + "\n")) << r.text;
  EXPECT_NE(r.text.find("--find-links"), std::string::npos) << r.text;
}

TEST_F(PinTest, CpuTorchGetsTheCpuBuild) {
  wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  const fs::path cpu = wheel("img2gray-0.1.0+torch2.7.cpu-cp39-abi3-manylinux_2_28_x86_64.whl");
  const PinResult r = pin(request(linux_cpython311("2.7.0")));
  EXPECT_EQ(r.requirement, "img2gray==0.1.0+torch2.7.cpu --hash=sha256:" + sha256sum(cpu));
}

TEST_F(PinTest, NewestFittingVersionWinsUnlessTheSpecifierSaysOtherwise) {
  const fs::path old = wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  const fs::path newer = wheel("img2gray-0.2.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  wheel("img2gray-0.3.0+torch2.8.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");  // newest, but for another torch
  PinRequest req = request(linux_cpython311("2.7.1", "12.6"));
  EXPECT_EQ(pin(req).requirement, "img2gray==0.2.0+torch2.7.cu126 --hash=sha256:" + sha256sum(newer));
  req.version = "<0.2";
  const PinResult r = pin(req);
  EXPECT_EQ(r.requirement, "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + sha256sum(old));
  EXPECT_TRUE(candidate(r, newer.filename().string()).problem.has_value());
}

TEST_F(PinTest, PythonTagsDecideBetweenFilesOfOneVersion) {
  const fs::path cp311 = wheel("img2gray-0.1.0+torch2.7.cu126-cp311-cp311-manylinux_2_28_x86_64.whl");
  wheel("img2gray-0.1.0+torch2.7.cu126-cp312-cp312-manylinux_2_28_x86_64.whl");
  const PinResult r = pin(request(linux_cpython311("2.7.1", "12.6")));
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].filename, cp311.filename().string());
  EXPECT_EQ(r.requirement, "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + sha256sum(cp311));
}

TEST_F(PinTest, PlatformTagsDecideBetweenFilesOfOneVersion) {
  wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_aarch64.whl");
  const fs::path x86 = wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  const PinResult r = pin(request(linux_cpython311("2.7.1", "12.6")));
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].filename, x86.filename().string());
}

TEST_F(PinTest, DescribedTargetHashesEveryFittingFileOfTheVersion) {
  // Python and platform unknown: pip may take either file, so both hashes
  // go on the line (pip's hash-checking mode accepts any listed hash).
  const fs::path arm = wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_aarch64.whl");
  const fs::path x86 = wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  wheel("img2gray-0.1.0+torch2.7.cu128-cp39-abi3-manylinux_2_28_x86_64.whl");
  const PinResult r = pin(request(described_target("2.7", std::string("12.6"))));
  EXPECT_EQ(r.version, "0.1.0+torch2.7.cu126");
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.requirement, "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + sha256sum(arm) + " --hash=sha256:" + sha256sum(x86));
}

TEST_F(PinTest, NothingFitsIsNotFoundAndListsWhatThereIs) {
  wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  wheel("img2gray-0.1.0+torch2.8.cu128-cp39-abi3-manylinux_2_28_x86_64.whl");
  const std::string msg = error_of([&] { pin(request(described_target("2.9", std::string("12.6")))); }, ErrorKind::not_found);
  EXPECT_NE(msg.find("img2gray"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2.9"), std::string::npos) << msg;
  EXPECT_NE(msg.find("torch2.7-cu126"), std::string::npos) << msg;
  EXPECT_NE(msg.find("torch2.8-cu128"), std::string::npos) << msg;
}

// Issue #37, 6: a CUDA target was given the CPU-only build. kernels 0.17.2
// (variants.py _check_variants) loads neither a torch-cpu nor a torchXY-cpu
// build on a CUDA torch; pin says so in kernels' words.
TEST_F(PinTest, ACudaTargetIsNeverGivenACpuBuild) {
  wheel("img2gray-0.1.0+torch.cpu-py3-none-any.whl");
  wheel("img2gray-0.1.0+torch2.9.cpu-cp39-abi3-manylinux_2_28_x86_64.whl");
  const std::string msg = error_of([&] { pin(request(described_target("2.9", std::string("12.8")))); }, ErrorKind::not_found);
  EXPECT_NE(msg.find("backend (cpu) does not match"), std::string::npos) << msg;
  const fs::path cuda = wheel("img2gray-0.1.0+torch.cuda-py3-none-any.whl");
  const PinResult r = pin(request(described_target("2.9", std::string("12.8"))));
  EXPECT_EQ(r.requirement, "img2gray==0.1.0+torch.cuda --hash=sha256:" + sha256sum(cuda));
  EXPECT_EQ(candidate(r, "img2gray-0.1.0+torch.cpu-py3-none-any.whl").problem,
            "backend (cpu) does not match system backend (cuda) and is not universal");
  EXPECT_EQ(candidate(r, "img2gray-0.1.0+torch2.9.cpu-cp39-abi3-manylinux_2_28_x86_64.whl").problem,
            "backend (cpu) does not match selected backend (cu128)");
  // The same wheels for a CPU target: the native CPU build.
  EXPECT_EQ(pin(request(described_target("2.9", std::nullopt))).version, "0.1.0+torch2.9.cpu");
}

// kernels takes a CUDA x.z build on a CUDA x.y torch for z <= y, and
// prefers the newest such minor (_sort_variants: -backend minor).
TEST_F(PinTest, AnOlderCudaMinorFitsAndTheNewestFittingMinorWins) {
  const fs::path cu126 = wheel("img2gray-0.1.0+torch2.9.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  PinRequest req = request(described_target("2.9", std::string("12.8")));
  EXPECT_EQ(pin(req).requirement, "img2gray==0.1.0+torch2.9.cu126 --hash=sha256:" + sha256sum(cu126));
  const fs::path cu128 = wheel("img2gray-0.1.0+torch2.9.cu128-cp39-abi3-manylinux_2_28_x86_64.whl");
  wheel("img2gray-0.1.0+torch2.9.cu129-cp39-abi3-manylinux_2_28_x86_64.whl");
  const PinResult r = pin(req);
  EXPECT_EQ(r.requirement, "img2gray==0.1.0+torch2.9.cu128 --hash=sha256:" + sha256sum(cu128));
  EXPECT_EQ(candidate(r, "img2gray-0.1.0+torch2.9.cu129-cp39-abi3-manylinux_2_28_x86_64.whl").problem,
            "CUDA version (12.9) is not compatible with system CUDA version (12.8)");
}

TEST_F(PinTest, SeveralProjectsNeedAName) {
  wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  const fs::path act = wheel("activation-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  PinRequest req = request(linux_cpython311("2.7.1", "12.6"));
  const std::string msg = error_of([&] { pin(req); }, ErrorKind::usage);
  EXPECT_NE(msg.find("activation"), std::string::npos) << msg;
  EXPECT_NE(msg.find("img2gray"), std::string::npos) << msg;
  req.name = "Activation";  // names compare normalised (PEP 503)
  const PinResult r = pin(req);
  EXPECT_EQ(r.project, "activation");
  EXPECT_EQ(r.requirement, "activation==0.1.0+torch2.7.cu126 --hash=sha256:" + sha256sum(act));
}

TEST_F(PinTest, PinAllPinsEveryProjectUnderOneHeader) {
  const fs::path img = wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  wheel("img2gray-0.1.0+torch2.9.cu130-cp39-abi3-manylinux_2_28_x86_64.whl");
  const fs::path act = wheel("activation-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  const PinSetResult r = pin_all(request(linux_cpython311("2.7.1", "12.6")));
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].project, "activation");
  EXPECT_EQ(r.kernels[1].project, "img2gray");
  EXPECT_TRUE(r.text.ends_with("activation==0.1.0+torch2.7.cu126 --hash=sha256:" + sha256sum(act) + "\nimg2gray==0.1.0+torch2.7.cu126 --hash=sha256:" +
                               sha256sum(img) + "\n"))
      << r.text;
  EXPECT_EQ(to_json(r)["kernels"].size(), 2u);
  // One project: pin()'s own result, text and JSON.
  const fs::path solo = dir() / "solo";
  fs::create_directory(solo);
  fs::copy_file(img, solo / img.filename());
  PinRequest one = request(linux_cpython311("2.7.1", "12.6"));
  one.source = solo.string();
  const PinSetResult s = pin_all(one);
  EXPECT_EQ(s.text, pin(one).text);
  EXPECT_EQ(to_json(s)["project"], "img2gray");
}

TEST_F(PinTest, PinAllNamesTheProjectThatDoesNotFitAndKeepsTheKind) {
  wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  wheel("activation-0.1.0+torch2.9.cu130-cp39-abi3-manylinux_2_28_x86_64.whl");
  const std::string msg = error_of([&] { pin_all(request(linux_cpython311("2.7.1", "12.6"))); }, ErrorKind::not_found);
  EXPECT_TRUE(msg.starts_with("project 'activation': ")) << msg;
  EXPECT_NE(msg.find("--name"), std::string::npos) << msg;
}

TEST_F(PinTest, OtherFilesInTheDirectoryAreIgnored) {
  const fs::path fit = wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  testing::write_test_wheel(dir() / ".img2gray-0.9.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", {{"a", "b"}}, "RECORD");
  testing::write_test_wheel(dir() / "not-a-wheel-name.whl", {{"a", "b"}}, "RECORD");
  std::ofstream(dir() / "README.txt") << "hello";
  fs::create_directories(dir() / "img2gray-0.9.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  const PinResult r = pin(request(linux_cpython311("2.7.1", "12.6")));
  EXPECT_EQ(r.requirement, "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + sha256sum(fit));
  EXPECT_EQ(r.candidates.size(), 1u);
}

TEST_F(PinTest, EmptyOrMissingDirectoryIsNotFound) {
  error_of([&] { pin(request(linux_cpython311("2.7.1", "12.6"))); }, ErrorKind::not_found);
  PinRequest req = request(linux_cpython311("2.7.1", "12.6"));
  req.source = (dir() / "missing").string();
  error_of([&] { pin(req); }, ErrorKind::not_found);
}

TEST_F(PinTest, LockPinsTheWheelsOfTheLockedCommit) {
  const fs::path a = wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", kCommitA);
  wheel("img2gray-0.2.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", kCommitB);
  PinRequest req = request(linux_cpython311("2.7.1", "12.6"));
  req.repo_id = "org/img2gray";
  req.commit = kCommitA;
  EXPECT_EQ(pin(req).requirement, "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + sha256sum(a));
  req.commit = std::string(40, '3');
  error_of([&] { pin(req); }, ErrorKind::not_found);
}

TEST_F(PinTest, JsonReportMirrorsTheResult) {
  const fs::path fit = wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  wheel("img2gray-0.1.0+torch2.8.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  const PinResult r = pin(request(linux_cpython311("2.7.1", "12.6")));
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["requirement"], r.requirement);
  EXPECT_EQ(j["project"], "img2gray");
  EXPECT_EQ(j["version"], "0.1.0+torch2.7.cu126");
  ASSERT_EQ(j["files"].size(), 1u);
  EXPECT_EQ(j["files"][0]["sha256"], sha256sum(fit));
  ASSERT_EQ(j["candidates"].size(), 2u);
  int fitting = 0;
  for (const auto& c : j["candidates"]) fitting += c["fits"].get<bool>() ? 1 : 0;
  EXPECT_EQ(fitting, 1);
}

// A kernels.lock (kernels >= 0.17 format) locking each repo at its commit.
fs::path write_lock(const TempDir& d, const std::vector<std::pair<std::string, std::string>>& repo_commit) {
  std::string json = "[";
  for (const auto& [repo, commit] : repo_commit)
    json += std::string(json.size() > 1 ? "," : "") + R"({"dependency": {"repo-id": ")" + repo + R"(", "version": 1}, "lock": {"commit": ")" + commit + "\"}}";
  const fs::path path = d.path() / "kernels.lock";
  std::ofstream(path) << json << "]";
  return path;
}

TEST_F(PinTest, LockPinsEveryEntryAtItsCommitUnderOneHeader) {
  const fs::path img = wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", kCommitA);
  wheel("img2gray-0.2.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", kCommitB);
  const fs::path relu = wheel("relu-0.3.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", kCommitB);
  TempDir d("unit");
  const std::string lock = write_lock(d, {{"org/img2gray", kCommitA}, {"org/relu", kCommitB}}).string();
  const LockPinResult r = pin_lock(request(linux_cpython311("2.7.1", "12.6")), lock);
  ASSERT_EQ(r.kernels.size(), 2u);
  const std::string img_req = "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + sha256sum(img);
  const std::string relu_req = "relu==0.3.0+torch2.7.cu126 --hash=sha256:" + sha256sum(relu);
  EXPECT_EQ(r.kernels[0].requirement, img_req);
  EXPECT_EQ(r.kernels[1].requirement, relu_req);
  EXPECT_EQ(r.text, "# kwheel pin --lock " + lock + "\n" +
                        "# org/img2gray @ 111111111111: torch 2.7, CUDA 12.6\n"
                        "# org/relu @ 222222222222: torch 2.7, CUDA 12.6\n"
                        "# from a directory: pip install --find-links DIR --require-hashes -r requirements.txt\n" +
                        img_req + "\n" + relu_req + "\n");
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["lock"], lock);
  EXPECT_EQ(j["requirements"], r.text);
  ASSERT_EQ(j["kernels"].size(), 2u);
  EXPECT_EQ(j["kernels"][1]["requirement"], relu_req);
}

TEST_F(PinTest, LockLabelsTheFailingEntryAndKeepsItsKind) {
  wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", kCommitA);
  TempDir d("unit");
  const fs::path lock = write_lock(d, {{"org/img2gray", kCommitA}, {"org/relu", std::string(40, '3')}});
  const std::string e = error_of([&] { pin_lock(request(linux_cpython311("2.7.1", "12.6")), lock.string()); }, ErrorKind::not_found);
  EXPECT_EQ(e.rfind("lock entry 'org/relu' (commit 333333333333): ", 0), 0u) << e;
  // A target no entry fits fails at the first entry, with the kind pin gave it.
  const std::string cpu = error_of([&] { pin_lock(request(linux_cpython311("2.7.1")), lock.string()); }, ErrorKind::not_found);
  EXPECT_EQ(cpu.rfind("lock entry 'org/img2gray' (commit 111111111111): ", 0), 0u) << cpu;
}

// pin --lock from a file:// index reads each candidate's METADATA from the
// wheel the page links; those bytes must be the ones the page hashes.
TEST_F(PinTest, LockFromAFileIndexRefusesAWheelWhoseBytesAreNotThePages) {
  const fs::path a = wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", kCommitA);
  auto write_page = [&](const std::string& sha256) {
    fs::create_directories(dir() / "simple" / "img2gray");
    const nlohmann::json page{{"meta", {{"api-version", "1.1"}}},
                              {"name", "img2gray"},
                              {"files", {{{"filename", a.filename().string()}, {"url", "../../" + a.filename().string()}, {"hashes", {{"sha256", sha256}}}}}}};
    std::ofstream(dir() / "simple" / "img2gray" / "index.json") << page.dump();
  };
  PinRequest req = request(linux_cpython311("2.7.1", "12.6"));
  req.source = "file://" + (dir() / "simple").string();
  req.name = "img2gray";
  req.repo_id = "org/img2gray";
  req.commit = kCommitA;
  const std::string other(64, 'e');
  write_page(other);
  const std::string e = error_of([&] { pin(req); }, ErrorKind::input);
  EXPECT_NE(e.find(a.filename().string()), std::string::npos) << e;
  EXPECT_NE(e.find("the page gives sha256 " + other), std::string::npos) << e;
  EXPECT_NE(e.find("the served bytes have sha256 " + sha256sum(a)), std::string::npos) << e;
  write_page(sha256sum(a));
  EXPECT_EQ(pin(req).requirement, "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + sha256sum(a));
}

// pin --lock over HTTP learns each candidate's Hub commit from its PEP 658
// .metadata file, which an index serves beside the wheel; a FakeTransport
// plays the index. What the page says each file hashes to is computed by
// coreutils' sha256sum.
class PinOverHttp : public ::testing::Test {
 protected:
  static constexpr const char* kPage = "http://index.test/simple/img2gray/";
  static std::string filename(const std::string& version) { return "img2gray-" + version + "-cp39-abi3-manylinux_2_28_x86_64.whl"; }
  // Where the page's relative link "../../files/<name>" leads ('+' encoded as kwheel's pages write it).
  static std::string metadata_url(const std::string& version) {
    std::string name = filename(version);
    name.replace(name.find('+'), 1, "%2B");
    return "http://index.test/files/" + name + ".metadata";
  }
  std::string sha256_of(const std::string& text) {
    const fs::path p = dir_.path() / ("blob-" + std::to_string(blobs_++));
    std::ofstream(p, std::ios::binary) << text;
    return sha256sum(p);
  }
  // One anchor of a PEP 503 page; `core_metadata` is the attribute's value, if any.
  static std::string anchor(const std::string& version, const std::optional<std::string>& core_metadata) {
    std::string href = filename(version);
    href.replace(href.find('+'), 1, "%2B");
    return "<a href=\"../../files/" + href + "#sha256=" + std::string(64, 'a') + "\"" +
           (core_metadata ? " data-core-metadata=\"" + *core_metadata + "\"" : "") + ">" + filename(version) + "</a>\n";
  }
  void serve_html(const std::string& anchors) {
    index_->on(kPage, {{200, "<!DOCTYPE html>\n<html><body>\n" + anchors + "</body></html>\n", {{"content-type", "text/html"}}, "OK"}});
  }
  PinRequest request() const {
    PinRequest r;
    r.source = "http://index.test/simple";
    r.name = "img2gray";
    r.repo_id = "org/img2gray";
    r.commit = kCommitA;
    r.target = linux_cpython311("2.7.1", "12.6");
    r.transport = index_;
    return r;
  }
  bool fetched(const std::string& url) const { return !index_->sent_to(url).empty(); }

  std::shared_ptr<kwheel::testing::FakeTransport> index_ = std::make_shared<kwheel::testing::FakeTransport>();

 private:
  TempDir dir_{"unit"};
  int blobs_ = 0;
};

TEST_F(PinOverHttp, LockRefusesMetadataThatDoesNotHashToThePagesSha256) {
  // The newer build is from commit B; its .metadata has been swapped for
  // one claiming the locked commit A. Trusted, it would be pinned as the
  // locked build.
  const std::string a = metadata_text("img2gray", "0.1.0+torch2.7.cu126", kCommitA);
  const std::string b = metadata_text("img2gray", "0.2.0+torch2.7.cu126", kCommitB);
  const std::string forged = metadata_text("img2gray", "0.2.0+torch2.7.cu126", kCommitA);
  serve_html(anchor("0.1.0+torch2.7.cu126", "sha256=" + sha256_of(a)) + anchor("0.2.0+torch2.7.cu126", "sha256=" + sha256_of(b)));
  index_->on(metadata_url("0.1.0+torch2.7.cu126"), {kwheel::testing::ok(a)});
  index_->on(metadata_url("0.2.0+torch2.7.cu126"), {kwheel::testing::ok(forged)});
  const std::string e = error_of([&] { pin(request()); }, ErrorKind::input);
  EXPECT_NE(e.find(filename("0.2.0+torch2.7.cu126") + ".metadata"), std::string::npos) << e;
  EXPECT_NE(e.find("the page gives sha256 " + sha256_of(b)), std::string::npos) << e;
  EXPECT_NE(e.find("the served bytes have sha256 " + sha256_of(forged)), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST_F(PinOverHttp, LockTrustsMetadataThatHashesToThePagesSha256InEitherCase) {
  const std::string a = metadata_text("img2gray", "0.1.0+torch2.7.cu126", kCommitA);
  const std::string b = metadata_text("img2gray", "0.2.0+torch2.7.cu126", kCommitB);
  std::string upper = sha256_of(a);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  serve_html(anchor("0.1.0+torch2.7.cu126", "sha256=" + upper) + anchor("0.2.0+torch2.7.cu126", "sha256=" + sha256_of(b)));
  index_->on(metadata_url("0.1.0+torch2.7.cu126"), {kwheel::testing::ok(a)});
  index_->on(metadata_url("0.2.0+torch2.7.cu126"), {kwheel::testing::ok(b)});
  const PinResult r = pin(request());
  EXPECT_EQ(r.version, "0.1.0+torch2.7.cu126");
  EXPECT_EQ(r.requirement, "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + std::string(64, 'a'));
  const auto& newer = candidate(r, filename("0.2.0+torch2.7.cu126"));
  ASSERT_TRUE(newer.problem.has_value());
  EXPECT_NE(newer.problem->find("not the locked 111111111111"), std::string::npos) << *newer.problem;
}

TEST_F(PinOverHttp, LockReadsNoMetadataThePageGivesNoSha256For) {
  // PEP 691 JSON this time: metadata offered with no hash, with only a
  // sha512, and not offered at all. Only the one with a sha256 is fetched.
  const std::string a = metadata_text("img2gray", "0.1.0+torch2.7.cu126", kCommitA);
  auto entry = [&](const std::string& version, const nlohmann::json& core_metadata) {
    nlohmann::json f{{"filename", filename(version)}, {"url", "../../files/" + filename(version)}, {"hashes", {{"sha256", std::string(64, 'a')}}}};
    if (!core_metadata.is_null()) f["core-metadata"] = core_metadata;
    return f;
  };
  const nlohmann::json page{{"meta", {{"api-version", "1.1"}}},
                            {"name", "img2gray"},
                            {"files",
                             {entry("0.1.0+torch2.7.cu126", {{"sha256", sha256_of(a)}}), entry("0.2.0+torch2.7.cu126", true),
                              entry("0.3.0+torch2.7.cu126", {{"sha512", std::string(128, 'b')}}), entry("0.4.0+torch2.7.cu126", nullptr)}}};
  index_->on(kPage, {{200, page.dump(), {{"content-type", "application/vnd.pypi.simple.v1+json"}}, "OK"}});
  for (const char* v : {"0.1.0+torch2.7.cu126", "0.2.0+torch2.7.cu126", "0.3.0+torch2.7.cu126", "0.4.0+torch2.7.cu126"})
    index_->on("http://index.test/files/" + filename(v) + ".metadata", {kwheel::testing::ok(a)});
  const PinResult r = pin(request());
  EXPECT_EQ(r.version, "0.1.0+torch2.7.cu126");
  EXPECT_EQ(r.page_format, "json");
  for (const char* v : {"0.2.0+torch2.7.cu126", "0.3.0+torch2.7.cu126"}) {
    const auto& c = candidate(r, filename(v));
    ASSERT_TRUE(c.problem.has_value()) << v;
    EXPECT_NE(c.problem->find("gives no sha256 for its PEP 658 metadata"), std::string::npos) << *c.problem;
    EXPECT_FALSE(fetched("http://index.test/files/" + filename(v) + ".metadata")) << v;
  }
  const auto& none = candidate(r, filename("0.4.0+torch2.7.cu126"));
  ASSERT_TRUE(none.problem.has_value());
  EXPECT_NE(none.problem->find("serves no PEP 658 metadata"), std::string::npos) << *none.problem;
  EXPECT_FALSE(fetched("http://index.test/files/" + filename("0.4.0+torch2.7.cu126") + ".metadata"));
  EXPECT_TRUE(fetched("http://index.test/files/" + filename("0.1.0+torch2.7.cu126") + ".metadata"));
}

TEST(DescribedTarget, TakesMajorMinorAndRefusesOtherText) {
  const InterpreterInfo t = described_target("2.7.1", std::string("12.6.3"));
  EXPECT_EQ(t.torch, std::optional<std::string>("2.7"));
  EXPECT_EQ(t.cuda, std::optional<std::string>("12.6"));
  EXPECT_FALSE(described_target("2.7", std::nullopt).cuda.has_value());
  error_of([] { described_target("latest", std::nullopt); }, ErrorKind::usage);
  error_of([] { described_target("2.7", std::string("12.6+x")); }, ErrorKind::usage);
}


TEST_F(PinOverHttp, APageServedOverHttpMayNotLinkALocalFile) {
  // file:///dev/zero would never end; any local file would be read as a candidate.
  index_->on(kPage, {{200, "<!DOCTYPE html>\n<html><body>\n<a href=\"file:///dev/zero#sha256=" + std::string(64, 'a') + "\">" +
                              filename("0.1.0+torch2.7.cu126") + "</a>\n</body></html>\n", {{"content-type", "text/html"}}, "OK"}});
  const std::string e = error_of([&] { pin(request()); }, ErrorKind::input);
  EXPECT_NE(e.find("links the local file 'file:///dev/zero"), std::string::npos) << e;
}

}  // namespace
}  // namespace kwheel
