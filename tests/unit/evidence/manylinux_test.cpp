#include "kwheel/evidence/manylinux.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "elf_fixtures.hpp"
#include "kwheel/base/error.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

bool mentions(const std::vector<std::string>& lines, const std::string& fragment) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(fragment) != std::string::npos; });
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

bool lists(const std::vector<NeededLibrary>& libs, const std::string& soname) {
  return std::any_of(libs.begin(), libs.end(), [&](const NeededLibrary& n) { return n.soname == soname; });
}

// Reports name objects as the caller names them (build and inspect: the
// path in the wheel); here, as a lone .so, by its file name.
ManylinuxReport assess(const std::vector<std::filesystem::path>& files, ManylinuxOptions options) {
  std::vector<ElfInfo> infos;
  for (const auto& f : files) {
    infos.push_back(read_elf(f));
    infos.back().name = f.filename().string();
  }
  return assess_manylinux(infos, options);
}

ManylinuxOptions x86(std::optional<std::string> requested = std::nullopt) {
  ManylinuxOptions o;
  o.arch = "x86_64";
  o.backend = "cuda";
  o.requested = std::move(requested);
  return o;
}

const char* kNeeds217 = "#include <time.h>\nlong f(void) { struct timespec t; return clock_gettime(0, &t); }\n";
const char* kNeeds228 =
    "#define _GNU_SOURCE\n#include <sys/stat.h>\n#include <fcntl.h>\n"
    "int f(void) { struct statx st; return statx(0, \"x\", 0, 0, &st); }\n";
const char* kNeeds234 =
    "#include <pthread.h>\nstatic void* run(void* x) { return x; }\n"
    "int f(void) { pthread_t t; return pthread_create(&t, 0, run, 0); }\n";

// ---- policy data ----

TEST(PolicyData, BuiltinComesFromAuditwheel) {
  const PolicySet& set = PolicySet::builtin();
  EXPECT_NE(set.source().find("auditwheel 6.8.2"), std::string::npos) << set.source();
  EXPECT_TRUE(set.architectures().count("x86_64"));
  EXPECT_TRUE(set.architectures().count("aarch64"));
  const auto ladder = set.for_arch("x86_64");
  ASSERT_GE(ladder.size(), 3u);
  EXPECT_EQ(ladder.front()->name, "manylinux_2_5");
  EXPECT_EQ(ladder.back()->name, "linux");
  for (std::size_t i = 1; i < ladder.size(); ++i) EXPECT_GT(ladder[i - 1]->priority, ladder[i]->priority);
  EXPECT_EQ(set.for_arch("aarch64").front()->name, "manylinux_2_17");  // no aarch64 before 2014
  EXPECT_TRUE(set.for_arch("sparc").empty());
}

// The copy must say exactly what auditwheel's own file says for the arches
// we keep; loading the original bare-list file exercises that format too.
TEST(PolicyData, SameAsInstalledAuditwheel) {
  const std::filesystem::path venv = std::filesystem::path(KWHEEL_SOURCE_DIR) / ".venv" / "lib";
  std::filesystem::path original;
  if (std::filesystem::exists(venv)) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(venv)) {
      if (e.path().filename() == "manylinux-policy.json" && e.path().parent_path().filename() == "policy") original = e.path();
    }
  }
  if (original.empty()) GTEST_SKIP() << "auditwheel is not installed in .venv";
  const PolicySet upstream = PolicySet::load(original);
  for (const std::string arch : {"x86_64", "aarch64"}) {
    const auto ours = PolicySet::builtin().for_arch(arch);
    const auto theirs = upstream.for_arch(arch);
    ASSERT_EQ(ours.size(), theirs.size()) << arch;
    for (std::size_t i = 0; i < ours.size(); ++i) {
      EXPECT_EQ(ours[i]->name, theirs[i]->name);
      EXPECT_EQ(ours[i]->priority, theirs[i]->priority);
      EXPECT_EQ(ours[i]->lib_whitelist, theirs[i]->lib_whitelist);
      EXPECT_EQ(ours[i]->blacklist, theirs[i]->blacklist);
      if (ours[i]->is_manylinux()) {
        EXPECT_EQ(ours[i]->symbol_versions.at(arch), theirs[i]->symbol_versions.at(arch));
      }
    }
  }
}

