// metadata.json as kernel-builder writes it: fields, types, limits, and the
// mapping of python-depends through kernels' own python_depends.json.
#include "kwheel/kernel/kernel_metadata.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "kwheel/wheel/core_metadata.hpp"
#include "kwheel/base/error.hpp"

using namespace kwheel;

namespace {

// The shape of a CUDA variant's metadata.json written by kernel-builder for
// kernels 0.17 (docs/source/kernel-requirements.md).
const char* kCuda = R"({
  "name": "flash-attn3",
  "id": "_flash_attn3_cuda_a1b2c3d",
  "version": 2,
  "license": "Apache-2.0",
  "upstream": "git@github.com:Dao-AILab/flash-attention.git",
  "source": "https://github.com/huggingface/kernels-community",
  "python-depends": ["einops", "nvidia-cutlass-dsl"],
  "kernel-depends": [{"repo-id": "kernels-community/activation", "version": 1}, {"repo-id": "org/pinned", "revision": "abc"}],
  "backend": {"type": "cuda", "archs": ["8.0", "9.0a", "10.0+PTX"]},
  "digest": {"algorithm": "sha256", "files": {"__init__.py": "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}},
  "provenance": {"kernel-builder": {"version": "0.17.2"}},
  "some-future-field": {"ignored": true}
})";

std::string error_of(std::string_view json) {
  return kwheel::testing::error_of([&] { parse_kernel_metadata(json, "variant 'v'"); });
}

}  // namespace

TEST(KernelMetadata, ParsesEveryField) {
  KernelMetadata md = parse_kernel_metadata(kCuda, "variant 'v'");
  EXPECT_EQ(md.name, "flash-attn3");
  EXPECT_EQ(md.python_name(), "flash_attn3");
  EXPECT_EQ(md.id, "_flash_attn3_cuda_a1b2c3d");
  EXPECT_EQ(md.version, 2u);
  EXPECT_EQ(md.license, "Apache-2.0");
  EXPECT_EQ(md.backend, "cuda");
  EXPECT_EQ(md.archs, (std::vector<std::string>{"8.0", "9.0a", "10.0+PTX"}));
  ASSERT_EQ(md.kernel_depends.size(), 2u);
  EXPECT_EQ(md.kernel_depends[0].repo_id, "kernels-community/activation");
  EXPECT_EQ(md.kernel_depends[0].version, 1u);
  EXPECT_EQ(md.kernel_depends[1].revision, "abc");
  ASSERT_TRUE(md.digest);
  EXPECT_EQ(md.digest->algorithm, "sha256");
  EXPECT_EQ(md.digest->files.size(), 1u);
}

TEST(KernelMetadata, OlderFilesMayLackFields) {
  KernelMetadata md = parse_kernel_metadata(R"({"python-depends": []})", "variant 'v'");
  EXPECT_FALSE(md.name);
  EXPECT_FALSE(md.version);
  EXPECT_FALSE(md.digest);
}

TEST(KernelMetadata, WrongTypesNameTheField) {
  EXPECT_NE(error_of(R"({"name": 3})").find("field 'name' must be a string"), std::string::npos);
  EXPECT_NE(error_of(R"({"version": "1"})").find("field 'version' must be an integer from 0 to 99999999"), std::string::npos);
  EXPECT_NE(error_of(R"({"version": -1})").find("field 'version'"), std::string::npos);
  EXPECT_NE(error_of(R"({"python-depends": "einops"})").find("field 'python-depends' must be a list of strings"), std::string::npos);
  EXPECT_NE(error_of(R"({"backend": {"type": "cuda", "archs": "8.0"}})").find("'backend.archs'"), std::string::npos);
  EXPECT_NE(error_of(R"({"digest": {"algorithm": "md5", "files": {}}})").find("algorithm 'md5'"), std::string::npos);
  EXPECT_NE(error_of(R"({"kernel-depends": [{"repo-id": "a/b"}]})").find("exactly one of 'version' and 'revision'"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "My_Kernel"})").find("lowercase letters"), std::string::npos);
  const std::string e = error_of(R"({"name": 3})");
  EXPECT_TRUE(e.starts_with("variant 'v': metadata.json")) << e;
}

