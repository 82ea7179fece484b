// What validate decides from a wheel before running anything.
#include "kwheel/validate/validate.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "elf_fixtures.hpp"
#include "test_support.hpp"

using namespace kwheel;
using kwheel::testing::write_test_wheel;

TEST(Validate, ReadsTorchRequirementsOfAnyLength) {
  // Found by review while writing the wheel fuzz target: Requires-Dist went
  // whole through a std::regex that recursed once per character.
  const InterpreterInfo in = kwheel::testing::linux_cpython311("2.7.1");
  TempDir tmp;
  const auto path = tmp.path() / "demo-1.0-py3-none-any.whl";
  auto wheel_requiring = [&](const std::string& requirement) {
    write_test_wheel(path, {{"demo/__init__.py", ""}, {"demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Dist: " + requirement + "\n"}},
                     "demo-1.0.dist-info/RECORD");
    return std::make_unique<WheelArchive>(path);
  };
  EXPECT_EQ(incompatibility(*wheel_requiring("torch==2.7.*; " + std::string(200000, 'x')), in, "cpu"), std::nullopt);
  EXPECT_NE(incompatibility(*wheel_requiring("torch (==2.6.*) ; python_version >= \"3.9\""), in, "cpu"), std::nullopt);
  EXPECT_EQ(incompatibility(*wheel_requiring("torch" + std::string(200000, ' ')), in, "cpu"), std::nullopt);
}

namespace {

namespace fs = std::filesystem;

// A .nv_fatbin of one container whose entries (empty payloads) name the
// given SASS/PTX arch numbers; layout as src/evidence/fatbin.cpp documents it.
std::string fatbin_section(const std::vector<std::pair<uint16_t, uint32_t>>& kind_arch) {
  std::string body;
  for (auto [kind, arch] : kind_arch) {
    std::string h(64, '\0');
    const uint32_t header = 64;
    const uint64_t flags = 0x11;
    std::memcpy(h.data(), &kind, 2);
    std::memcpy(h.data() + 4, &header, 4);
    std::memcpy(h.data() + 28, &arch, 4);
    std::memcpy(h.data() + 40, &flags, 8);
    body += h;
  }
  std::string c(16, '\0');
  const uint32_t magic = 0xBA55ED50;
  const uint16_t version = 1, size = 16;
  const uint64_t n = body.size();
  std::memcpy(c.data(), &magic, 4);
  std::memcpy(c.data() + 4, &version, 2);
  std::memcpy(c.data() + 6, &size, 2);
  std::memcpy(c.data() + 8, &n, 8);
  return c + body;
}

using Entries = std::vector<std::pair<uint16_t, uint32_t>>;

// A shared object carrying `kind_arch` (none: no .nv_fatbin) named `name` in `d`.
std::string cuda_object(const kwheel::testing::TempDir& d, const std::string& name, const Entries& kind_arch) {
  const auto so = kwheel::testing::build_c(d, name, "int f(void) { return 1; }\n", "-nostdlib");
  if (!kind_arch.empty()) {
    kwheel::testing::write_file(d / (name + ".fatbin"), fatbin_section(kind_arch));
    kwheel::testing::sh(d.path(), "objcopy --add-section .nv_fatbin=" + name + ".fatbin " + name);
  }
  return kwheel::testing::read_text(so);
}

// A wheel for torch 2.11 and `label` whose objects carry the given code.
fs::path cuda_wheel_file(const kwheel::testing::TempDir& d, const std::string& label, const std::vector<Entries>& objects) {
  const std::string dist_info = "relu-1.0+torch2.11." + label + ".dist-info";
  std::vector<std::pair<std::string, std::string>> files = {{"relu/__init__.py", ""}};
  for (size_t i = 0; i < objects.size(); ++i)
    files.emplace_back("relu/_relu" + std::to_string(i) + ".abi3.so", cuda_object(d, "k" + std::to_string(i) + ".so", objects[i]));
  files.emplace_back(dist_info + "/METADATA", "Metadata-Version: 2.1\nName: relu\nVersion: 1.0+torch2.11." + label + "\n");
  const auto path = d / ("relu-1.0+torch2.11." + label + "-cp39-abi3-manylinux_2_28_x86_64.whl");
  write_test_wheel(path, files, dist_info + "/RECORD");
  return path;
}

const CudaDevice kH100{{9, 0, ArchSuffix::none}, "H100"};
constexpr uint16_t kPtx = 1, kSass = 2;

// validate_wheel itself, on an interpreter that fits the wheel but has no
// pip: a wheel the GPU check lets through fails later ("no pip"), so the
// result shows which side of the check it ended on, without a GPU.
ValidationResult validate_on_h100(const fs::path& wheel) {
  InterpreterInfo in = kwheel::testing::linux_cpython311("2.11.0+cu130", "13.0");
  ValidateOptions o;
  o.device = "cuda";
  o.cuda_device = kH100;
  return validate_wheel(wheel, in, o);
}

}  // namespace

