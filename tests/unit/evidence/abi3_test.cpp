#include "kwheel/evidence/abi3.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "elf_fixtures.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/manylinux.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

TEST(Abi3StableList, Python39FromCpythonToml) {
  const StableAbi& abi = StableAbi::builtin();
  EXPECT_EQ(abi.python(), "3.9");
  EXPECT_NE(abi.source().find("stable_abi.toml"), std::string::npos);
  EXPECT_GT(abi.size(), 700u);
  EXPECT_TRUE(abi.contains("PyArg_ParseTuple"));
  EXPECT_TRUE(abi.contains("PyModule_Create2"));
  EXPECT_TRUE(abi.contains("_Py_Dealloc"));        // abi_only: Py_DECREF expands to it
  EXPECT_TRUE(abi.contains("PyExc_TypeError"));    // data
  EXPECT_TRUE(abi.contains("PyCMethod_New"));      // added in 3.9
  EXPECT_FALSE(abi.contains("Py_NewRef"));         // 3.10
  EXPECT_FALSE(abi.contains("PyUnicode_AsUTF8AndSize"));  // 3.10
  EXPECT_FALSE(abi.contains("PyErr_SetFromWindowsErr"));  // MS_WINDOWS only
  EXPECT_FALSE(abi.contains("_PyObject_GetAttrId"));
}

// Every listed symbol must be something a real Linux libpython exports: a
// typo or a Windows-only entry in the generated list would show up here.
TEST(Abi3StableList, AllExportedByInstalledLibpython) {
  std::filesystem::path lib;
  for (const char* v : {"3.13", "3.12", "3.11", "3.10", "3.9"}) {
    const std::filesystem::path p = std::string("/usr/lib/x86_64-linux-gnu/libpython") + v + ".so.1.0";
    if (std::filesystem::exists(p)) {
      lib = p;
      break;
    }
  }
  if (lib.empty()) GTEST_SKIP() << "no shared libpython installed";
  std::set<std::string> exported;
  for (const auto& s : read_elf(lib).dynamic_symbols) {
    if (s.defined) exported.insert(s.name);
  }
  const auto doc = nlohmann::json::parse(read_text(std::filesystem::path(KWHEEL_SOURCE_DIR) / "manylinux" / "stable_abi.json"));
  for (const auto& s : doc.at("symbols")) {
    EXPECT_TRUE(exported.count(s.at("name").get<std::string>())) << s.at("name") << " not exported by " << lib;
  }
}

TEST(Abi3Check, ThreeCases) {
  TempDir d;
  const auto none = build_c(d, "_none.so", "int f(void) { return 1; }\n");
  const auto stable = build_c(d, "_stable.abi3.so",
                              "void* PyLong_FromLong(long); void _Py_Dealloc(void*);\n"
                              "void* PyInit__stable(void) { void* o = PyLong_FromLong(1); _Py_Dealloc(o); return o; }\n");
  const auto unstable = build_c(d, "_unstable.abi3.so",
                                "void* PyUnicode_AsUTF8AndSize(void*, long*); void* _PyObject_GetAttrId(void*, void*);\n"
                                "void* PyLong_FromLong(long);\n"
                                "void* PyInit__unstable(void) { long n; PyUnicode_AsUTF8AndSize(0, &n);"
                                " _PyObject_GetAttrId(0, 0); return PyLong_FromLong(n); }\n");

  std::vector<ElfInfo> files{read_elf(none)};
  auto r = check_abi3(files);
  EXPECT_EQ(r.status, Abi3Status::no_python_api);
  EXPECT_EQ(r.python_symbols, 0u);

  files.push_back(read_elf(stable));
  r = check_abi3(files);
  EXPECT_EQ(r.status, Abi3Status::stable_abi_only);
  EXPECT_EQ(r.python_symbols, 2u);  // the defined PyInit__stable is an export, not an import
  EXPECT_TRUE(r.non_stable.empty());

  files.push_back(read_elf(unstable));
  files.back().name = "relu/_unstable.abi3.so";  // reports name the object by its path in the wheel
  r = check_abi3(files);
  EXPECT_EQ(r.status, Abi3Status::non_stable);
  ASSERT_EQ(r.non_stable.size(), 2u);
  EXPECT_EQ(r.non_stable[0].symbol, "PyUnicode_AsUTF8AndSize");
  EXPECT_EQ(r.non_stable[0].file, "relu/_unstable.abi3.so");
  EXPECT_EQ(r.non_stable[1].symbol, "_PyObject_GetAttrId");
  EXPECT_EQ(to_string(r.status), "non_stable");

  ManylinuxOptions o;
  o.arch = "x86_64";
  o.require_abi3 = true;
  const auto report = assess_manylinux(files, o);
  EXPECT_FALSE(report.ok());
  EXPECT_TRUE(std::any_of(report.problems.begin(), report.problems.end(), [](const std::string& p) {
    return p == "relu/_unstable.abi3.so imports `PyUnicode_AsUTF8AndSize`, which is not in the Python 3.9 stable ABI, so the "
                "wheel cannot be tagged abi3";
  }));
  o.require_abi3 = false;  // reported, but not a problem for a version-specific wheel
  EXPECT_TRUE(assess_manylinux(files, o).ok());
}

TEST(Abi3StableList, MalformedListIsAnInputError) {
  EXPECT_THROW(StableAbi::parse("[]", "s.json"), Error);
  EXPECT_THROW(StableAbi::parse("{\"python\": \"3.9\", \"symbols\": []}", "s.json"), Error);
}

// CPython's own EXTENSION_SUFFIXES spellings; anything else is no claim.
TEST(CpythonSuffix, VersionAndPlatformFromTheName) {
  auto s = cpython_suffix("pkg/_C_mxfp8.cpython-310-x86_64-linux-gnu.so");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->minor, 10u);
  EXPECT_EQ(s->platform, "x86_64-linux-gnu");
  EXPECT_EQ(s->python_tag(), "cp310");
  EXPECT_EQ(s->abi_tag(), "cp310");
  s = cpython_suffix("_C.cpython-313t-aarch64-linux-gnu.so");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->abi_tag(), "cp313t");
  EXPECT_EQ(s->python_tag(), "cp313");
  EXPECT_EQ(cpython_suffix("_C.cpython-39-darwin.so")->platform, "darwin");
  EXPECT_EQ(cpython_suffix("pkg/_C.cp311-win_amd64.pyd")->abi_tag(), "cp311");
  for (const char* none : {"_ops.abi3.so", "libfoo.so.1", "_C.so", "cpython-310-x86_64-linux-gnu.so", "_C.cpython-310.so",
                           "_C.cpython-3-x86_64-linux-gnu.so", "_C.cpython-310-x86_64-linux-gnu.so.1", "_C.cp310-win_amd64.dll",
                           "a.cpython-310-x86_64-linux-gnu/_C.so"})
    EXPECT_EQ(cpython_suffix(none), std::nullopt) << none;
}

}  // namespace
}  // namespace kwheel