TEST(KernelMetadata, MalformedOversizedAndDeep) {
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[]").find("must hold a JSON object, not array"), std::string::npos);
  EXPECT_NE(error_of(std::string(kMaxKernelMetadataBytes + 1, ' ')).find("over the 1 MiB limit"), std::string::npos);
  EXPECT_NE(error_of(std::string(10000, '[') + std::string(10000, ']')).find("nests deeper"), std::string::npos);
  // Brackets inside strings are not nesting.
  EXPECT_NO_THROW(parse_kernel_metadata(R"({"license": ")" + std::string(100, '[') + R"("})", "v"));
}

TEST(KernelMetadata, PythonDependsThroughKernelsMapping) {
  KernelMetadata md;
  md.python_depends = {"tvm-ffi", "einops"};
  EXPECT_EQ(python_requirements(md, "cpu", "v"), (std::vector<std::string>{"apache-tvm-ffi", "einops"}));
  md.python_depends = {"nvidia-cutlass-dsl"};
  EXPECT_EQ(python_requirements(md, "cuda", "v"), (std::vector<std::string>{"nvidia-cutlass-dsl"}));
  md.python_depends = {"onednn"};
  EXPECT_EQ(python_requirements(md, "xpu", "v"), (std::vector<std::string>{"onednn-devel"}));
  // Older files: per-backend lists, only the variant's backend counts.
  md.python_depends = {};
  md.python_depends_backends = {{"cuda", {"nvidia-cutlass-dsl"}}, {"xpu", {"onednn"}}};
  EXPECT_EQ(python_requirements(md, "cuda", "v"), (std::vector<std::string>{"nvidia-cutlass-dsl"}));
  md.python_depends = {"nvidia-cutlass-dsl"};
  md.python_depends_backends.clear();
  const std::string m = kwheel::testing::error_of([&] { python_requirements(md, "cpu", "variant 'torch-cpu'"); });
  EXPECT_NE(m.find("variant 'torch-cpu': metadata.json python-depends names 'nvidia-cutlass-dsl'"), std::string::npos) << m;
  EXPECT_NE(m.find("einops, helion, tvm-ffi"), std::string::npos) << m;
}

TEST(KernelMetadata, KernelDependsBecomeVersionRanges) {
  KernelMetadata md = parse_kernel_metadata(kCuda, "v");
  EXPECT_EQ(kernel_requirements(md, ""), (std::vector<std::string>{"activation>=1,<2", "pinned"}));
  // The prefix goes before the name, and the result is PEP 503-normalised.
  EXPECT_EQ(kernel_requirements(md, "Acme_"), (std::vector<std::string>{"acme-activation>=1,<2", "acme-pinned"}));
}

namespace {

std::string with_depends(const std::string& entry) {
  return R"({"name": "kk", "kernel-depends": [)" + entry + "]}";
}

}  // namespace

// Issue 30, finding 1: a repo id is copied into Requires-Dist; anything but
// the Hub's id grammar (a direct URL, a marker, an extra, a path) is refused.
TEST(KernelMetadata, KernelDependsRepoIdsFollowTheHubsGrammar) {
  for (const char* id : {"org/evil @ http://127.0.0.1:9/evil-1.0-py3-none-any.whl", "org/x; python_version > '3'", "org/x[extra]",
                         "a/b/c", "a/..", "org/x y", "org", "/x", "org/x --index-url http://e", "org/x\\u001b[31m"}) {
    const std::string e = error_of(with_depends(R"({"repo-id": ")" + std::string(id) + R"(", "version": 1})"));
    EXPECT_NE(e.find("'kernel-depends'"), std::string::npos) << id << ": " << e;
  }
  EXPECT_EQ(parse_kernel_metadata(with_depends(R"({"repo-id": "Org.1/x_y-z", "version": 1})"), "v").kernel_depends[0].repo_id, "Org.1/x_y-z");
}

// Finding 2: 2^64-1 would wrap to "<0" in the range.
TEST(KernelMetadata, VersionsAreBoundedIntegers) {
  for (const char* v : {"18446744073709551615", "100000000", "-1", "1.5"}) {
    EXPECT_NE(error_of(with_depends(R"({"repo-id": "org/x", "version": )" + std::string(v) + "}")).find("kernel-depends"), std::string::npos) << v;
    EXPECT_NE(error_of(R"({"version": )" + std::string(v) + "}").find("'version'"), std::string::npos) << v;
  }
  KernelMetadata md = parse_kernel_metadata(with_depends(R"({"repo-id": "org/x", "version": 99999999})"), "v");
  EXPECT_EQ(kernel_requirements(md, ""), (std::vector<std::string>{"x>=99999999,<100000000"}));
}

