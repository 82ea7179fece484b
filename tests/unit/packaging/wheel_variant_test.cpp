// PEP 825 variant labels, variant wheel filenames and variant metadata.
// Expected values are uv 0.13.9's (the source at /tmp/uvsrc/uv-0.13.9 when
// these were written) or PEP 825's own examples; each case names its
// source: "wheel.rs" is crates/uv-distribution-filename/src/wheel.rs,
// "tests/variants_json.rs" is crates/uv-distribution-types/tests/variants_json.rs,
// "wheel_variant_compatibility.rs" is
// crates/uv/tests/pip_install/wheel_variant_compatibility.rs.
#include "kwheel/packaging/wheel_variant.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/packaging/wheel_filename.hpp"

namespace kwheel {
namespace {

using nlohmann::json;
using testing::error_of;

void expect_contains(const std::string& text, const std::string& part) { EXPECT_NE(text.find(part), std::string::npos) << text; }

// --------------------------------------------------------------------------- grammar

TEST(VariantGrammar, Pep825Rules) {
  // PEP 825 "Variant label": ^[0-9a-z_.]+$; "Variant properties":
  // namespace/feature ^[a-z0-9_]+$, value ^[a-z0-9_.]+$.
  for (const char* ok : {"null", "x86_64_v3", "cpu.v3", "36266d4d", "x86_64_v3_openblas"}) EXPECT_TRUE(is_variant_label(ok)) << ok;
  // wheel.rs pep825_invalid_variant_filenames: "", "cpu_!v3", "CUDA", "cpu_É".
  for (const char* bad : {"", "cpu_!v3", "CUDA", "cpu_\xc3\x89", "a-b", "a b"}) EXPECT_FALSE(is_variant_label(bad)) << bad;
  EXPECT_TRUE(is_variant_namespace("blas_lapack"));
  EXPECT_FALSE(is_variant_namespace("CPU"));  // tests/variants_json.rs reject_invalid_namespace_in_priorities
  EXPECT_FALSE(is_variant_feature("bad.feature"));  // reject_invalid_variant_feature
  EXPECT_TRUE(is_variant_value("12.8"));
  EXPECT_TRUE(is_variant_value("120_real"));
  EXPECT_FALSE(is_variant_value("v 3"));  // reject_invalid_variant_value
  EXPECT_FALSE(is_variant_value(""));
  EXPECT_EQ(kNullVariantLabel, "null");
}

// --------------------------------------------------------------------------- filenames

TEST(VariantWheelFilename, Pep825Examples) {
  // PEP 825 "Variant label" examples.
  const WheelFilename w = parse_wheel_filename("numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3.whl", VariantLabels::accept);
  EXPECT_EQ(w.name, "numpy");
  EXPECT_EQ(w.version, "2.3.2");
  EXPECT_FALSE(w.build);
  EXPECT_EQ(w.tags(), std::vector<std::string>{"cp313-cp313t-musllinux_1_2_x86_64"});
  EXPECT_EQ(w.variant, std::optional<std::string>("x86_64_v3"));
  EXPECT_EQ(parse_wheel_filename("numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-null.whl", VariantLabels::accept).variant,
            std::optional<std::string>("null"));
  EXPECT_FALSE(parse_wheel_filename("numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64.whl", VariantLabels::accept).variant);
}

TEST(VariantWheelFilename, UvValidVariantFilenames) {
  // wheel.rs pep825_variant_filenames.
  struct Case {
    const char* filename;
    const char* label;
    std::optional<std::string> build;
    std::vector<std::string> python;
  };
  const std::vector<Case> cases{
      {"numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3_openblas.whl", "x86_64_v3_openblas", std::nullopt, {"cp313"}},
      {"numpy-2.3.2-7-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3_openblas.whl", "x86_64_v3_openblas", "7", {"cp313"}},
      {"numpy-2.3.2-future99-none-any-null.whl", "null", std::nullopt, {"future99"}},
      {"numpy-2.3.2-cp312.cp313-none-any-cpu.v3.whl", "cpu.v3", std::nullopt, {"cp312", "cp313"}},
      // wheel.rs from_and_to_string / cache_key.
      {"dummy_project-0.0.1-py3-none-any-36266d4d.whl", "36266d4d", std::nullopt, {"py3"}},
  };
  for (const auto& c : cases) {
    const WheelFilename w = parse_wheel_filename(c.filename, VariantLabels::accept);
    EXPECT_EQ(w.variant, std::optional<std::string>(c.label)) << c.filename;
    EXPECT_EQ(w.build, c.build) << c.filename;
    EXPECT_EQ(w.python, c.python) << c.filename;
  }
}

TEST(VariantWheelFilename, UvInvalidVariantFilenames) {
  // wheel.rs pep825_invalid_variant_filenames, with uv's reasons.
  const std::vector<std::pair<std::string, std::string>> cases{
      {"numpy-2.3.2-3py-none-any.whl", "Python tag must not start with a digit"},
      {"numpy-2.3.2-7-3py-none-any-null.whl", "Python tag must not start with a digit"},
      {"numpy-2.3.2-py3-none-any-.whl", "empty"},
      {"numpy-2.3.2-py3-none-any-cpu_!v3.whl", "variant label"},
      {"numpy-2.3.2-py3-none-any-CUDA.whl", "variant label"},
      {"numpy-2.3.2-py3-none-any-cpu_\xc3\x89.whl", "variant label"},
  };
  for (const auto& [name, why] : cases) {
    const std::string msg = error_of([&] { parse_wheel_filename(name, VariantLabels::accept); });
    expect_contains(msg, why);
  }
}

TEST(VariantWheelFilename, UvBuildTagAndPartCountErrors) {
  // wheel.rs err_invalid_build_tag: seven parts are build tag + label, and
  // "tag" is no build tag.
  expect_contains(error_of([] { parse_wheel_filename("foo-1.2.3-tag-py3-none-any-cpu.whl", VariantLabels::accept); }),
                  "build tag must start with a digit");
  // wheel.rs err_too_many_parts.
  error_of([] { parse_wheel_filename("foo-1.2.3-202206090410-py3-none-any-whoopsie-whoops.whl", VariantLabels::accept); });
  // wheel.rs ok_build_tag: six parts with a digit third part stay a build tag.
  const WheelFilename w = parse_wheel_filename("foo-1.2.3-202206090410-py3-none-any.whl", VariantLabels::accept);
  EXPECT_EQ(w.build, std::optional<std::string>("202206090410"));
  EXPECT_FALSE(w.variant);
}

TEST(VariantWheelFilename, CallersThatTakeNoVariantsStillRefuseThem) {
  // The default is the format before PEP 825: a variant wheel is no valid
  // name there (pin and the site builder skip it, the wheel reader refuses
  // it), and the message says what it reads as.
  const std::string msg = error_of([] { parse_wheel_filename("numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3.whl"); });
  expect_contains(msg, "PEP 825");
  expect_contains(msg, "'x86_64_v3'");
  expect_contains(error_of([] { parse_wheel_filename("numpy-2.3.2-7-cp313-cp313t-musllinux_1_2_x86_64-null.whl"); }), "label 'null'");
  // Not a valid variant name either: no PEP 825 reading offered.
  const std::string plain = error_of([] { parse_wheel_filename("foo-1.0-1-2-py3-none-any.whl"); });
  EXPECT_EQ(plain.find("PEP 825"), std::string::npos) << plain;
}

TEST(VariantWheelFilename, VariantsJsonFilename) {
  // wheel_variant_compatibility.rs backtrack_to_compatible_nvidia_variant
  // publishes "ok-{version}-variants.json" for ok 1.0.0.
  EXPECT_EQ(variants_json_filename("ok", "1.0.0"), "ok-1.0.0-variants.json");
  // PEP 825 "Index-level metadata": name and version normalised as in
  // wheel names; uv's Display writes as_dist_info_name (normalised, '-' ->
  // '_') and the normalised version.
  EXPECT_EQ(variants_json_filename("Foo.Bar-baz", "1.0RC1"), "foo_bar_baz-1.0rc1-variants.json");
  EXPECT_EQ(variants_json_filename("foo", "1.0-post1"), "foo-1.0.post1-variants.json");
  error_of([] { variants_json_filename("foo!", "1.0"); });
  error_of([] { variants_json_filename("foo", "not a version"); });
}

// --------------------------------------------------------------------------- variants.json: reading

// tests/variants_json.rs: each reject_* case, uv's message's gist.
struct Rejected {
  const char* test;
  json metadata;
  const char* why;
};

std::vector<Rejected> uv_rejected_cases() {
  const std::string pep825(kPep825Schema), pep850(kPep850Schema);
  return {
      {"reject_missing_providers",
       {{"$schema", pep850}, {"default-priorities", {{"namespace", {"cpu"}}}}, {"variants", {{"null", json::object()}}}},
       "expected ['cpu'], found []"},
      {"reject_mismatched_provider_namespaces",
       {{"$schema", pep850},
        {"default-priorities", {{"namespace", {"gpu"}}}},
        {"providers", {{"cpu", {{"static-properties", {{"level", {"v3"}}}}}}}},
        {"variants", {{"null", json::object()}}}},
       "expected ['gpu'], found ['cpu']"},
      {"reject_missing_static_feature_order",
       {{"$schema", pep850},
        {"default-priorities", {{"namespace", {"cpu"}}}},
        {"providers", {{"cpu", {{"static-properties", {{"level", {"v3"}}, {"flags", {"avx"}}}}}}}},
        {"variants", {{"null", json::object()}}}},
       "must define feature-order for multiple static features: ['flags', 'level']"},
      {"reject_invalid_static_feature_order",
       {{"$schema", pep850},
        {"default-priorities", {{"namespace", {"cpu"}}}},
        {"providers", {{"cpu", {{"static-properties", {{"level", {"v3"}}}}, {"feature-order", {"other"}}}}}},
        {"variants", {{"null", json::object()}}}},
       "invalid feature-order"},
      {"reject_duplicate_static_property_values",
       {{"$schema", pep850},
        {"default-priorities", {{"namespace", {"cpu"}}}},
        {"providers", {{"cpu", {{"static-properties", {{"level", {"v3", "v3"}}}}}}}},
        {"variants", {{"null", json::object()}}}},
       "'cpu :: level' must not contain duplicate values"},
      {"reject_empty_namespace_priorities",
       {{"$schema", pep825},
        {"default-priorities", {{"namespace", json::array()}}},
        {"variants", {{"fast", {{"cpu", {{"level", {"v2", "v3"}}}}}}, {"null", json::object()}}}},
       "namespace priorities must be non-empty and unique"},
      {"reject_duplicate_namespace_priorities",
       {{"$schema", pep825},
        {"default-priorities", {{"namespace", {"cpu", "cpu"}}}},
        {"variants", {{"fast", {{"cpu", {{"level", {"v2", "v3"}}}}}}, {"null", json::object()}}}},
       "namespace priorities must be non-empty and unique"},
      {"reject_invalid_namespace_in_priorities",
       {{"$schema", pep825},
        {"default-priorities", {{"namespace", {"CPU"}}}},
        {"variants", {{"fast", {{"cpu", {{"level", {"v2", "v3"}}}}}}, {"null", json::object()}}}},
       "invalid variant namespace 'CPU'"},
      {"reject_namespace_missing_from_priorities",
       {{"$schema", pep825},
        {"default-priorities", {{"namespace", {"gpu"}}}},
        {"variants", {{"fast", {{"cpu", {{"level", {"v2", "v3"}}}}}}, {"null", json::object()}}}},
       "variant namespace 'cpu' is missing from default-priorities.namespace"},
      {"reject_invalid_variant_label",
       {{"$schema", pep825}, {"default-priorities", {{"namespace", {"cpu"}}}}, {"variants", {{"Bad", json::object()}}}},
       "invalid variant label 'Bad'"},
      {"reject_invalid_variant_namespace",
       {{"$schema", pep825},
        {"default-priorities", {{"namespace", {"cpu"}}}},
        {"variants", {{"fast", {{"CPU", {{"level", {"v3"}}}}}}, {"null", json::object()}}}},
       "invalid variant namespace 'CPU'"},
      {"reject_invalid_variant_feature",
       {{"$schema", pep825},
        {"default-priorities", {{"namespace", {"cpu"}}}},
        {"variants", {{"fast", {{"cpu", {{"bad.feature", {"v3"}}}}}}, {"null", json::object()}}}},
       "invalid variant feature 'bad.feature'"},
      {"reject_invalid_variant_value",
       {{"$schema", pep825},
        {"default-priorities", {{"namespace", {"cpu"}}}},
        {"variants", {{"fast", {{"cpu", {{"level", {"v 3"}}}}}}, {"null", json::object()}}}},
       "invalid variant value 'v 3'"},
      {"reject_empty_feature_values",
       {{"$schema", pep825},
        {"default-priorities", {{"namespace", {"cpu"}}}},
        {"variants", {{"fast", {{"cpu", {{"level", json::array()}}}}}, {"null", json::object()}}}},
       "'cpu :: level' must have at least one value"},
      {"reject_duplicate_feature_values",
       {{"$schema", pep825},
        {"default-priorities", {{"namespace", {"cpu"}}}},
        {"variants", {{"fast", {{"cpu", {{"level", {"v3", "v2", "v3"}}}}}}, {"null", json::object()}}}},
       "'cpu :: level' must not contain duplicate values: ['v3', 'v2', 'v3']"},
      {"reject_null_variant_with_properties",
       {{"$schema", pep825},
        {"default-priorities", {{"namespace", {"cpu"}}}},
        {"variants", {{"fast", {{"cpu", {{"level", {"v2", "v3"}}}}}}, {"null", {{"cpu", {{"level", {"v3"}}}}}}}}},
       "the null variant must not have properties"},
      {"reject_unknown_field_in_default_priorities",
       {{"$schema", pep825},
        {"default-priorities", {{"namespace", {"cpu"}}, {"unknown", json::array()}}},
        {"variants", {{"fast", {{"cpu", {{"level", {"v2", "v3"}}}}}}, {"null", json::object()}}}},
       "unknown field 'unknown'"},
  };
}

TEST(VariantsJsonParse, UvRejectedMetadata) {
  for (const auto& c : uv_rejected_cases()) {
    SCOPED_TRACE(c.test);
    const std::string msg = error_of([&] { parse_variants_json(c.metadata.dump(), "ok-1.0.0-variants.json"); });
    expect_contains(msg, "ok-1.0.0-variants.json");
    expect_contains(msg, c.why);
  }
}

TEST(VariantsJsonParse, UvNormalizeDropsEmptyNamespaces) {
  // tests/variants_json.rs normalize_variants_json: "unused": {} goes, even
  // on the null variant and outside the priorities.
  const json metadata = {{"$schema", kPep825Schema},
                         {"default-priorities", {{"namespace", {"nvidia", "x86_64"}}}},
                         {"variants",
                          {{"gpu", {{"nvidia", {{"cuda_version_lower_bound", {"13.0", "12.8"}}}}, {"unused", json::object()}}},
                           {"cpu", {{"x86_64", {{"level", {"v3"}}}}}},
                           {"null", {{"unused", json::object()}}}}}};
  const VariantsJson m = parse_variants_json(metadata.dump(), "variants.json");
  EXPECT_EQ(m.schema, kPep825Schema);
  EXPECT_EQ(m.namespace_priorities, (std::vector<std::string>{"nvidia", "x86_64"}));
  EXPECT_TRUE(m.providers.empty());
  ASSERT_EQ(m.variants.size(), 3u);
  EXPECT_TRUE(m.variants.at("null").empty());
  EXPECT_EQ(m.variants.at("gpu").size(), 1u);
  // uv keeps ["13.0", "12.8"] as written; kwheel sorts (PEP 825: "sorted
  // lexically"), which no comparison depends on.
  EXPECT_EQ(m.variants.at("gpu").at("nvidia").at("cuda_version_lower_bound"), (std::vector<std::string>{"12.8", "13.0"}));
}

TEST(VariantsJsonParse, UvStaticPluginAndBuiltinProviders) {
  // tests/variants_json.rs parse_static_provider.
  const json stat = {{"$schema", kPep850Schema},
                     {"default-priorities", {{"namespace", {"cpu"}}}},
                     {"providers",
                      {{"cpu", {{"optional", false}, {"static-properties", {{"level", {"v3"}}, {"flags", {"avx"}}}}, {"feature-order", {"level", "flags"}}}}}},
                     {"variants", {{"null", json::object()}}}};
  const VariantsJson parsed = parse_variants_json(stat.dump(), "static");
  const VariantProvider& p = parsed.providers.at("cpu");
  EXPECT_EQ(p.kind, VariantProvider::Kind::static_properties);
  EXPECT_FALSE(p.optional);
  EXPECT_EQ(p.feature_order, (std::vector<std::string>{"level", "flags"}));
  EXPECT_EQ(p.static_properties.at("flags"), std::vector<std::string>{"avx"});
  // tests/variants_json.rs parse_abi_dependency_provider (the providers part).
  const json builtin = {{"$schema", kPep850Schema},
                        {"default-priorities", {{"namespace", {"abi"}}}},
                        {"providers", {{"abi", {{"builtin", "abi_dependency"}}}}},
                        {"variants", {{"valid", {{"abi", {{"my_runtime", {"2.8", "2.10"}}}}}}}}};
  const VariantsJson b = parse_variants_json(builtin.dump(), "builtin");
  EXPECT_EQ(b.providers.at("abi").kind, VariantProvider::Kind::builtin);
  EXPECT_EQ(b.providers.at("abi").builtin, "abi_dependency");
  // wheel_variant_compatibility.rs gpu_variant(): a plugin provider.
  const VariantsJson g = parse_variants_json(R"({
    "$schema": "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json",
    "default-priorities": { "namespace": ["nvidia"] },
    "providers": { "nvidia": { "requires": ["nvidia-variant-provider==0.0.1"],
                               "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin" } },
    "variants": { "gpu": { "nvidia": { "cuda_version_lower_bound": ["12"], "sm_arch": ["89_real"] } } } })",
                                             "gpu");
  EXPECT_EQ(g.providers.at("nvidia").kind, VariantProvider::Kind::plugin);
  EXPECT_EQ(g.providers.at("nvidia").requirements, std::vector<std::string>{"nvidia-variant-provider==0.0.1"});
  EXPECT_EQ(g.providers.at("nvidia").plugin_api, "nvidia_variant_provider.plugin:NvidiaVariantPlugin");
}

