#pragma once
// PEP 825 wheel variants: labels, variant properties, and the variant
// metadata file (a wheel's *.dist-info/variant.json, an index's
// {name}-{version}-variants.json) with the PEP 850 `providers` table, as
// uv 0.13.9 reads them behind `--preview-features wheel-variants`
// (crates/uv-distribution-types/src/variants_json.rs). Everything read
// here may come from an index, so it is bounded and validated before use.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

// The schema URLs uv 0.13.9 knows (PEP_825_SCHEMA, PEP_850_SCHEMA). 850
// adds `providers`, which uv needs to detect a namespace's supported
// properties, so kwheel writes 850.
inline constexpr std::string_view kPep825Schema = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json";
inline constexpr std::string_view kPep850Schema = "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json";

// The reserved label of the variant with zero properties, always compatible.
inline constexpr std::string_view kNullVariantLabel = "null";

// PEP 825 grammar: label and value ^[0-9a-z_.]+$, namespace and feature
// ^[a-z0-9_]+$.
bool is_variant_label(std::string_view label);
bool is_variant_namespace(std::string_view name);
bool is_variant_feature(std::string_view name);
bool is_variant_value(std::string_view value);

// namespace -> feature -> values. A wheel is compatible when, for every
// feature, the system supports at least one of its values; the values are
// a set, kept sorted and unique (PEP 825: "sorted lexically").
using VariantProperties = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

// A PEP 850 provider: how an installer learns which properties of one
// namespace the system supports.
struct VariantProvider {
  enum class Kind {
    plugin,             // "requires" (+ "plugin-api"): a Python plugin, or a provider the installer vendors
    static_properties,  // "static-properties" (+ "feature-order"): the supported values, written in the file
    builtin,            // "builtin": a provider built into the installer ("abi_dependency")
  };
  Kind kind = Kind::plugin;
  bool optional = false;  // "optional": only used when the user enables it (uv 0.13.9 never does)
  // plugin: the "requires" list (`requires` is a C++ keyword) and
  // "plugin-api" ("" when not given: installers derive it from the name).
  std::vector<std::string> requirements;
  std::string plugin_api;
  // static_properties: feature -> supported values, most preferred first
  // (not sorted: the order is the preference); "feature-order" is needed
  // for more than one feature, empty when not given.
  std::map<std::string, std::vector<std::string>> static_properties;
  std::vector<std::string> feature_order;
  std::string builtin;
  bool operator==(const VariantProvider&) const = default;
};

// The variant metadata of a release (index-level) or of one wheel (exactly
// one label).
struct VariantsJson {
  std::string schema = std::string(kPep850Schema);
  std::vector<std::string> namespace_priorities;  // "default-priorities": {"namespace": [...]}, most important first
  std::map<std::string, VariantProvider> providers;  // by namespace; empty: no "providers" key
  std::map<std::string, VariantProperties> variants;  // by label
  bool operator==(const VariantsJson&) const = default;
};

// The provider entry for the NVIDIA provider that uv 0.13.9 vendors: its
// find_vendored_provider (crates/uv-distribution/src/variant/mod.rs) takes
// a namespace "nvidia" whose provider has exactly one requirement naming
// nvidia-variant-provider, with no extras, no marker and a specifier that
// contains 0.0.1, and plugin-api
// "nvidia_variant_provider.plugin:NvidiaVariantPlugin"
// (crates/uv-distribution/src/variant/nvidia.rs, PLUGIN_API). Any other
// entry leaves uv without detected properties for the namespace, so every
// labelled variant using it is unsupported.
inline constexpr std::string_view kNvidiaNamespace = "nvidia";
const VariantProvider& nvidia_variant_provider();

// Deterministic bytes: keys sorted, two-space indentation, a trailing
// newline; feature values sorted and unique; a namespace with no features
// left out (uv drops it on reading). Validates as parse_variants_json does
// and refuses a schema other than the two uv knows (PEP 825: tools MUST NOT
// output a version they do not support): Error(input).
std::string render_variants_json(const VariantsJson& metadata);

// Reads and validates variant metadata as uv's VariantsJsonWire and its
// TryFrom do: no unknown fields; every label, namespace, feature and value
// in PEP 825's grammar; namespace priorities non-empty and unique; with a
// "providers" key or the 850 schema, the providers' namespaces are exactly
// the priorities; a static provider with several features has a complete
// feature-order; each feature has values, none repeated; every namespace
// used is in the priorities; "null" has no properties. Like uv, another
// schema URL is read when its content passes (PEP 825 would have tools
// reject unknown major versions). Values come back sorted (uv keeps them as
// written; their order never matters). Throws Error(input) naming `where`
// and the problem; text over 4 MiB or nested deeper than the format is
// refused unparsed.
VariantsJson parse_variants_json(std::string_view text, const std::string& where);

// A wheel's variant.json: as parse_variants_json, and it describes exactly
// the variant named in the wheel's filename (uv's
// VariantsJsonContent::from_wheel).
VariantsJson parse_wheel_variant_json(std::string_view text, const std::string& where, const std::string& label);

// The variant.json of the wheel labelled `label`, from the release's
// metadata: the same schema, priorities and providers, that one label.
// Throws Error(input) when the release has no such label.
VariantsJson wheel_variant_json(const VariantsJson& release, const std::string& label);

}  // namespace kwheel