TEST(Validate, SkipsACudaWheelWhoseCodeMissesTheGpuBeforeInstalling) {
  kwheel::testing::TempDir d;
  const auto r = validate_on_h100(cuda_wheel_file(d, "cu130", {{{kSass, 100}}}));
  EXPECT_EQ(r.status, ValidationResult::Status::skip);
  EXPECT_EQ(r.reason, "this GPU is sm_90; relu/_relu0.abi3.so has code for sm_100 only");
  EXPECT_EQ(r.details["gpu_code"]["covered"], false);
  EXPECT_EQ(r.details["gpu_code"]["no_code_for_device"], nlohmann::json::array({"relu/_relu0.abi3.so"}));
}

TEST(Validate, RunsWhatTheGpuCanRunOrJit) {
  kwheel::testing::TempDir a, b;
  auto r = validate_on_h100(cuda_wheel_file(a, "cu130", {{{kSass, 90}}}));
  EXPECT_EQ(r.status, ValidationResult::Status::fail);  // past the GPU check, stopped at pip
  EXPECT_NE(r.reason.find("has no pip"), std::string::npos) << r.reason;
  EXPECT_EQ(r.details["gpu_code"]["objects"][0]["runs"], "sm_90");
  r = validate_on_h100(cuda_wheel_file(b, "cu130", {{{kPtx, 80}}}));
  EXPECT_NE(r.reason.find("has no pip"), std::string::npos) << r.reason;
  EXPECT_EQ(r.details["gpu_code"]["objects"][0]["runs"], "compute_80");
  EXPECT_EQ(r.details["gpu_code"]["objects"][0]["jit"], true);
}

TEST(Validate, RunsWhenOneObjectHasCodeForTheGpuAndListsTheOthers) {
  // One object per arch family (sgl-kernel, torchao): the package loads the
  // one that fits, so the check runs; the others are listed, by their path
  // in the wheel, for the verdict to speak to.
  kwheel::testing::TempDir d;
  const auto r = validate_on_h100(cuda_wheel_file(d, "cu130", {{{kSass, 90}}, {{kSass, 80}, {kSass, 100}}, {}}));
  EXPECT_EQ(r.status, ValidationResult::Status::fail);  // past the GPU check, stopped at pip
  EXPECT_NE(r.reason.find("has no pip"), std::string::npos) << r.reason;
  EXPECT_EQ(r.details["gpu_code"]["covered"], true);
  EXPECT_EQ(r.details["gpu_code"]["no_code_for_device"], nlohmann::json::array({"relu/_relu1.abi3.so"}));
  EXPECT_EQ(r.details["gpu_code"]["objects"][1]["runs"], nlohmann::json(nullptr));
}