TEST(VariantsJsonParse, ProviderShapesUvsSerdeRefuses) {
  // ProviderKind is untagged with deny_unknown_fields: one kind's fields
  // only; "optional" must be a bool; an empty feature-order is invalid.
  const auto with_provider = [](const json& provider) {
    return json{{"$schema", kPep850Schema},
                {"default-priorities", {{"namespace", {"cpu"}}}},
                {"providers", {{"cpu", provider}}},
                {"variants", {{"null", json::object()}}}}
        .dump();
  };
  error_of([&] { parse_variants_json(with_provider({{"requires", {"x"}}, {"static-properties", json::object()}}), "p"); });
  error_of([&] { parse_variants_json(with_provider({{"requires", {"x"}}, {"enable-if", "x"}}), "p"); });
  error_of([&] { parse_variants_json(with_provider({{"plugin-api", "x:Y"}}), "p"); });
  error_of([&] { parse_variants_json(with_provider({{"optional", "yes"}, {"requires", {"x"}}}), "p"); });
  error_of([&] { parse_variants_json(with_provider({{"static-properties", {{"level", {"v3"}}}}, {"feature-order", json::array()}}), "p"); });
  // A plugin without plugin-api is fine (installers derive it).
  EXPECT_TRUE(parse_variants_json(with_provider({{"requires", {"some-plugin"}}}), "p").providers.at("cpu").plugin_api.empty());
  // An 825 file with an empty "providers" table still has to match the
  // priorities (uv: Some({}) is not None).
  const json empty_providers = {{"$schema", kPep825Schema},
                                {"default-priorities", {{"namespace", {"cpu"}}}},
                                {"providers", json::object()},
                                {"variants", {{"null", json::object()}}}};
  expect_contains(error_of([&] { parse_variants_json(empty_providers.dump(), "p"); }), "found []");
}