TEST(PolicyData, LegacyAliasesAndCompressedTags) {
  const PolicySet& set = PolicySet::builtin();
  const ManylinuxPolicy* p2014 = set.find("manylinux2014", "x86_64");
  ASSERT_NE(p2014, nullptr);
  EXPECT_EQ(p2014->name, "manylinux_2_17");
  EXPECT_EQ(compressed_platform_tag(*p2014, "x86_64"), "manylinux2014_x86_64.manylinux_2_17_x86_64");
  EXPECT_EQ(set.find("manylinux1", "x86_64")->name, "manylinux_2_5");
  EXPECT_EQ(set.find("manylinux2010_x86_64", "x86_64")->name, "manylinux_2_12");
  EXPECT_EQ(set.find("manylinux_2_28_aarch64", "aarch64")->name, "manylinux_2_28");
  EXPECT_EQ(compressed_platform_tag(*set.find("manylinux_2_28", "x86_64"), "x86_64"), "manylinux_2_28_x86_64");
  EXPECT_EQ(set.find("manylinux_2_5", "aarch64"), nullptr);
  EXPECT_EQ(set.find("manylinux_2_28_aarch64", "x86_64"), nullptr);
  EXPECT_EQ(set.find("manylinux_9_99", "x86_64"), nullptr);
}

