// Which PEP 825 variants a system supports and in which order uv 0.13.9
// prefers them. Expected values are uv's: its tests where it has them
// ("tests/variants_json.rs" is crates/uv-distribution-types/tests/variants_json.rs,
// "wheel_variant_compatibility.rs" is crates/uv/tests/pip_install/wheel_variant_compatibility.rs),
// otherwise read off its source ("nvidia.rs" is
// crates/uv-distribution/src/variant/nvidia.rs, properties_for_capabilities,
// which has no unit tests of its own; "mod.rs" is
// crates/uv-distribution/src/variant/mod.rs, find_vendored_provider).
#include "kwheel/packaging/variant_selection.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kwheel/packaging/wheel_variant.hpp"

namespace kwheel {
namespace {

using nlohmann::json;
using Values = std::vector<std::string>;

const Values* values_of(const SupportedFeatures& features, const std::string& feature) {
  for (const auto& [name, values] : features)
    if (name == feature) return &values;
  return nullptr;
}

std::vector<std::string> feature_names(const SupportedFeatures& features) {
  std::vector<std::string> out;
  for (const auto& [name, _] : features) out.push_back(name);
  return out;
}

// "{major}.{max}" .. "{major}.0", "{major}": nvidia.rs versions_for_major.
Values series(unsigned major, unsigned max_minor) {
  Values out;
  for (unsigned m = max_minor + 1; m-- > 0;) out.push_back(std::to_string(major) + "." + std::to_string(m));
  out.push_back(std::to_string(major));
  return out;
}

Values concat(std::initializer_list<Values> parts) {
  Values out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// --------------------------------------------------------------------------- nvidia.rs

TEST(VariantNvidia, Driver13Cc90) {
  const SupportedFeatures f = nvidia_supported_features(std::pair{13u, 0u}, std::pair{9u, 0u});
  EXPECT_EQ(feature_names(f), (std::vector<std::string>{"cuda_version_lower_bound", "cuda_version_upper_bound", "sm_arch"}));
  EXPECT_EQ(*values_of(f, "sm_arch"), (Values{"90_real", "90_virtual"}));
  EXPECT_EQ(*values_of(f, "cuda_version_lower_bound"), concat({series(13, 0), series(12, 20), series(11, 20)}));
  EXPECT_EQ(*values_of(f, "cuda_version_upper_bound"), concat({series(15, 20), series(14, 20), Values{"13.20", "13.19", "13.18", "13.17", "13.16",
                                                                                                     "13.15", "13.14", "13.13", "13.12", "13.11",
                                                                                                     "13.10", "13.9", "13.8", "13.7", "13.6",
                                                                                                     "13.5", "13.4", "13.3", "13.2", "13.1"}}));
}

TEST(VariantNvidia, Driver126LowerBoundsRunDownToEleven) {
  const SupportedFeatures f = nvidia_supported_features(std::pair{12u, 6u}, std::nullopt);
  const Values& lower = *values_of(f, "cuda_version_lower_bound");
  ASSERT_EQ(lower.size(), 30u);  // 12.6 .. 12.0, 12, then 11.20 .. 11.0, 11
  EXPECT_EQ(Values(lower.begin(), lower.begin() + 10), (Values{"12.6", "12.5", "12.4", "12.3", "12.2", "12.1", "12.0", "12", "11.20", "11.19"}));
  EXPECT_EQ(lower.back(), "11");
  const Values& upper = *values_of(f, "cuda_version_upper_bound");
  EXPECT_EQ(upper.front(), "15.20");
  EXPECT_EQ(upper.back(), "12.7");
  EXPECT_EQ(std::count(upper.begin(), upper.end(), "12.6"), 0);
  // No compute capability: no sm_arch.
  EXPECT_EQ(values_of(f, "sm_arch"), nullptr);
}

TEST(VariantNvidia, MajorOnlyDriverIsTheSeriesStart) {
  // nvidia.rs: "`12` means `12.0`"; the caller passes (12, 0).
  const SupportedFeatures f = nvidia_supported_features(std::pair{12u, 0u}, std::pair{8u, 9u});
  const Values& lower = *values_of(f, "cuda_version_lower_bound");
  EXPECT_EQ(Values(lower.begin(), lower.begin() + 3), (Values{"12.0", "12", "11.20"}));
  EXPECT_EQ(*values_of(f, "sm_arch"), (Values{"89_real", "88_real", "87_real", "86_real", "85_real", "84_real", "83_real", "82_real", "81_real",
                                              "80_real", "80_virtual"}));
}

TEST(VariantNvidia, ComputeCapabilityRules) {
  const auto sm = [](unsigned major, unsigned minor) -> std::optional<Values> {
    const SupportedFeatures f = nvidia_supported_features(std::pair{13u, 0u}, std::pair{major, minor});
    if (const Values* v = values_of(f, "sm_arch")) return *v;
    return std::nullopt;
  };
  EXPECT_EQ(sm(12, 1), (Values{"121_real", "120_real", "120_virtual"}));
  EXPECT_EQ(sm(10, 0), (Values{"100_real", "100_virtual"}));
  EXPECT_EQ(sm(5, 0), (Values{"50_real", "50_virtual"}));  // MIN_COMPUTE_CAPABILITY
  EXPECT_EQ(sm(4, 9), std::nullopt);
  // uv reads (u8, u8): a larger number is an error that skips the provider.
  EXPECT_TRUE(nvidia_supported_features(std::pair{13u, 0u}, std::pair{256u, 0u}).empty());
}

TEST(VariantNvidia, DriversOutsideTheRange) {
  // No driver: uv's provider reports None.
  EXPECT_TRUE(nvidia_supported_features(std::nullopt, std::pair{9u, 0u}).empty());
  // A forced 16.0: lower bounds from 16.0, no upper bound.
  const SupportedFeatures newer = nvidia_supported_features(std::pair{16u, 0u}, std::nullopt);
  EXPECT_EQ(feature_names(newer), std::vector<std::string>{"cuda_version_lower_bound"});
  EXPECT_EQ(values_of(newer, "cuda_version_lower_bound")->front(), "16.0");
  // A forced 10.2: no lower bound; upper bounds 15.20 .. 11, then 10.20 .. 10.3.
  const SupportedFeatures older = nvidia_supported_features(std::pair{10u, 2u}, std::nullopt);
  EXPECT_EQ(feature_names(older), std::vector<std::string>{"cuda_version_upper_bound"});
  EXPECT_EQ(values_of(older, "cuda_version_upper_bound")->back(), "10.3");
  // wheel_variant_compatibility.rs skip_excessive_nvidia_cuda_override: a
  // forced 12.2000 needs more than 1024 values, and uv skips the provider.
  EXPECT_TRUE(nvidia_supported_features(std::pair{12u, 2000u}, std::pair{8u, 9u}).empty());
  // nvidia.rs detect_properties: a detected driver is used within 11.0 ..= 15.20.
  EXPECT_TRUE(nvidia_driver_in_detection_range({11, 0}));
  EXPECT_TRUE(nvidia_driver_in_detection_range({15, 20}));
  EXPECT_FALSE(nvidia_driver_in_detection_range({15, 21}));
  EXPECT_FALSE(nvidia_driver_in_detection_range({10, 9}));
}

// --------------------------------------------------------------------------- mod.rs find_vendored_provider

VariantProvider plugin(std::vector<std::string> requires_, std::string api = "nvidia_variant_provider.plugin:NvidiaVariantPlugin") {
  VariantProvider p;
  p.requirements = std::move(requires_);
  p.plugin_api = std::move(api);
  return p;
}

TEST(VariantVendoredNvidia, WhichProviderEntriesUvRuns) {
  EXPECT_TRUE(is_vendored_nvidia_provider("nvidia", nvidia_variant_provider()));
  // wheel_variant_compatibility.rs gpu_variant() and backtrack_to_compatible_nvidia_variant.
  EXPECT_TRUE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider==0.0.1"})));
  EXPECT_TRUE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider>=0.0.1,<1.0.0"})));
  EXPECT_TRUE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider"})));
  EXPECT_TRUE(is_vendored_nvidia_provider("nvidia", plugin({"Nvidia_Variant.Provider (>=0.0.1)"})));
  // Not the vendored one: another version, namespace, plugin-api (none:
  // uv derives "nvidia_variant_provider", which is not NvidiaVariantPlugin),
  // two requirements, extras, a marker, a URL, a builtin.
  EXPECT_FALSE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider==0.0.2"})));
  EXPECT_FALSE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider>=0.1"})));
  EXPECT_FALSE(is_vendored_nvidia_provider("cuda", nvidia_variant_provider()));
  EXPECT_FALSE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider==0.0.1"}, "")));
  EXPECT_FALSE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider==0.0.1"}, "nvidia_variant_provider.plugin:Other")));
  EXPECT_FALSE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider==0.0.1", "other"})));
  EXPECT_FALSE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider[x]==0.0.1"})));
  EXPECT_FALSE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider==0.0.1; python_version >= '3'"})));
  EXPECT_FALSE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider @ https://example.org/p.whl"})));
  EXPECT_FALSE(is_vendored_nvidia_provider("nvidia", plugin({"other-provider==0.0.1"})));
  EXPECT_FALSE(is_vendored_nvidia_provider("nvidia", plugin({"nvidia-variant-provider=>0.0.1"})));
  VariantProvider builtin;
  builtin.kind = VariantProvider::Kind::builtin;
  builtin.builtin = "nvidia";
  EXPECT_FALSE(is_vendored_nvidia_provider("nvidia", builtin));
}

// --------------------------------------------------------------------------- scoring (variants_json.rs)

TEST(VariantSelection, UvRankVariants) {
  // tests/variants_json.rs rank_variants: static providers, the order uv
  // snapshots, the incompatible labels and the description of one.
  const VariantsJson m = parse_variants_json(R"({
    "$schema": "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json",
    "default-priorities": { "namespace": ["nvidia", "x86_64", "debug", "plugin", "builtin"] },
    "providers": {
      "nvidia": { "static-properties": { "arch": ["sm120"], "cuda": ["13.0", "12.0"] }, "feature-order": ["cuda", "arch"] },
      "x86_64": { "static-properties": { "level": ["v4", "v3", "v2"] } },
      "debug": { "optional": true, "static-properties": { "debug": ["on"] } },
      "plugin": { "requires": ["some-plugin"] },
      "builtin": { "builtin": "abi_dependency" }
    },
    "variants": {
      "gpu": { "nvidia": { "cuda": ["13.0"] } },
      "gpu_cpuv2": { "nvidia": { "cuda": ["13.0"] }, "x86_64": { "level": ["v2"] } },
      "gpu_cpuv4": { "nvidia": { "cuda": ["13.0"] }, "x86_64": { "level": ["v4"] } },
      "cpuv4": { "x86_64": { "level": ["v4"] } },
      "multiple_values": { "nvidia": { "cuda": ["12.0", "13.0", "14.0"] } },
      "older_cuda": { "nvidia": { "cuda": ["12.0"] } },
      "lower_feature": { "nvidia": { "arch": ["sm120"] } },
      "unsupported_value": { "nvidia": { "arch": ["sm80", "sm90"], "cuda": ["14.0"] } },
      "unsupported_feature": { "nvidia": { "other": ["on"] } },
      "optional_provider": { "debug": { "debug": ["on"] } },
      "unsupported_plugin": { "plugin": { "feature": ["value"] } },
      "unsupported_builtin": { "builtin": { "torch": ["2"] } },
      "null": {}
    } })",
                                             "rank_variants");
  const SupportedProperties supported = static_supported_properties(m);
  const std::vector<std::string> labels{"gpu", "gpu_cpuv2", "gpu_cpuv4", "cpuv4", "multiple_values", "older_cuda", "lower_feature", "null",
                                        "unsupported_value", "unsupported_feature", "optional_provider", "unsupported_plugin",
                                        "unsupported_builtin", "missing"};
  EXPECT_EQ(order_variants(m, labels, supported),
            (std::vector<std::string>{"gpu_cpuv4", "gpu_cpuv2", "gpu", "multiple_values", "older_cuda", "lower_feature", "cpuv4", "null"}));
  for (const char* label : {"unsupported_value", "unsupported_feature", "optional_provider", "unsupported_plugin", "unsupported_builtin", "missing"})
    EXPECT_FALSE(score_variant(m, label, supported)) << label;
  const auto unsupported = unsupported_properties(m, "unsupported_value", supported);
  ASSERT_TRUE(unsupported);
  EXPECT_EQ(describe_unsupported(*unsupported), "(`nvidia :: arch :: sm80` or `nvidia :: arch :: sm90`) and `nvidia :: cuda :: 14.0`");
  EXPECT_FALSE(unsupported_properties(m, "gpu", supported));
  EXPECT_FALSE(unsupported_properties(m, "missing", supported));
}

TEST(VariantSelection, UvStaticProviderOrder) {
  // wheel_variant_compatibility.rs select_variant_by_static_provider_order:
  // the preferred library wins though its label sorts last and it lists the
  // preferred value second.
  const VariantsJson m = parse_variants_json(R"({
    "$schema": "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json",
    "default-priorities": { "namespace": ["blas_lapack"] },
    "providers": { "blas_lapack": { "static-properties": { "library": ["openblas", "mkl", "accelerate"] } } },
    "variants": {
      "accelerate": { "blas_lapack": { "library": ["accelerate"] } },
      "mkl": { "blas_lapack": { "library": ["mkl"] } },
      "openblas_or_accelerate": { "blas_lapack": { "library": ["accelerate", "openblas"] } }
    } })",
                                             "static");
  EXPECT_EQ(order_variants(m, {"accelerate", "mkl", "openblas_or_accelerate"}, supported_for(m, {})).front(), "openblas_or_accelerate");
}