TEST(KernelMetadata, RevisionsAreRefNames) {
  for (const char* r : {"main; rm -rf", "../x", "", "a b"})
    EXPECT_NE(error_of(with_depends(R"({"repo-id": "org/x", "revision": ")" + std::string(r) + R"("})")).find("kernel-depends"), std::string::npos) << r;
  EXPECT_EQ(parse_kernel_metadata(with_depends(R"({"repo-id": "org/x", "revision": "refs/pr/1"})"), "v").kernel_depends[0].revision, "refs/pr/1");
}

// Finding 3: NUL, ESC (an OSC-8 hyperlink), DEL and the C1 CSI in any text
// field; other Unicode stays.
TEST(KernelMetadata, TextFieldsHoldNoControlCharacters) {
  for (const char* bad : {R"(MIT\u0000)", R"(\u001b]8;;http://evil\u001b\\MIT\u001b]8;;\u001b\\)", R"(MIT\u007f)", R"(MIT\u009b31m)", R"(a\tb)"}) {
    const std::string e = error_of(R"({"license": ")" + std::string(bad) + R"("})");
    EXPECT_NE(e.find("'license'"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("control character"), std::string::npos) << e;
  }
  EXPECT_NE(error_of(R"({"python-depends": ["einops\u001b"]})").find("'python-depends'"), std::string::npos);
  EXPECT_NE(error_of(R"({"backend": {"type": "cuda", "archs": ["8.0\u0007"]}})").find("'backend.archs'"), std::string::npos);
  EXPECT_EQ(parse_kernel_metadata(R"({"license": "Licence libre — ©"})", "v").license, "Licence libre — ©");
}

TEST(KernelMetadata, GitUrlsBecomeBrowsable) {
  EXPECT_EQ(browsable_url("https://github.com/a/b"), "https://github.com/a/b");
  EXPECT_EQ(browsable_url("git+https://github.com/a/b.git"), "https://github.com/a/b.git");
  EXPECT_EQ(browsable_url("git@github.com:a/b.git"), "https://github.com/a/b.git");
  EXPECT_EQ(browsable_url("ssh://git@github.com/a/b"), "https://github.com/a/b");
  EXPECT_EQ(browsable_url("not a url"), std::nullopt);
  // A URL goes into METADATA and the index's pages as it is.
  EXPECT_EQ(browsable_url("https://github.com/a/b\"><script>"), std::nullopt);
  EXPECT_EQ(browsable_url("https://github.com/a b"), std::nullopt);
}

TEST(KernelMetadata, NamePrefixes) {
  for (const char* ok : {"acme-", "acme_", "acme.", "a", "Acme9-"}) EXPECT_TRUE(is_valid_name_prefix(ok)) << ok;
  for (const char* bad : {"", "-acme", "acme/", "acme @", "acme;", "ac me"}) EXPECT_FALSE(is_valid_name_prefix(bad)) << bad;
}

TEST(CoreMetadata, SpdxExpressionShape) {
  for (const char* ok : {"Apache-2.0", "apache-2.0", "MIT OR Apache-2.0", "(MIT AND BSD-3-Clause) OR GPL-2.0-or-later",
                         "GPL-2.0-only WITH Classpath-exception-2.0", "LicenseRef-Proprietary"})
    EXPECT_TRUE(is_spdx_expression(ok)) << ok;
  for (const char* bad : {"", "Apache 2.0", "MIT OR", "(MIT", "MIT)", "AND MIT", "BSD, see LICENSE"})
    EXPECT_FALSE(is_spdx_expression(bad)) << bad;
}

TEST(CoreMetadata, CommitOfRevisionUrl) {
  const std::string sha(40, 'a');
  EXPECT_EQ(commit_of_revision_url("https://huggingface.co/kernels/o/n/tree/" + sha), sha);
  EXPECT_EQ(commit_of_revision_url("https://huggingface.co/kernels/o/n/tree/main"), std::nullopt);
}
