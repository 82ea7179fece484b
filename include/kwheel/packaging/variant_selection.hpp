#pragma once
// Which PEP 825 variants of a release a system supports, and in which
// order an installer prefers them: uv 0.13.9's rules, so that kwheel
// predicts the wheel `uv pip install --preview-features wheel-variants`
// takes. Sources: crates/uv-distribution-types/src/variants_json.rs
// (score_variant, score_feature, static_supported_properties,
// UnsupportedVariantProperties), crates/uv-distribution/src/variant/mod.rs
// (supported_variant_properties, find_vendored_provider) and
// crates/uv-distribution/src/variant/nvidia.rs (the vendored
// nvidia-variant-provider 0.0.1).
#include <array>
#include <compare>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kwheel/packaging/wheel_variant.hpp"

namespace kwheel {

// One namespace's supported features, most preferred first, each with its
// supported values, most preferred first.
using SupportedFeatures = std::vector<std::pair<std::string /*feature*/, std::vector<std::string> /*ordered values*/>>;
using SupportedProperties = std::map<std::string /*namespace*/, SupportedFeatures>;

// uv's NvidiaVariantProvider bounds (nvidia.rs). A *detected* driver
// outside 11.0 ..= 15.20 makes uv skip the provider; a forced one is used
// as it is.
inline constexpr unsigned kNvidiaMinCudaMajor = 11, kNvidiaMinCudaMinor = 0;
inline constexpr unsigned kNvidiaMaxCudaMajor = 15, kNvidiaMaxCudaMinor = 20;
inline constexpr size_t kNvidiaMaxCudaVersionValues = 1024;
// What uv reads instead of detecting: "12.6" (or "12"), "8.9".
inline constexpr std::string_view kNvidiaForceCudaDriverEnv = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION";
inline constexpr std::string_view kNvidiaForceSmArchEnv = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH";

// Whether uv uses a detected (not forced) CUDA driver version.
bool nvidia_driver_in_detection_range(std::pair<unsigned, unsigned> cuda_driver);

// The properties nvidia-variant-provider 0.0.1 supports for a CUDA driver
// version (major, minor; a major-only version is minor 0, as uv reads it)
// and a GPU's compute capability: uv's
// NvidiaVariantProvider::properties_for_capabilities, same features, values
// and order. cuda_version_lower_bound: "{major}.{minor}" from the driver's
// down to .0, then "{major}", then every older major down to 11, each from
// .20; cuda_version_upper_bound: the newer majors up to 15 (from 15.20
// down) and then this major's newer minors; sm_arch: "{major}{minor}_real"
// from the GPU's minor down to 0, then "{major}0_virtual", for a compute
// capability of 5.0 or more.
// Empty, which uv treats as no provider at all, when there is no driver,
// when the lower bounds would be more than 1024 values, or when a compute
// capability number does not fit uv's u8.
SupportedFeatures nvidia_supported_features(std::optional<std::pair<unsigned, unsigned>> cuda_driver,
                                            std::optional<std::pair<unsigned, unsigned>> compute_capability);

// Whether uv 0.13.9 runs its vendored NVIDIA provider for this providers
// entry (find_vendored_provider): namespace "nvidia", a plugin provider
// with exactly one PEP 508 requirement naming nvidia-variant-provider,
// without extras, marker or URL, whose specifier (if any) contains 0.0.1,
// and plugin-api "nvidia_variant_provider.plugin:NvidiaVariantPlugin".
// nvidia_variant_provider() is such an entry.
bool is_vendored_nvidia_provider(const std::string& name_space, const VariantProvider& provider);

// The supported properties the file itself states: its non-optional static
// providers, features in feature-order (or the one feature).
SupportedProperties static_supported_properties(const VariantsJson& metadata);

// What uv's supported_variant_properties gives on a system whose NVIDIA
// provider reports `nvidia` (nvidia_supported_features()): the static
// providers, and `nvidia` for the namespace whose provider is the vendored
// NVIDIA one. Optional providers are skipped; other plugins and builtins
// (uv also vendors tpu, x86_64, aarch64 providers, which kwheel does not
// model) give nothing, so labels using them come out unsupported.
SupportedProperties supported_for(const VariantsJson& metadata, const SupportedFeatures& nvidia);

// A compatible variant's rank, as uv's VariantScore: for each feature of
// the label, (namespace position in default-priorities, feature position
// in the supported features, position of its first supported value),
// sorted ascending. Compared as uv's derived Ord over
// (Vec<Reverse<(usize, usize, usize)>>, Reverse<label>): greater is
// preferred, i.e. the lower first differing tuple wins, a list that is a
// prefix of the other loses (more properties win), then the lower label.
struct VariantScore {
  std::vector<std::array<size_t, 3>> properties;
  std::string label;
  friend std::strong_ordering operator<=>(const VariantScore& a, const VariantScore& b);
  bool operator==(const VariantScore&) const = default;
};

// nullopt when the label is not in the metadata, or when a feature of it
// has no supported value (a namespace without supported properties, a
// feature the provider does not list, no listed value). A label with no
// properties ("null") always scores.
std::optional<VariantScore> score_variant(const VariantsJson& metadata, const std::string& label, const SupportedProperties& supported);

// The compatible labels among `labels` (duplicates once), most preferred
// first; the unsupported ones are left out. "null" comes after every
// compatible label that has properties.
std::vector<std::string> order_variants(const VariantsJson& metadata, const std::vector<std::string>& labels,
                                        const SupportedProperties& supported);

// The features of `label` that the system does not support, with all
// their values (uv's unsupported_variant_properties); nullopt when the
// label is not in the metadata or every feature is supported.
std::optional<VariantProperties> unsupported_properties(const VariantsJson& metadata, const std::string& label,
                                                        const SupportedProperties& supported);

// For messages, as uv's UnsupportedVariantProperties Display: features
// joined by " and ", a feature's values by " or " (parenthesised when
// several), each "`namespace :: feature :: value`".
std::string describe_unsupported(const VariantProperties& unsupported);

}  // namespace kwheel