VariantsJson nvidia_release(const json& variants, const std::string& requirement = "nvidia-variant-provider==0.0.1") {
  const json metadata = {{"$schema", kPep850Schema},
                         {"default-priorities", {{"namespace", {"nvidia"}}}},
                         {"providers",
                          {{"nvidia", {{"requires", {requirement}}, {"plugin-api", "nvidia_variant_provider.plugin:NvidiaVariantPlugin"}}}}},
                         {"variants", variants}};
  return parse_variants_json(metadata.dump(), "nvidia release");
}

TEST(VariantSelection, UvLocalVariantWheelAgainstTheDriver) {
  // wheel_variant_compatibility.rs install_local_variant_wheel: gpu_variant()
  // installs with driver 12 / sm 8.9 and is unsupported with 11 / 8.8.
  const VariantsJson m = nvidia_release({{"gpu", {{"nvidia", {{"cuda_version_lower_bound", {"12"}}, {"sm_arch", {"89_real"}}}}}}});
  EXPECT_EQ(order_variants(m, {"gpu"}, supported_for(m, nvidia_supported_features(std::pair{12u, 0u}, std::pair{8u, 9u}))),
            std::vector<std::string>{"gpu"});
  const SupportedProperties old = supported_for(m, nvidia_supported_features(std::pair{11u, 0u}, std::pair{8u, 8u}));
  EXPECT_TRUE(order_variants(m, {"gpu"}, old).empty());
  EXPECT_EQ(describe_unsupported(*unsupported_properties(m, "gpu", old)),
            "`nvidia :: cuda_version_lower_bound :: 12` and `nvidia :: sm_arch :: 89_real`");
  // No driver (or the 12.2000 of skip_excessive_nvidia_cuda_override): no
  // NVIDIA properties, so every NVIDIA label is unsupported.
  EXPECT_TRUE(order_variants(m, {"gpu"}, supported_for(m, {})).empty());
  EXPECT_TRUE(order_variants(m, {"gpu"}, supported_for(m, nvidia_supported_features(std::pair{12u, 2000u}, std::pair{8u, 9u}))).empty());
}