TEST(Validate, SkipsOnlyWhenNoObjectHasCodeForTheGpu) {
  kwheel::testing::TempDir d;
  const auto r = validate_on_h100(cuda_wheel_file(d, "cu130", {{{kSass, 100}}, {{kSass, 80}, {kSass, 120}}}));
  EXPECT_EQ(r.status, ValidationResult::Status::skip);
  EXPECT_EQ(r.reason, "this GPU is sm_90; none of its 2 objects with CUDA code runs on it (relu/_relu0.abi3.so: sm_100; relu/_relu1.abi3.so: sm_80, sm_120)");
  EXPECT_EQ(r.details["gpu_code"]["no_code_for_device"], nlohmann::json::array({"relu/_relu0.abi3.so", "relu/_relu1.abi3.so"}));
}

TEST(Validate, JudgesOnlyCudaWheelsThatCarryCudaCode) {
  kwheel::testing::TempDir a, b;
  // A host-only object in a CUDA wheel (calls into CUDA libraries) and a
  // CPU wheel are not judged: both go on to the install.
  auto r = validate_on_h100(cuda_wheel_file(a, "cu130", {{}}));
  EXPECT_NE(r.reason.find("has no pip"), std::string::npos) << r.reason;
  EXPECT_FALSE(r.details.contains("gpu_code"));
  InterpreterInfo cpu = kwheel::testing::linux_cpython311("2.11.0+cpu");
  ValidateOptions o;
  o.cuda_device = kH100;
  r = validate_wheel(cuda_wheel_file(b, "cpu", {{{kSass, 100}}}), cpu, o);
  EXPECT_NE(r.reason.find("has no pip"), std::string::npos) << r.reason;
}

namespace {

// What validate_wheels told its front-end, in the order it told it.
struct Heard {
  std::vector<std::string> events;
  ValidateFeedback feedback() {
    return {{[this](const std::string& l) { events.push_back("info: " + l); }, [this](const std::string& l) { events.push_back("warn: " + l); }},
            [this](const fs::path& w) { events.push_back("start: " + w.filename().string()); },
            [this](const ValidationResult& r) { events.push_back(std::string("result: ") + status_name(r.status) + " " + r.wheel.filename().string()); }};
  }
};

}  // namespace