TEST(VariantsJsonParse, UnknownTopLevelFieldsAndTypes) {
  // VariantsJsonWire is deny_unknown_fields.
  error_of([] { parse_variants_json(R"({"$schema": "s", "default-priorities": {"namespace": ["a"]}, "variants": {}, "extra": 1})", "x"); });
  error_of([] { parse_variants_json(R"({"default-priorities": {"namespace": ["a"]}, "variants": {}})", "x"); });
  error_of([] { parse_variants_json(R"({"$schema": 1, "default-priorities": {"namespace": ["a"]}, "variants": {}})", "x"); });
  error_of([] { parse_variants_json(R"({"$schema": "s", "default-priorities": {"namespace": ["a"]}, "variants": {"v": {"a": {"f": "x"}}}})", "x"); });
  error_of([] { parse_variants_json("[]", "x"); });
  // wheel_variant_compatibility.rs direct_url_wheel_with_invalid_variant_metadata: "{" is no metadata.
  expect_contains(error_of([] { parse_variants_json("{", "variant.json"); }), "not JSON");
}

TEST(VariantsJsonParse, UnknownSchemaIsReadWhenValid) {
  // variants_json.rs TryFrom: "Parse leniently for forward compatibility".
  const VariantsJson m =
      parse_variants_json(R"({"$schema": "https://example.org/v9.json", "default-priorities": {"namespace": ["a"]}, "variants": {"null": {}}})", "x");
  EXPECT_EQ(m.schema, "https://example.org/v9.json");
}

TEST(VariantsJsonParse, HostileSizesAreRefusedUnparsed) {
  const std::string huge = "{\"$schema\": \"" + std::string(5 << 20, 'a') + "\"}";
  expect_contains(error_of([&] { parse_variants_json(huge, "variants.json"); }), "4 MiB");
  const std::string deep = std::string(64, '[') + std::string(64, ']');
  expect_contains(error_of([&] { parse_variants_json(deep, "variants.json"); }), "deeper");
}

TEST(VariantsJsonParse, WheelVariantJsonNamesItsOwnLabelOnly) {
  // variants_json.rs VariantsJsonContent::from_wheel: exactly the label of
  // the filename.
  const json one = {{"$schema", kPep825Schema}, {"default-priorities", {{"namespace", {"x86_64"}}}}, {"variants", {{"null", json::object()}}}};
  EXPECT_EQ(parse_wheel_variant_json(one.dump(), "variant.json", "null").variants.size(), 1u);
  expect_contains(error_of([&] { parse_wheel_variant_json(one.dump(), "variant.json", "gpu"); }), "only the variant 'gpu'");
  json two = one;
  two["variants"]["gpu"] = json::object();
  error_of([&] { parse_wheel_variant_json(two.dump(), "variant.json", "null"); });
}

// --------------------------------------------------------------------------- variants.json: writing

VariantsJson gpu_release() {
  VariantsJson m;
  m.namespace_priorities = {"nvidia"};
  m.providers["nvidia"] = nvidia_variant_provider();
  m.variants["cu130"]["nvidia"] = {{"cuda_version_lower_bound", {"13.0"}}, {"sm_arch", {"90_real", "100_real"}}};
  m.variants[std::string(kNullVariantLabel)] = {};
  return m;
}

TEST(VariantsJsonRender, UvsPrettyLayoutSortedValues) {
  // tests/variants_json.rs normalize_variants_json's snapshot is serde's
  // pretty JSON of the normalised file; kwheel writes the same bytes, but
  // the gpu values sorted ("12.8" before "13.0", PEP 825: sorted lexically)
  // and a trailing newline.
  const json in = {{"$schema", kPep825Schema},
                   {"default-priorities", {{"namespace", {"nvidia", "x86_64"}}}},
                   {"variants",
                    {{"gpu", {{"nvidia", {{"cuda_version_lower_bound", {"13.0", "12.8"}}}}, {"unused", json::object()}}},
                     {"cpu", {{"x86_64", {{"level", {"v3"}}}}}},
                     {"null", {{"unused", json::object()}}}}}};
  const std::string expected = R"({
  "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
  "default-priorities": {
    "namespace": [
      "nvidia",
      "x86_64"
    ]
  },
  "variants": {
    "cpu": {
      "x86_64": {
        "level": [
          "v3"
        ]
      }
    },
    "gpu": {
      "nvidia": {
        "cuda_version_lower_bound": [
          "12.8",
          "13.0"
        ]
      }
    },
    "null": {}
  }
}
)";
  EXPECT_EQ(render_variants_json(parse_variants_json(in.dump(), "in")), expected);
}