TEST(VariantSelection, UvBacktrackToCompatibleNvidiaVariant) {
  // wheel_variant_compatibility.rs backtrack_to_compatible_nvidia_variant:
  // with driver 12 / sm 8.9, 1.0.0's gpu88 (the major-only bound "12") is
  // supported and its gpu90 is not; 2.0.0 has only gpu90.
  const json gpu88 = {{"nvidia", {{"cuda_version_lower_bound", {"12"}}, {"cuda_version_upper_bound", {"12.1"}}, {"sm_arch", {"88_real"}}}}};
  const json gpu90 = {{"nvidia", {{"cuda_version_lower_bound", {"12.0"}}, {"cuda_version_upper_bound", {"12.2"}}, {"sm_arch", {"90_real"}}}}};
  const auto features = nvidia_supported_features(std::pair{12u, 0u}, std::pair{8u, 9u});
  const VariantsJson v1 = nvidia_release({{"gpu88", gpu88}, {"gpu90", gpu90}}, "nvidia-variant-provider>=0.0.1,<1.0.0");
  EXPECT_EQ(order_variants(v1, {"gpu88", "gpu90"}, supported_for(v1, features)), std::vector<std::string>{"gpu88"});
  const VariantsJson v2 = nvidia_release({{"gpu90", gpu90}}, "nvidia-variant-provider>=0.0.1,<1.0.0");
  EXPECT_TRUE(order_variants(v2, {"gpu90"}, supported_for(v2, features)).empty());
}