TEST(ValidateWheels, JudgesEachWheelAsValidateWheelDoesAndReportsAsItGoes) {
  kwheel::testing::TempDir d;
  const auto plain = d / "demo-1.0-py3-none-any.whl";
  write_test_wheel(plain, {{"demo/__init__.py", ""}, {"demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"}},
                   "demo-1.0.dist-info/RECORD");
  const auto needs_torch = d / "relu-1.0+torch2.7.cpu-py3-none-any.whl";
  write_test_wheel(needs_torch,
                   {{"relu/__init__.py", ""}, {"relu-1.0+torch2.7.cpu.dist-info/METADATA", "Metadata-Version: 2.1\nName: relu\nVersion: 1.0+torch2.7.cpu\nRequires-Dist: torch==2.7.*\n"}},
                   "relu-1.0+torch2.7.cpu.dist-info/RECORD");
  const auto broken = d / "broken-1.0-py3-none-any.whl";
  kwheel::testing::write_file(broken, "not a zip");
  InterpreterInfo no_torch = kwheel::testing::linux_cpython311("2.7.1");
  no_torch.torch.reset();
  const std::vector<fs::path> wheels{plain, needs_torch, broken};

  Heard heard;
  const ValidationRun run = validate_wheels(wheels, no_torch, ValidateOptions{}, heard.feedback());
  ASSERT_EQ(run.results.size(), 3u);
  for (size_t i = 0; i < wheels.size(); ++i) {
    const ValidationResult alone = validate_wheel(wheels[i], no_torch, ValidateOptions{});
    EXPECT_EQ(run.results[i].wheel, wheels[i]);
    EXPECT_EQ(run.results[i].status, alone.status) << i;
    EXPECT_EQ(run.results[i].reason, alone.reason) << i;
    EXPECT_EQ(run.results[i].details, alone.details) << i;
  }
  EXPECT_EQ(run.results[0].status, ValidationResult::Status::skip);
  EXPECT_EQ(run.results[1].status, ValidationResult::Status::skip);
  EXPECT_EQ(run.results[2].status, ValidationResult::Status::fail);
  EXPECT_EQ(run.count(ValidationResult::Status::skip), 2u);
  EXPECT_EQ(run.count(ValidationResult::Status::fail), 1u);
  EXPECT_EQ(run.count(ValidationResult::Status::pass), 0u);
  EXPECT_FALSE(run.cuda_device.has_value());
  const std::vector<std::string> expected{"info: validating 3 wheel(s) with /usr/bin/python3 (Python 3.11, torch none)",
                                          "start: demo-1.0-py3-none-any.whl",
                                          "result: SKIP demo-1.0-py3-none-any.whl",
                                          "start: relu-1.0+torch2.7.cpu-py3-none-any.whl",
                                          "result: SKIP relu-1.0+torch2.7.cpu-py3-none-any.whl",
                                          "start: broken-1.0-py3-none-any.whl",
                                          "result: FAIL broken-1.0-py3-none-any.whl"};
  EXPECT_EQ(heard.events, expected);

  const nlohmann::json j = to_json(run);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["passed"], 0);
  EXPECT_EQ(j["failed"], 1);
  EXPECT_EQ(j["skipped"], 2);
  ASSERT_EQ(j["wheels"].size(), 3u);
  EXPECT_EQ(j["wheels"][2]["filename"], "broken-1.0-py3-none-any.whl");
  EXPECT_EQ(j["wheels"][2]["result"], "FAIL");
  EXPECT_FALSE(j["interpreter"].contains("cuda_device"));
}

TEST(ValidateWheels, ARunWithoutAPassOrAFailIsUntestedAndFailsUnlessAllowed) {
  using S = ValidationResult::Status;
  auto run_of = [](std::vector<S> statuses, bool allow_skip) {
    ValidationRun run;
    run.allow_skip = allow_skip;
    for (S s : statuses) run.results.push_back(ValidationResult{{}, s, {}, {}, {}});
    return run;
  };
  const ValidationRun skipped = run_of({S::skip, S::skip, S::skip, S::skip}, false);
  EXPECT_EQ(skipped.outcome(), ValidationRun::Outcome::untested);
  EXPECT_FALSE(skipped.ok());
  EXPECT_EQ(skipped.exit_code(), 10);
  EXPECT_EQ(skipped.summary().rfind("0 PASS, 0 FAIL, 4 SKIP: nothing was tested", 0), 0u) << skipped.summary();
  EXPECT_NE(skipped.summary().find("--allow-skip to accept this"), std::string::npos) << skipped.summary();
  EXPECT_EQ(to_json(skipped)["outcome"], "untested");
  EXPECT_EQ(to_json(skipped)["ok"], false);

  const ValidationRun allowed = run_of({S::skip}, true);
  EXPECT_TRUE(allowed.ok());
  EXPECT_EQ(allowed.exit_code(), 0);
  EXPECT_NE(allowed.summary().find("accepted with --allow-skip"), std::string::npos) << allowed.summary();
  EXPECT_EQ(run_of({}, false).exit_code(), 10);  // nothing at all is nothing tested too

  EXPECT_EQ(run_of({S::skip, S::pass}, false).outcome(), ValidationRun::Outcome::passed);
  EXPECT_EQ(run_of({S::skip, S::pass}, false).exit_code(), 0);
  const ValidationRun failed = run_of({S::pass, S::fail, S::skip}, true);  // --allow-skip never hides a FAIL
  EXPECT_EQ(failed.exit_code(), 8);
  EXPECT_EQ(failed.summary(), "1 PASS, 1 FAIL, 1 SKIP: 1 wheel failed");
  EXPECT_EQ(to_json(failed)["outcome"], "failed");
}

