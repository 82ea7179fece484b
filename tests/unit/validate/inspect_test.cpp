// inspect_path on shared objects compiled here and on wheels holding them
// (elf_fixtures.hpp builds the objects with today's toolchain). Expected
// policies come from glibc's symbol versions (clock_gettime moved into libc
// at GLIBC_2.17, statx arrived in GLIBC_2.28) and PEP 600's tag rules.
#include "kwheel/validate/inspect.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "elf_fixtures.hpp"
#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

namespace kwheel {
namespace {

namespace fs = std::filesystem;
using testing::build_c;
using testing::error_of;
using Dir = testing::TempDir;

const char* kNeeds217 = "#include <time.h>\nlong f(void) { struct timespec t; return clock_gettime(0, &t); }\n";
const char* kNeeds228 =
    "#define _GNU_SOURCE\n#include <sys/stat.h>\n#include <fcntl.h>\n"
    "int f(void) { struct statx st; return statx(0, \"x\", 0, 0, &st); }\n";
const std::string kCommit = "89abcdef0123456789abcdef0123456789abcdef";

bool lists(const std::vector<NeededLibrary>& libs, const std::string& soname) {
  return std::any_of(libs.begin(), libs.end(), [&](const NeededLibrary& n) { return n.soname == soname; });
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// A wheel `filename` in `d` holding `members` plus METADATA, WHEEL and RECORD.
fs::path make_wheel(const Dir& d, const std::string& filename, std::vector<std::pair<std::string, std::string>> members,
                    const std::string& extra_metadata = "") {
  const std::string name = filename.substr(0, filename.find('-'));
  const std::string rest = filename.substr(name.size() + 1);
  const std::string dist_info = name + "-" + rest.substr(0, rest.find('-')) + ".dist-info";
  members.emplace_back(dist_info + "/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + rest.substr(0, rest.find('-')) +
                                                     "\n" + extra_metadata);
  members.emplace_back(dist_info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n");
  const fs::path path = d / filename;
  testing::write_test_wheel(path, members, dist_info + "/RECORD");
  return path;
}

TEST(Inspect, SharedObjectNeedingGlibc217) {
  Dir d;
  const Inspection r = inspect_path(build_c(d, "_ops.so", kNeeds217), {});
  EXPECT_EQ(r.kind, "shared object");
  EXPECT_EQ(r.files, std::vector<std::string>{"_ops.so"});
  EXPECT_EQ(r.current_tags, "");
  EXPECT_FALSE(r.tagged_abi3);
  EXPECT_TRUE(r.ok()) << joined(r.report.problems);
  EXPECT_EQ(r.report.arch, "x86_64");
  EXPECT_EQ(r.report.best_policy, "manylinux_2_17");
  EXPECT_EQ(r.report.platform_tag, "manylinux_2_17_x86_64");
  // PEP 600: manylinux_2_17 is the old manylinux2014.
  EXPECT_EQ(r.report.compressed_tag, "manylinux2014_x86_64.manylinux_2_17_x86_64");
  EXPECT_EQ(r.report.max_versions.at("GLIBC"), "2.17");
  EXPECT_TRUE(lists(r.report.whitelisted, "libc.so.6"));
  EXPECT_FALSE(r.kernel.has_value());
  EXPECT_FALSE(r.revision.has_value());
}

TEST(Inspect, WheelReportsItsObjectsAndTags) {
  Dir d;
  const std::string so = testing::read_text(build_c(d, "lib228.so", kNeeds228));
  const fs::path whl = make_wheel(d, "img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl",
                                  {{"img2gray/__init__.py", "\n"}, {"img2gray/_ops.abi3.so", so}});
  const Inspection r = inspect_path(whl, {});
  EXPECT_EQ(r.kind, "wheel");
  EXPECT_EQ(r.files, std::vector<std::string>{"img2gray/_ops.abi3.so"});
  EXPECT_EQ(r.current_tags, "manylinux_2_28_x86_64");
  EXPECT_TRUE(r.tagged_abi3);
  EXPECT_TRUE(r.ok()) << joined(r.report.problems);
  EXPECT_EQ(r.report.best_policy, "manylinux_2_28");
  EXPECT_EQ(r.report.max_versions.at("GLIBC"), "2.28");
}

TEST(Inspect, WheelWithSeveralObjectsTakesTheNewestNeed) {
  Dir d;
  const std::string a = testing::read_text(build_c(d, "a.so", kNeeds217));
  const std::string b = testing::read_text(build_c(d, "b.so", kNeeds228));
  const fs::path whl = make_wheel(d, "pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                                  {{"pkg/a.so", a}, {"pkg/sub/b.cpython-311-x86_64-linux-gnu.so", b}});
  const Inspection r = inspect_path(whl, {});
  EXPECT_EQ(r.current_tags, "manylinux_2_17_x86_64.manylinux2014_x86_64");
  EXPECT_FALSE(r.tagged_abi3);
  std::vector<std::string> files = r.files;
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"pkg/a.so", "pkg/sub/b.cpython-311-x86_64-linux-gnu.so"}));
  EXPECT_EQ(r.report.best_policy, "manylinux_2_28");
  EXPECT_NE(r.report.reason.find("b.cpython-311-x86_64-linux-gnu.so"), std::string::npos) << r.report.reason;
}

TEST(Inspect, ExternalLibraryIsAProblemUnlessAllowed) {
  Dir d;
  build_c(d, "libfoo.so.1", "int foo(void) { return 1; }\n", "-Wl,-soname,libfoo.so.1");
  const fs::path so = build_c(d, "ext.so", "int foo(void);\nint g(void) { return foo(); }\n", "./libfoo.so.1");
  Inspection r = inspect_path(so, {});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(lists(r.report.external, "libfoo.so.1"));
  InspectOptions allow;
  allow.allowed_external = {"libfoo.so.1"};
  r = inspect_path(so, allow);
  EXPECT_TRUE(r.ok()) << joined(r.report.problems);
  EXPECT_TRUE(lists(r.report.allowed_external, "libfoo.so.1"));
}

// An executable `tool` (with libc) needing `soname`, which a stub in
// `d` provides at link time.
std::string tool_needing(const Dir& d, const std::string& soname) {
  const fs::path lib = build_c(d, soname, "int foo(void) { return 1; }\n", "-Wl,-soname," + soname);
  testing::write_file(d / "tool.c", "int foo(void);\nint main(void) { return foo(); }\n");
  testing::sh(d.path(), "cc -O1 tool.c -o tool '" + lib.string() + "'");
  return testing::read_text(d / "tool");
}

TEST(Inspect, BinaryScriptNeedingASystemLibraryIsNotManylinux) {
  // What `pip wheel` makes of kwheel before auditwheel repair: the binary
  // in .data/scripts needs a library the wheel does not carry.
  Dir d;
  const std::string tool = tool_needing(d, "libfoo.so.1");
  const Inspection r = inspect_path(make_wheel(d, "tool-1.0-py3-none-linux_x86_64.whl", {{"tool-1.0.data/scripts/tool", tool}}), {});
  EXPECT_EQ(r.files, std::vector<std::string>{"tool-1.0.data/scripts/tool"});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(lists(r.report.external, "libfoo.so.1"));
  EXPECT_TRUE(lists(r.report.whitelisted, "libc.so.6"));
}

TEST(Inspect, LibrariesGraftedBesideARepairedScriptAreProvided) {
  // What auditwheel repair makes of it: the binary moved to tool.scripts/
  // (a Python shim left in .data/scripts), the library grafted into
  // tool.libs/ under a hashed soname the binary now needs.
  Dir d;
  const std::string tool = tool_needing(d, "libfoo-1a2b3c4d.so.1");
  const std::string lib = testing::read_text(d / "libfoo-1a2b3c4d.so.1");
  const Inspection r = inspect_path(make_wheel(d, "tool-1.0-py3-none-manylinux_2_17_x86_64.whl",
                                               {{"tool-1.0.data/scripts/tool", "#!python\nimport os\n"},
                                                {"tool.scripts/tool", tool},
                                                {"tool.libs/libfoo-1a2b3c4d.so.1", lib}}),
                                    {});
  EXPECT_EQ(r.files, (std::vector<std::string>{"tool.scripts/tool", "tool.libs/libfoo-1a2b3c4d.so.1"}));
  EXPECT_TRUE(r.ok()) << joined(r.report.problems);
  EXPECT_TRUE(r.report.external.empty());
  EXPECT_FALSE(lists(r.report.whitelisted, "libfoo-1a2b3c4d.so.1"));
  EXPECT_TRUE(lists(r.report.whitelisted, "libc.so.6"));
}

TEST(Inspect, Abi3TagIsHeldToTheStableAbi) {
  // PyCode_New is not in the limited API (CPython's Misc/stable_abi.toml);
  // PyLong_FromLong is.
  Dir d;
  const std::string bad = testing::read_text(build_c(d, "bad.so", "void* PyCode_New(void);\nvoid* f(void) { return PyCode_New(); }\n"));
  const std::string good = testing::read_text(build_c(d, "good.so", "void* PyLong_FromLong(long);\nvoid* f(void) { return PyLong_FromLong(1); }\n"));
  EXPECT_TRUE(inspect_path(make_wheel(d, "g-1.0-cp39-abi3-manylinux_2_17_x86_64.whl", {{"g/_x.abi3.so", good}}), {}).ok());
  const Inspection r = inspect_path(make_wheel(d, "b-1.0-cp39-abi3-manylinux_2_17_x86_64.whl", {{"b/_x.abi3.so", bad}}), {});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(joined(r.report.problems).find("PyCode_New"), std::string::npos) << joined(r.report.problems);
  // The same object in a wheel for one CPython version claims no stable ABI.
  EXPECT_TRUE(inspect_path(make_wheel(d, "c-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", {{"c/_x.so", bad}}), {}).ok());
}

TEST(Inspect, RecordedHubRevisionIsReported) {
  Dir d;
  const std::string so = testing::read_text(build_c(d, "x.so", kNeeds217));
  const fs::path whl = make_wheel(d, "img2gray-0.1.0-cp39-abi3-manylinux_2_17_x86_64.whl", {{"img2gray/_x.abi3.so", so}},
                                  "Project-URL: Hub revision, https://huggingface.co/kernels/kernels-community/img2gray/tree/" + kCommit + "\n");
  const Inspection r = inspect_path(whl, {});
  ASSERT_TRUE(r.revision.has_value());
  EXPECT_EQ(r.revision->first, "kernels-community/img2gray");
  EXPECT_EQ(r.revision->second, kCommit);
}

TEST(Inspect, WheelWithoutSharedObjectsIsAnInputError) {
  Dir d;
  const fs::path whl = make_wheel(d, "pure-1.0-py3-none-any.whl", {{"pure/__init__.py", "x = 1\n"}});
  const std::string msg = error_of([&] { inspect_path(whl, {}); });
  EXPECT_NE(msg.find("pure-1.0-py3-none-any.whl"), std::string::npos) << msg;
}

TEST(Inspect, MemberNamedLikeAnObjectButNotOneIsAnInputError) {
  Dir d;
  const fs::path whl = make_wheel(d, "fake-1.0-cp39-abi3-manylinux_2_17_x86_64.whl", {{"fake/_ops.abi3.so", "not an ELF file"}});
  const std::string msg = error_of([&] { inspect_path(whl, {}); });
  EXPECT_NE(msg.find("fake/_ops.abi3.so"), std::string::npos) << msg;
}

TEST(Inspect, OtherFilesAreRefused) {
  Dir d;
  testing::write_file(d / "notes.so", "plain text");
  EXPECT_NE(error_of([&] { inspect_path(d / "notes.so", {}); }).find("notes.so"), std::string::npos);
  error_of([&] { inspect_path(d / "missing.so", {}); }, ErrorKind::not_found);
}

}  // namespace
}  // namespace kwheel