TEST(VariantSelection, NewestCudaBoundWinsNullLast) {
  // Driver 13.0 / sm 9.0: cu130's lower bound 13.0 is position 0, cu126's
  // 12.6 position 16; both have sm 90_real at position 0 (nvidia.rs order).
  // x needs 100_real: unsupported. null has no properties: last.
  VariantsJson m;
  m.namespace_priorities = {"nvidia"};
  m.providers["nvidia"] = nvidia_variant_provider();
  m.variants["cu130"]["nvidia"] = {{"cuda_version_lower_bound", {"13.0"}}, {"sm_arch", {"90_real"}}};
  m.variants["cu126"]["nvidia"] = {{"cuda_version_lower_bound", {"12.6"}}, {"sm_arch", {"80_real", "90_real"}}};
  m.variants["x"]["nvidia"] = {{"sm_arch", {"100_real"}}};
  m.variants["null"] = {};
  const SupportedProperties supported = supported_for(m, nvidia_supported_features(std::pair{13u, 0u}, std::pair{9u, 0u}));
  EXPECT_EQ(order_variants(m, {"null", "x", "cu126", "cu130"}, supported), (std::vector<std::string>{"cu130", "cu126", "null"}));
  const auto cu126 = score_variant(m, "cu126", supported);
  ASSERT_TRUE(cu126);
  EXPECT_EQ(cu126->properties, (std::vector<std::array<size_t, 3>>{{0, 0, 16}, {0, 2, 0}}));
  EXPECT_EQ(describe_unsupported(*unsupported_properties(m, "x", supported)), "`nvidia :: sm_arch :: 100_real`");
  // An optional provider is never run (variants_json.rs provider_requests).
  VariantsJson optional = m;
  optional.providers["nvidia"].optional = true;
  EXPECT_EQ(order_variants(optional, {"null", "x", "cu126", "cu130"}, supported_for(optional, nvidia_supported_features(std::pair{13u, 0u}, std::pair{9u, 0u}))),
            std::vector<std::string>{"null"});
}

TEST(VariantSelection, ScoreOrderIsUvsDerivedOrd) {
  // VariantScore derives Ord over (Vec<Reverse<(usize, usize, usize)>>,
  // Reverse<VariantLabel>); greater is preferred.
  const VariantScore a{{{0, 0, 0}}, "b"}, b{{{0, 0, 1}}, "a"};
  EXPECT_GT(a, b);  // the lower tuple wins before labels count
  const VariantScore longer{{{0, 0, 0}, {1, 0, 0}}, "z"};
  EXPECT_GT(longer, a);  // a prefix of the other: more properties win
  const VariantScore same_a{{{0, 0, 0}}, "a"};
  EXPECT_GT(same_a, a);  // equal properties: the lower label wins
  const VariantScore empty{{}, "null"}, empty_cpu{{}, "cpu"};
  EXPECT_GT(b, empty);  // any property beats none
  EXPECT_GT(empty_cpu, empty);  // two property-less labels: by label
}

}  // namespace
}  // namespace kwheel