TEST(VariantsJsonRender, ProvidersAsUvWritesThem) {
  // wheel_variant_compatibility.rs gpu_variant(): the same JSON (kwheel's
  // specifier aside) from the struct.
  VariantsJson m;
  m.namespace_priorities = {"nvidia"};
  m.providers["nvidia"].requirements = {"nvidia-variant-provider==0.0.1"};
  m.providers["nvidia"].plugin_api = "nvidia_variant_provider.plugin:NvidiaVariantPlugin";
  m.variants["gpu"]["nvidia"] = {{"cuda_version_lower_bound", {"12"}}, {"sm_arch", {"89_real"}}};
  const json uv = {{"$schema", "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json"},
                   {"default-priorities", {{"namespace", {"nvidia"}}}},
                   {"providers",
                    {{"nvidia",
                      {{"requires", {"nvidia-variant-provider==0.0.1"}}, {"plugin-api", "nvidia_variant_provider.plugin:NvidiaVariantPlugin"}}}}},
                   {"variants", {{"gpu", {{"nvidia", {{"cuda_version_lower_bound", {"12"}}, {"sm_arch", {"89_real"}}}}}}}}};
  const std::string text = render_variants_json(m);
  EXPECT_EQ(json::parse(text), uv);
  EXPECT_TRUE(text.ends_with("}\n"));
  // Keys sorted: "providers" before "variants" (uv writes providers last;
  // JSON objects are unordered).
  EXPECT_LT(text.find("\"providers\""), text.find("\"variants\""));
}

