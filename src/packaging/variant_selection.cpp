#include "kwheel/packaging/variant_selection.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/packaging/pep440.hpp"

namespace kwheel {

// --------------------------------------------------------------------------- the vendored NVIDIA provider (nvidia.rs)

bool nvidia_driver_in_detection_range(std::pair<unsigned, unsigned> cuda_driver) {
  return cuda_driver >= std::pair{kNvidiaMinCudaMajor, kNvidiaMinCudaMinor} && cuda_driver <= std::pair{kNvidiaMaxCudaMajor, kNvidiaMaxCudaMinor};
}

namespace {

// "{major}.{max_minor}" down to "{major}.0", then "{major}": a major-only
// bound means the start of the series and ranks below every minor of it.
void append_cuda_series(std::vector<std::string>& out, uint64_t major, uint64_t max_minor) {
  for (uint64_t minor = max_minor + 1; minor-- > 0;) out.push_back(std::to_string(major) + "." + std::to_string(minor));
  out.push_back(std::to_string(major));
}

std::vector<std::string> cuda_lower_bounds(uint64_t major, uint64_t minor) {
  std::vector<std::string> out;
  append_cuda_series(out, major, minor);
  for (uint64_t m = major; m-- > kNvidiaMinCudaMajor;) append_cuda_series(out, m, kNvidiaMaxCudaMinor);
  return out;
}

std::vector<std::string> cuda_upper_bounds(uint64_t major, uint64_t minor) {
  std::vector<std::string> out;
  for (uint64_t m = kNvidiaMaxCudaMajor; m > major; --m) append_cuda_series(out, m, kNvidiaMaxCudaMinor);
  for (uint64_t m = kNvidiaMaxCudaMinor; m > minor; --m) out.push_back(std::to_string(major) + "." + std::to_string(m));
  return out;
}

std::vector<std::string> sm_architectures(unsigned major, unsigned minor) {
  std::vector<std::string> out;
  for (unsigned m = minor + 1; m-- > 0;) out.push_back(std::to_string(major) + std::to_string(m) + "_real");
  // uv's TODO: "_virtual" values as upstream has them, the major's .0 only.
  out.push_back(std::to_string(major) + "0_virtual");
  return out;
}

}  // namespace

SupportedFeatures nvidia_supported_features(std::optional<std::pair<unsigned, unsigned>> cuda_driver,
                                            std::optional<std::pair<unsigned, unsigned>> compute_capability) {
  if (!cuda_driver) return {};
  // uv parses a compute capability into (u8, u8); one that does not fit is
  // an error that skips the whole provider.
  if (compute_capability && (compute_capability->first > 255 || compute_capability->second > 255)) return {};
  const uint64_t major = cuda_driver->first, minor = cuda_driver->second;
  SupportedFeatures out;
  if (major >= kNvidiaMinCudaMajor) {
    // uv refuses (and so skips the provider) past 1024 values, which only
    // a forced version such as 12.2000 reaches.
    const uint64_t count = (minor + 2) + (major - kNvidiaMinCudaMajor) * (kNvidiaMaxCudaMinor + 2);
    if (count > kNvidiaMaxCudaVersionValues) return {};
    out.emplace_back("cuda_version_lower_bound", cuda_lower_bounds(major, minor));
  }
  if (major <= kNvidiaMaxCudaMajor)
    if (auto upper = cuda_upper_bounds(major, minor); !upper.empty()) out.emplace_back("cuda_version_upper_bound", std::move(upper));
  if (compute_capability && *compute_capability >= std::pair{5u, 0u})
    out.emplace_back("sm_arch", sm_architectures(compute_capability->first, compute_capability->second));
  return out;
}

namespace {

// A PEP 508 requirement reduced to what find_vendored_provider looks at:
// the name and the version specifier. nullopt for one with extras, a
// marker (uv takes only a marker that is always true; kwheel evaluates
// none) or a URL, and for text that is no requirement.
struct PlainRequirement {
  std::string name;
  std::string specifier;  // "" for any version
};

std::optional<PlainRequirement> plain_requirement(std::string_view text) {
  const std::string t = trim(text);
  const size_t name_end = t.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
  PlainRequirement r{t.substr(0, name_end), ""};
  if (!is_valid_name(r.name)) return std::nullopt;
  std::string rest = trim(name_end == std::string::npos ? "" : std::string_view(t).substr(name_end));
  if (rest.starts_with("[")) {  // "name[]" is no extra
    const size_t close = rest.find(']');
    if (close == std::string::npos || !trim(std::string_view(rest).substr(1, close - 1)).empty()) return std::nullopt;
    rest = trim(std::string_view(rest).substr(close + 1));
  }
  if (rest.starts_with("@") || rest.find(';') != std::string::npos) return std::nullopt;
  if (rest.starts_with("(")) {
    if (!rest.ends_with(")")) return std::nullopt;
    rest = trim(std::string_view(rest).substr(1, rest.size() - 2));
  }
  r.specifier = rest;
  return r;
}

bool specifier_contains(const std::string& specifier, std::string_view version) {
  if (specifier.empty()) return true;
  try {
    return SpecifierSet::parse(specifier).contains(Version::parse(version), true);
  } catch (const Error&) {
    return false;  // uv cannot parse it either: no vendored provider
  }
}

}  // namespace

bool is_vendored_nvidia_provider(const std::string& name_space, const VariantProvider& provider) {
  if (name_space != kNvidiaNamespace || provider.kind != VariantProvider::Kind::plugin || provider.requirements.size() != 1) return false;
  const auto req = plain_requirement(provider.requirements.front());
  // Without a plugin-api uv would look for "nvidia_variant_provider", which
  // is not the vendored plugin's object path.
  return req && normalize_name(req->name) == "nvidia-variant-provider" && provider.plugin_api == nvidia_variant_provider().plugin_api &&
         specifier_contains(req->specifier, "0.0.1");
}

// --------------------------------------------------------------------------- supported properties (variants_json.rs, variant/mod.rs)

SupportedProperties static_supported_properties(const VariantsJson& metadata) {
  SupportedProperties out;
  for (const auto& [ns, p] : metadata.providers) {
    if (p.optional || p.kind != VariantProvider::Kind::static_properties) continue;
    SupportedFeatures features;
    if (!p.feature_order.empty()) {
      for (const auto& f : p.feature_order)
        if (auto it = p.static_properties.find(f); it != p.static_properties.end()) features.emplace_back(f, it->second);
    } else {
      for (const auto& [f, values] : p.static_properties) features.emplace_back(f, values);
    }
    out[ns] = std::move(features);
  }
  return out;
}

SupportedProperties supported_for(const VariantsJson& metadata, const SupportedFeatures& nvidia) {
  SupportedProperties out = static_supported_properties(metadata);
  // An empty `nvidia` is uv's provider that reports nothing (None): the
  // namespace gets no entry. An entry with no features would rank the same.
  if (nvidia.empty()) return out;
  for (const auto& [ns, p] : metadata.providers)
    if (!p.optional && is_vendored_nvidia_provider(ns, p)) out[ns] = nvidia;
  return out;
}

// --------------------------------------------------------------------------- scoring (variants_json.rs)

std::strong_ordering operator<=>(const VariantScore& a, const VariantScore& b) {
  // Vec<Reverse<T>>: element by element, the lower tuple is the greater
  // score; when one is a prefix of the other, the longer is greater.
  const size_t n = std::min(a.properties.size(), b.properties.size());
  for (size_t i = 0; i < n; ++i)
    if (auto c = b.properties[i] <=> a.properties[i]; c != 0) return c;
  if (auto c = a.properties.size() <=> b.properties.size(); c != 0) return c;
  return b.label <=> a.label;  // Reverse<VariantLabel>
}

namespace {

// (feature position, value position) of the first supported value of the
// feature that the label lists (uv's score_feature).
std::optional<std::pair<size_t, size_t>> score_feature(const SupportedFeatures& supported, const std::string& feature,
                                                       const std::vector<std::string>& values) {
  auto f = std::find_if(supported.begin(), supported.end(), [&](const auto& s) { return s.first == feature; });
  if (f == supported.end()) return std::nullopt;
  const auto& ordered = f->second;
  auto v = std::find_if(ordered.begin(), ordered.end(), [&](const std::string& s) { return std::ranges::find(values, s) != values.end(); });
  if (v == ordered.end()) return std::nullopt;
  return std::pair{static_cast<size_t>(f - supported.begin()), static_cast<size_t>(v - ordered.begin())};
}

}  // namespace

std::optional<VariantScore> score_variant(const VariantsJson& metadata, const std::string& label, const SupportedProperties& supported) {
  auto it = metadata.variants.find(label);
  if (it == metadata.variants.end()) return std::nullopt;
  std::set<std::array<size_t, 3>> properties;
  for (const auto& [ns, features] : it->second) {
    if (features.empty()) continue;  // uv drops such a namespace on reading
    const auto& order = metadata.namespace_priorities;
    auto position = std::ranges::find(order, ns);
    auto namespace_supported = supported.find(ns);
    if (position == order.end() || namespace_supported == supported.end()) return std::nullopt;
    for (const auto& [feature, values] : features) {
      auto score = score_feature(namespace_supported->second, feature, values);
      if (!score) return std::nullopt;
      properties.insert({static_cast<size_t>(position - order.begin()), score->first, score->second});
    }
  }
  return VariantScore{{properties.begin(), properties.end()}, label};
}

std::vector<std::string> order_variants(const VariantsJson& metadata, const std::vector<std::string>& labels,
                                        const SupportedProperties& supported) {
  std::vector<VariantScore> scores;
  std::set<std::string> seen;
  for (const auto& label : labels)
    if (seen.insert(label).second)
      if (auto score = score_variant(metadata, label, supported)) scores.push_back(std::move(*score));
  std::sort(scores.begin(), scores.end(), [](const VariantScore& a, const VariantScore& b) { return a > b; });
  std::vector<std::string> out;
  for (auto& s : scores) out.push_back(std::move(s.label));
  return out;
}

std::optional<VariantProperties> unsupported_properties(const VariantsJson& metadata, const std::string& label,
                                                        const SupportedProperties& supported) {
  auto it = metadata.variants.find(label);
  if (it == metadata.variants.end()) return std::nullopt;
  VariantProperties out;
  for (const auto& [ns, features] : it->second) {
    auto namespace_supported = supported.find(ns);
    for (const auto& [feature, values] : features)
      if (namespace_supported == supported.end() || !score_feature(namespace_supported->second, feature, values)) out[ns][feature] = values;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::string describe_unsupported(const VariantProperties& unsupported) {
  std::string out;
  for (const auto& [ns, features] : unsupported)
    for (const auto& [feature, values] : features) {
      if (!out.empty()) out += " and ";
      std::string alternatives;
      for (const auto& v : values) alternatives += (alternatives.empty() ? "`" : " or `") + ns + " :: " + feature + " :: " + v + "`";
      out += values.size() > 1 ? "(" + alternatives + ")" : alternatives;
    }
  return out;
}

}  // namespace kwheel