TEST(PolicyData, TorchProvidedMatching) {
  const TorchProvided& t = TorchProvided::builtin();
  ASSERT_NE(t.match("libtorch.so", "cpu"), nullptr);
  EXPECT_FALSE(t.match("libtorch.so", "cpu")->reason.empty());
  EXPECT_EQ(t.judge("libcudart.so.12", {"cuda", "", 0}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libcudart.so.13", {"", "", 0}).kind, TorchVerdict::Kind::provided);
  EXPECT_EQ(t.judge("libcudart.so.12", {"cpu", "", 0}).kind, TorchVerdict::Kind::absent);
  EXPECT_EQ(t.judge("libcudnn_ops.so.9", {"cuda", "2.15", 13}).kind, TorchVerdict::Kind::provided);
  EXPECT_NE(t.match("libamdhip64.so.6", "rocm"), nullptr);
  EXPECT_EQ(t.match("libamdhip64.so.6", "cuda"), nullptr);
  EXPECT_EQ(t.match("libpng16.so.16", ""), nullptr);
  for (const auto& lib : t.all()) EXPECT_FALSE(lib.reason.empty()) << lib.pattern;
}

TEST(PolicyData, MalformedPolicyFilesAreInputErrors) {
  EXPECT_THROW(PolicySet::parse("{", "p.json"), Error);
  EXPECT_THROW(PolicySet::parse("{\"policies\": [{\"name\": \"manylinux_2_5\"}]}", "p.json"), Error);
  EXPECT_THROW(PolicySet::parse("{\"policies\": []}", "p.json"), Error);  // no linux base
  EXPECT_THROW(TorchProvided::parse("{\"libraries\": [{\"pattern\": \"x\"}]}", "t.json"), Error);
}

TEST(PolicyData, VersionHelpers) {
  EXPECT_LT(compare_versions("2.9", "2.17"), 0);
  EXPECT_GT(compare_versions("3.4.29", "3.4.3"), 0);
  EXPECT_EQ(compare_versions("2.2.5", "2.2.5"), 0);
  EXPECT_LT(compare_versions("2.2", "2.2.5"), 0);
  EXPECT_EQ(split_symbol_version("GLIBC_2.17"), (std::pair<std::string, std::string>{"GLIBC", "2.17"}));
  EXPECT_EQ(split_symbol_version("CXXABI_TM_1"), (std::pair<std::string, std::string>{"CXXABI", "TM_1"}));
}

// ---- decisions on objects built here ----

TEST(PolicyDecision, Glibc217) {
  TempDir d;
  const auto r = assess({build_c(d, "lib217.so", kNeeds217)}, x86());
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_EQ(r.policy, "manylinux_2_17");
  EXPECT_EQ(r.platform_tag, "manylinux_2_17_x86_64");
  EXPECT_EQ(r.compressed_tag, "manylinux2014_x86_64.manylinux_2_17_x86_64");
  EXPECT_EQ(r.reason, "GLIBC_2.17 needed by lib217.so (symbol `clock_gettime`)");
  EXPECT_EQ(r.max_versions.at("GLIBC"), "2.17");
  ASSERT_EQ(r.libraries.size(), 1u);
  EXPECT_EQ(r.libraries[0].max_versions.at("GLIBC"), "2.17");
  EXPECT_TRUE(lists(r.whitelisted, "libc.so.6"));
}

TEST(PolicyDecision, Glibc228) {
  TempDir d;
  const auto r = assess({build_c(d, "lib228.so", kNeeds228)}, x86());
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_EQ(r.policy, "manylinux_2_28");
  EXPECT_EQ(r.reason, "GLIBC_2.28 needed by lib228.so (symbol `statx`)");
}

TEST(PolicyDecision, Glibc234) {
  TempDir d;
  const auto r = assess({build_c(d, "_img2gray_abc.abi3.so", kNeeds234)}, x86());
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_EQ(r.policy, "manylinux_2_34");
  EXPECT_EQ(r.platform_tag, "manylinux_2_34_x86_64");
  EXPECT_EQ(r.reason, "GLIBC_2.34 needed by _img2gray_abc.abi3.so (symbol `pthread_create`)");
}

// glibc 2.38 is newer than this machine's, so a stand-in libc.so.6 defining
// strlcpy@GLIBC_2.38 produces the same verneed a 2.38 link would.
TEST(PolicyDecision, Glibc238ViaStubLibc) {
  TempDir d;
  const auto libc = build_stub(d, "libc.so.6", {{"GLIBC_2.2.5", {"puts"}}, {"GLIBC_2.38", {"strlcpy"}}});
  const auto lib = build_against(d, "lib238.so", "void strlcpy(void); void puts(void);\nvoid f(void) { strlcpy(); puts(); }\n",
                                 {libc});
  const auto r = assess({lib}, x86());
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_EQ(r.policy, "manylinux_2_38");
  EXPECT_EQ(r.reason, "GLIBC_2.38 needed by lib238.so (symbol `strlcpy`)");
  EXPECT_EQ(r.max_versions.at("GLIBC"), "2.38");
}

TEST(PolicyDecision, Glibcxx3429) {
  TempDir d;
  const auto lib = build_c(d, "libcxx.so", "#include <istream>\nvoid f(std::istream& in) { char b[16]; in >> b; }\n",
                           "-std=c++20", "c++");
  const auto r = assess({lib}, x86());
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_EQ(r.policy, "manylinux_2_34");  // GLIBCXX_3.4.29 first appears in manylinux_2_34
  EXPECT_EQ(r.max_versions.at("GLIBCXX"), "3.4.29");
  EXPECT_NE(r.reason.find("GLIBCXX_3.4.29 needed by libcxx.so"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("__istream_extract"), std::string::npos) << r.reason;
}

TEST(PolicyDecision, MostCompatibleWhenNothingVersioned) {
  TempDir d;
  const auto r = assess({build_against(d, "libplain.so", "int f(void) { return 1; }\n", {})}, x86());
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_EQ(r.policy, "manylinux_2_5");
  EXPECT_EQ(r.compressed_tag, "manylinux1_x86_64.manylinux_2_5_x86_64");
  EXPECT_NE(r.reason.find("most compatible"), std::string::npos);
}

TEST(PolicyDecision, RequestedPolicyTooOldNamesTheSymbol) {
  TempDir d;
  const std::vector<std::filesystem::path> libs{build_c(d, "_img2gray_abc.abi3.so", kNeeds234),
                                                build_c(d, "libhelper.so", kNeeds217)};
  const auto r = assess(libs, x86("manylinux_2_28"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.best_policy, "manylinux_2_34");
  EXPECT_TRUE(mentions(r.problems,
                       "_img2gray_abc.abi3.so needs GLIBC_2.34 (symbol `pthread_create`) but manylinux_2_28_x86_64 "
                       "allows at most GLIBC_2.28"))
      << joined(r.problems);
  std::vector<ElfInfo> infos;
  for (const auto& l : libs) infos.push_back(read_elf(l));
  try {
    decide_manylinux(infos, x86("manylinux_2_28"));
    FAIL() << "expected Error(policy)";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::policy);
    EXPECT_NE(std::string(e.what()).find("GLIBC_2.34"), std::string::npos) << e.what();
  }
}

TEST(PolicyDecision, RequestedNewerPolicyIsKeptAndAliasesCompress) {
  TempDir d;
  const auto lib = build_c(d, "lib217.so", kNeeds217);
  auto r = assess({lib}, x86("manylinux_2_28"));
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_EQ(r.policy, "manylinux_2_28");
  EXPECT_EQ(r.best_policy, "manylinux_2_17");
  r = assess({lib}, x86("manylinux2014"));
  EXPECT_EQ(r.policy, "manylinux_2_17");
  EXPECT_EQ(r.compressed_tag, "manylinux2014_x86_64.manylinux_2_17_x86_64");
  r = assess({lib}, x86("manylinux_3_0"));
  EXPECT_TRUE(mentions(r.problems, "unknown manylinux policy 'manylinux_3_0'"));
}

TEST(PolicyDecision, ExternalLibraryIsAnErrorUnlessAllowed) {
  if (!std::filesystem::exists("/usr/include/png.h")) GTEST_SKIP() << "libpng-dev is not installed";
  TempDir d;
  const auto lib = build_c(d, "libimg.so", "#include <png.h>\nconst char* v(void) { return png_get_libpng_ver(0); }\n", "-lpng16");
  auto r = assess({lib}, x86());
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(lists(r.external, "libpng16.so.16"));
  EXPECT_TRUE(mentions(r.problems, "libpng16.so.16 needed by libimg.so is not in the manylinux whitelist")) << joined(r.problems);

  auto opts = x86();
  opts.allowed_external = {"libpng16.so.16"};
  r = assess({lib}, opts);
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_TRUE(lists(r.allowed_external, "libpng16.so.16"));
  EXPECT_TRUE(r.external.empty());
}

TEST(PolicyDecision, TorchProvidedLibrariesAreAccepted) {
  TempDir d;
  build_c(d, "libtorch.so", "void torch_fn(void) {}\n", "-Wl,-soname,libtorch.so");
  build_c(d, "libc10.so", "void c10_fn(void) {}\n", "-Wl,-soname,libc10.so");
  build_c(d, "libcudart.so.12", "void cudaMalloc(void) {}\n", "-Wl,-soname,libcudart.so.12");
  const auto kernel = build_c(d, "_ops.abi3.so", "void torch_fn(void); void c10_fn(void); void cudaMalloc(void);\n"
                                                 "void op(void) { torch_fn(); c10_fn(); cudaMalloc(); }\n",
                              "-L. -ltorch -lc10 -l:libcudart.so.12 -Wl,--no-as-needed");
  auto r = assess({kernel}, x86());
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_TRUE(lists(r.torch_provided, "libtorch.so"));
  EXPECT_TRUE(lists(r.torch_provided, "libc10.so"));
  EXPECT_TRUE(lists(r.torch_provided, "libcudart.so.12"));
  for (const auto& t : r.torch_provided) EXPECT_FALSE(t.reason.empty()) << t.soname;

  auto cpu = x86();
  cpu.backend = "cpu";  // a CPU variant cannot count on the CUDA runtime
  r = assess({kernel}, cpu);
  EXPECT_TRUE(lists(r.external, "libcudart.so.12"));
  EXPECT_TRUE(lists(r.torch_provided, "libtorch.so"));
}

TEST(PolicyDecision, AnotherCudaMajorThanTheVariantsTorchIsOneProblemPerObject) {
  TempDir d;
  build_c(d, "libcudart.so.12", "void cudaMalloc(void) {}\n", "-Wl,-soname,libcudart.so.12");
  const auto kernel = build_c(d, "_C.so", "void cudaMalloc(void);\nvoid op(void) { cudaMalloc(); }\n",
                              "-L. -l:libcudart.so.12 -Wl,--no-as-needed");
  auto cu130 = x86();
  cu130.torch_minor = "2.10";
  cu130.backend_major = 13;
  cu130.variant = "torch2.10.cu130";
  std::vector<ElfInfo> infos{read_elf(kernel)};
  infos.front().name = "xformers/_C.so";  // the member path, as the build names it
  auto r = assess_manylinux(infos, cu130);
  ASSERT_EQ(r.problems.size(), 1u) << joined(r.problems);
  const std::string& line = r.problems.front();
  EXPECT_TRUE(line.starts_with("xformers/_C.so needs libcudart.so.12, but in torch2.10.cu130, torch 2.10 with CUDA 13 provides libcudart.so.13"))
      << line;
  EXPECT_NE(line.find("rebuild it against CUDA 13 or put it in a cu12x variant"), std::string::npos) << line;
  EXPECT_TRUE(lists(r.mismatched, "libcudart.so.12"));
  EXPECT_TRUE(r.external.empty());
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  EXPECT_THROW(decide_manylinux(infos, cu130), Error);

  cu130.allowed_external = {"libcudart.so.12"};  // the user vouches for it
  r = assess_manylinux(infos, cu130);
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_TRUE(lists(r.allowed_external, "libcudart.so.12"));

  auto cu128 = x86();
  cu128.torch_minor = "2.8";
  cu128.backend_major = 12;
  r = assess_manylinux(infos, cu128);
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_TRUE(lists(r.torch_provided, "libcudart.so.12"));

  auto future = cu128;
  future.torch_minor = "2.99";
  r = assess_manylinux(infos, future);
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  ASSERT_EQ(r.warnings.size(), 1u) << joined(r.warnings);
  EXPECT_NE(r.warnings.front().find("not 2.99"), std::string::npos) << r.warnings.front();
}

TEST(PolicyDecision, LibrariesOfTheVariantAreInternal) {
  TempDir d;
  const auto helper = build_c(d, "libhelper.so", "int h(void) { return 1; }\n", "-Wl,-soname,libhelper.so.1");
  const auto ops = build_c(d, "_ops.so", "int h(void); int f(void) { return h(); }\n", "-L. -lhelper");
  const auto r = assess({ops, helper}, x86());
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_TRUE(r.external.empty());
}

// sgl-kernel ships sgl_kernel/sm90/ and sgl_kernel/sm100/common_ops.abi3.so
// (issue 32): by basename, no report could say which one needs what.
TEST(PolicyDecision, ObjectsAreNamedByTheirPathInTheWheel) {
  TempDir d;
  std::vector<ElfInfo> infos{read_elf(build_c(d, "a.so", kNeeds234)), read_elf(build_c(d, "b.so", kNeeds217))};
  infos[0].name = "sgl_kernel/sm90/common_ops.abi3.so";
  infos[1].name = "sgl_kernel/sm100/common_ops.abi3.so";
  const auto r = assess_manylinux(infos, x86());
  EXPECT_EQ(r.reason, "GLIBC_2.34 needed by sgl_kernel/sm90/common_ops.abi3.so (symbol `pthread_create`)");
  ASSERT_EQ(r.libraries.size(), 2u);
  EXPECT_EQ(r.libraries[0].file, "sgl_kernel/sm90/common_ops.abi3.so");
  EXPECT_EQ(r.libraries[1].file, "sgl_kernel/sm100/common_ops.abi3.so");
  const auto libc = std::find_if(r.whitelisted.begin(), r.whitelisted.end(), [](const NeededLibrary& n) { return n.soname == "libc.so.6"; });
  ASSERT_NE(libc, r.whitelisted.end());
  EXPECT_EQ(libc->needed_by, (std::vector<std::string>{"sgl_kernel/sm90/common_ops.abi3.so", "sgl_kernel/sm100/common_ops.abi3.so"}));
  const nlohmann::json j = r;
  EXPECT_EQ(j["libraries"][1]["file"], "sgl_kernel/sm100/common_ops.abi3.so");
  // A request the sm90 object cannot meet names it, not its twin.
  const auto old = assess_manylinux(infos, x86("manylinux_2_28"));
  EXPECT_TRUE(mentions(old.problems, "sgl_kernel/sm90/common_ops.abi3.so needs GLIBC_2.34")) << joined(old.problems);
}

TEST(PolicyDecision, ArchitectureMismatch) {
  TempDir d;
  const auto lib = build_c(d, "lib217.so", kNeeds217);
  auto bytes = read_bytes(lib);
  poke<std::uint16_t>(bytes, 18, 183);  // e_machine = EM_AARCH64
  const std::vector<ElfInfo> infos{parse_elf(bytes, "wrongarch.so")};
  const auto r = assess_manylinux(infos, x86());
  EXPECT_TRUE(mentions(r.problems, "wrongarch.so is built for aarch64 but the variant is x86_64")) << joined(r.problems);
  EXPECT_THROW(decide_manylinux(infos, x86()), Error);
}

TEST(PolicyDecision, Aarch64Variant) {
  if (!can_cross_link("aarch64-linux-gnu")) GTEST_SKIP() << "clang/lld cannot link aarch64 objects here";
  TempDir d;
  const auto libc = build_stub(d, "libc.so.6", {{"GLIBC_2.17", {"memcpy"}}, {"GLIBC_2.28", {"statx"}}}, "aarch64-linux-gnu");
  const auto lib = build_against(d, "liba64.so", "void memcpy(void); void statx(void);\nvoid f(void) { memcpy(); statx(); }\n",
                                 {libc}, "aarch64-linux-gnu");
  ManylinuxOptions o;
  o.arch = "aarch64";
  auto r = assess({lib}, o);
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_EQ(r.platform_tag, "manylinux_2_28_aarch64");
  EXPECT_EQ(r.reason, "GLIBC_2.28 needed by liba64.so (symbol `statx`)");
  r = assess({lib}, x86());
  EXPECT_TRUE(mentions(r.problems, "liba64.so is built for aarch64 but the variant is x86_64"));
  o.requested = "manylinux1";
  r = assess({lib}, o);
  EXPECT_TRUE(mentions(r.problems, "unknown manylinux policy 'manylinux1' for aarch64"));
}

TEST(PolicyDecision, WhitelistGrowsWithNewerPolicies) {
  TempDir d;
  const auto mvec = build_stub(d, "libmvec.so.1", {{"GLIBC_2.2.5", {"_ZGVbN2v_cos"}}});
  const auto lib = build_against(d, "libvec.so", "void _ZGVbN2v_cos(void);\nvoid f(void) { _ZGVbN2v_cos(); }\n", {mvec});
  const auto r = assess({lib}, x86());
  EXPECT_TRUE(r.ok()) << joined(r.problems);
  EXPECT_EQ(r.policy, "manylinux_2_24");
  EXPECT_EQ(r.reason, "libmvec.so.1 needed by libvec.so (whitelisted only from manylinux_2_24)");
}

TEST(PolicyDecision, BlacklistedSymbolsAndPrivateVersionsFitNoPolicy) {
  TempDir d;
  const auto libz = build_stub(d, "libz.so.1", {{"ZLIB_1.2.0", {"zcalloc"}}});
  auto r = assess({build_against(d, "libbl.so", "void zcalloc(void);\nvoid f(void) { zcalloc(); }\n", {libz})}, x86());
  EXPECT_EQ(r.best_policy, "linux");
  EXPECT_EQ(r.platform_tag, "linux_x86_64");
  EXPECT_TRUE(mentions(r.problems, "no manylinux policy fits x86_64: libbl.so uses `zcalloc` of libz.so.1")) << joined(r.problems);

  const auto libc = build_stub(d, "libc.so.6", {{"GLIBC_PRIVATE", {"__libc_secret"}}});
  r = assess({build_against(d, "libpriv.so", "void __libc_secret(void);\nvoid f(void) { __libc_secret(); }\n", {libc})}, x86());
  EXPECT_EQ(r.best_policy, "linux");
  EXPECT_TRUE(mentions(r.problems, "needs GLIBC_PRIVATE (symbol `__libc_secret`)")) << joined(r.problems);
}

TEST(PolicyDecision, ReportSerialisesToJson) {
  TempDir d;
  const auto r = assess({build_c(d, "_img2gray_abc.abi3.so", kNeeds234)}, x86());
  const nlohmann::json j = r;
  EXPECT_EQ(j.at("policy"), "manylinux_2_34");
  EXPECT_EQ(j.at("platform_tag"), "manylinux_2_34_x86_64");
  EXPECT_EQ(j.at("reason"), r.reason);
  EXPECT_EQ(j.at("max_versions").at("GLIBC"), "2.34");
  EXPECT_EQ(j.at("libraries").at(0).at("file"), "_img2gray_abc.abi3.so");
  EXPECT_TRUE(j.at("libraries").at(0).at("version_needs").contains("libc.so.6"));
  EXPECT_EQ(j.at("abi3").at("status"), "no_python_api");
  EXPECT_EQ(j.at("ok"), true);
  EXPECT_NE(j.at("policy_source").get<std::string>().find("auditwheel"), std::string::npos);
}

}  // namespace
}  // namespace kwheel