TEST(VariantsJsonRender, RoundTripsAndIsDeterministic) {
  const VariantsJson m = gpu_release();
  const std::string text = render_variants_json(m);
  EXPECT_EQ(render_variants_json(m), text);
  VariantsJson sorted = m;
  sorted.variants["cu130"]["nvidia"]["sm_arch"] = {"100_real", "90_real"};
  EXPECT_EQ(parse_variants_json(text, "back"), sorted);
  // Static values keep their order: it is the preference.
  VariantsJson s;
  s.namespace_priorities = {"blas_lapack"};
  s.providers["blas_lapack"].kind = VariantProvider::Kind::static_properties;
  s.providers["blas_lapack"].static_properties["library"] = {"openblas", "mkl", "accelerate"};
  s.variants["mkl"]["blas_lapack"]["library"] = {"mkl"};
  EXPECT_EQ(parse_variants_json(render_variants_json(s), "back"), s);
}

TEST(VariantsJsonRender, WheelVariantJsonIsOneLabel) {
  const VariantsJson wheel = wheel_variant_json(gpu_release(), "cu130");
  ASSERT_EQ(wheel.variants.size(), 1u);
  EXPECT_EQ(wheel.providers, gpu_release().providers);
  EXPECT_EQ(parse_wheel_variant_json(render_variants_json(wheel), "variant.json", "cu130"), wheel_variant_json(parse_variants_json(render_variants_json(gpu_release()), "r"), "cu130"));
  error_of([] { wheel_variant_json(gpu_release(), "cu999"); });
}