TEST(ValidateWheels, AsksForTheGpuOnlyWhenACudaWheelIsThere) {
  // An interpreter whose GPU probe fails (/bin/false): the warning shows
  // whether it was asked. The wheels do not exist, so each fails alone.
  kwheel::testing::TempDir d;
  InterpreterInfo broken = kwheel::testing::linux_cpython311("2.7.1", "12.6");
  broken.executable = "/bin/false";
  auto warnings = [&](const std::vector<std::string>& names, const std::string& device) {
    std::vector<fs::path> wheels;
    for (const auto& n : names) wheels.push_back(d / n);
    ValidateOptions o;
    o.device = device;
    std::vector<std::string> warned;
    ValidateFeedback f;
    f.on_warn = [&](const std::string& l) { warned.push_back(l); };
    const ValidationRun run = validate_wheels(wheels, broken, o, f);
    EXPECT_EQ(run.count(ValidationResult::Status::fail), names.size());
    return warned;
  };
  const std::string cuda = "relu-1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl";
  const std::string cpu = "relu-1.0+torch2.7.cpu-cp39-abi3-manylinux_2_28_x86_64.whl";
  EXPECT_TRUE(warnings({cpu, "not-a-wheel-name.whl"}, "auto").empty());
  EXPECT_TRUE(warnings({cpu, cuda}, "cpu").empty());
  const auto warned = warnings({"not-a-wheel-name.whl", cpu, cuda}, "auto");
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_EQ(warned[0].rfind("cannot tell which GPU this is, so CUDA wheels are not checked against it: ", 0), 0u) << warned[0];
}

TEST(ValidateWheels, ProbesTheGpuThenSkipsOnlyWheelsNoObjectOfWhichRunsOnIt) {
  // The probe seam: an "interpreter" that answers the GPU probe as torch
  // on an H100 would. One wheel has an sm90/ and an sm100/ object (runs,
  // the sm100 one listed); the other has code for sm_100 only (SKIP).
  kwheel::testing::TempDir d, a, b;
  const auto probe = d / "python";
  kwheel::testing::write_file(probe, "#!/bin/sh\necho '{\"available\": true, \"capability\": \"9.0\", \"name\": \"NVIDIA H100\"}'\n");
  fs::permissions(probe, fs::perms::owner_all);
  InterpreterInfo in = kwheel::testing::linux_cpython311("2.11.0+cu130", "13.0");
  in.executable = probe.string();
  const auto both = cuda_wheel_file(a, "cu130", {{{kSass, 90}}, {{kSass, 100}}});
  const auto sm100 = cuda_wheel_file(b, "cu130", {{{kSass, 100}}});
  ValidateOptions o;
  o.device = "auto";
  const ValidationRun run = validate_wheels({both, sm100}, in, o, {});
  ASSERT_TRUE(run.cuda_device.has_value());
  EXPECT_EQ(run.cuda_device->capability.capability(), "9.0");
  ASSERT_EQ(run.results.size(), 2u);
  EXPECT_EQ(run.results[0].status, ValidationResult::Status::fail);  // ran on, to the missing pip
  EXPECT_EQ(run.results[0].details["gpu_code"]["no_code_for_device"], nlohmann::json::array({"relu/_relu1.abi3.so"}));
  EXPECT_EQ(run.results[1].status, ValidationResult::Status::skip);
  EXPECT_EQ(run.results[1].reason, "this GPU is sm_90; relu/_relu0.abi3.so has code for sm_100 only");
  const nlohmann::json j = to_json(run);
  EXPECT_EQ(j["wheels"][0]["details"]["gpu_code"]["no_code_for_device"], nlohmann::json::array({"relu/_relu1.abi3.so"}));
  EXPECT_EQ(j["skipped"], 1);
}