TEST(VariantsJsonRender, RefusesWhatItWouldRefuseToRead) {
  const auto problem = [](auto change) {
    VariantsJson m = gpu_release();
    change(m);
    return error_of([&] { render_variants_json(m); });
  };
  expect_contains(problem([](VariantsJson& m) { m.schema = "https://example.org/v9.json"; }), "schema");
  expect_contains(problem([](VariantsJson& m) { m.variants["null"]["nvidia"]["sm_arch"] = {"90_real"}; }), "null variant");
  expect_contains(problem([](VariantsJson& m) { m.variants["cu130"]["nvidia"]["sm_arch"] = {"90_real", "90_real"}; }), "duplicate");
  expect_contains(problem([](VariantsJson& m) { m.providers.clear(); }), "providers");
  expect_contains(problem([](VariantsJson& m) { m.variants["CU"] = {}; }), "label 'CU'");
  expect_contains(problem([](VariantsJson& m) { m.providers["nvidia"].requirements = {"bad\xff"}; }), "UTF-8");
}

TEST(VariantsJsonRender, NvidiaProviderIsWhatUvVendors) {
  // variant/mod.rs find_vendored_provider + nvidia.rs PLUGIN_API.
  const VariantProvider& p = nvidia_variant_provider();
  EXPECT_EQ(p.kind, VariantProvider::Kind::plugin);
  EXPECT_FALSE(p.optional);
  EXPECT_EQ(p.requirements, std::vector<std::string>{"nvidia-variant-provider>=0.0.1,<0.1"});
  EXPECT_EQ(p.plugin_api, "nvidia_variant_provider.plugin:NvidiaVariantPlugin");
  EXPECT_EQ(kNvidiaNamespace, "nvidia");
}

}  // namespace
}  // namespace kwheel
