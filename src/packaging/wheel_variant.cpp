#include "kwheel/packaging/wheel_variant.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "kwheel/base/bounded_json.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {

namespace {

using nlohmann::json;

// Real files are a few KB (one entry per label); the nesting is fixed at 5
// levels (variants -> label -> namespace -> feature -> values).
constexpr JsonLimits kVariantsJsonLimits{4 << 20, 8, 200000};

bool variant_grammar(std::string_view s, bool period) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (period && c == '.');
  });
}

}  // namespace

bool is_variant_label(std::string_view label) { return variant_grammar(label, true); }
bool is_variant_namespace(std::string_view name) { return variant_grammar(name, false); }
bool is_variant_feature(std::string_view name) { return variant_grammar(name, false); }
bool is_variant_value(std::string_view value) { return variant_grammar(value, true); }

const VariantProvider& nvidia_variant_provider() {
  // The specifier holds 0.0.1 (what uv vendors) and stops before 0.1, where
  // a real plugin may change what the properties mean.
  static const VariantProvider provider = [] {
    VariantProvider p;
    p.requirements = {"nvidia-variant-provider>=0.0.1,<0.1"};
    p.plugin_api = "nvidia_variant_provider.plugin:NvidiaVariantPlugin";
    return p;
  }();
  return provider;
}

namespace {

using Fail = std::function<void(const std::string&)>;

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& i : items) out += (out.size() > 1 ? ", '" : "'") + i + "'";
  return out + "]";
}

bool has_duplicates(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  return std::adjacent_find(values.begin(), values.end()) != values.end();
}

// --------------------------------------------------------------------------- validation (uv's TryFrom<VariantsJsonWire>)

// A label and a value may hold '.', a namespace and a feature may not.
void check_name(std::string_view s, bool period, const char* what, const Fail& fail) {
  if (!variant_grammar(s, period))
    fail(std::string("invalid variant ") + what + " '" + std::string(s) + "' (PEP 825: " + (period ? "^[0-9a-z_.]+$" : "^[a-z0-9_]+$") + ")");
}

void check_features(const std::map<std::string, std::vector<std::string>>& features, const Fail& fail) {
  for (const auto& [feature, values] : features) {
    check_name(feature, false, "feature", fail);
    for (const auto& v : values) check_name(v, true, "value", fail);
  }
}

void check_grammar(const VariantsJson& m, const Fail& fail) {
  for (const auto& ns : m.namespace_priorities) check_name(ns, false, "namespace", fail);
  for (const auto& [ns, provider] : m.providers) {
    check_name(ns, false, "namespace", fail);
    check_features(provider.static_properties, fail);
    for (const auto& f : provider.feature_order) check_name(f, false, "feature", fail);
  }
  for (const auto& [label, properties] : m.variants) {
    check_name(label, true, "label", fail);
    for (const auto& [ns, features] : properties) {
      check_name(ns, false, "namespace", fail);
      check_features(features, fail);
    }
  }
}

void check_provider_namespaces(const VariantsJson& m, bool providers_given, const Fail& fail) {
  if (!providers_given && m.providers.empty() && m.schema != kPep850Schema) return;
  std::vector<std::string> found;
  for (const auto& [ns, _] : m.providers) found.push_back(ns);
  const std::set<std::string> expected(m.namespace_priorities.begin(), m.namespace_priorities.end());
  if (std::set<std::string>(found.begin(), found.end()) != expected)
    fail("variant providers must match the namespaces in default-priorities.namespace: expected " + quoted_list(m.namespace_priorities) +
         ", found " + quoted_list(found));
}

void check_static_provider(const std::string& ns, const VariantProvider& p, const Fail& fail) {
  std::vector<std::string> features;
  for (const auto& [f, _] : p.static_properties) features.push_back(f);
  std::vector<std::string> order = p.feature_order;
  std::sort(order.begin(), order.end());
  if (!p.feature_order.empty() && order != features)
    fail("variant provider '" + ns + "' has an invalid feature-order: expected each static feature in " + quoted_list(features) +
         " exactly once, found " + quoted_list(p.feature_order));
  if (p.feature_order.empty() && features.size() > 1)
    fail("variant provider '" + ns + "' must define feature-order for multiple static features: " + quoted_list(features));
  for (const auto& [f, values] : p.static_properties)
    if (has_duplicates(values)) fail("variant feature '" + ns + " :: " + f + "' must not contain duplicate values: " + quoted_list(values));
}

void check_label(const std::string& label, const VariantProperties& properties, const std::set<std::string>& priorities, const Fail& fail) {
  for (const auto& [ns, features] : properties) {
    if (!features.empty() && !priorities.contains(ns)) fail("variant namespace '" + ns + "' is missing from default-priorities.namespace");
    for (const auto& [f, values] : features) {
      if (values.empty()) fail("variant feature '" + ns + " :: " + f + "' must have at least one value");
      if (has_duplicates(values)) fail("variant feature '" + ns + " :: " + f + "' must not contain duplicate values: " + quoted_list(values));
      if (label == kNullVariantLabel) fail("the null variant must not have properties");
    }
  }
}

// `providers_given`: the file has a "providers" key, perhaps empty (uv
// tells an empty table from none).
void validate_metadata(const VariantsJson& m, bool providers_given, const Fail& fail) {
  check_grammar(m, fail);
  const std::set<std::string> priorities(m.namespace_priorities.begin(), m.namespace_priorities.end());
  if (priorities.empty() || priorities.size() != m.namespace_priorities.size())
    fail("variant namespace priorities must be non-empty and unique");
  check_provider_namespaces(m, providers_given, fail);
  for (const auto& [ns, p] : m.providers)
    if (p.kind == VariantProvider::Kind::static_properties) check_static_provider(ns, p, fail);
  for (const auto& [label, properties] : m.variants) check_label(label, properties, priorities, fail);
}

// uv drops the namespaces without features; values are a set.
void normalize_metadata(VariantsJson& m) {
  for (auto& [label, properties] : m.variants) {
    std::erase_if(properties, [](const auto& entry) { return entry.second.empty(); });
    for (auto& [ns, features] : properties)
      for (auto& [f, values] : features) std::sort(values.begin(), values.end());
  }
}

// --------------------------------------------------------------------------- reading

class VariantsReader {
 public:
  explicit VariantsReader(const std::string& where) : where_(where) {}
  [[noreturn]] void fail(const std::string& why) const { throw Error(ErrorKind::input, where_ + ": " + why + " (PEP 825 variant metadata)"); }
  Fail failer() const {
    return [this](const std::string& why) { fail(why); };
  }

  const json& object(const json& j, const std::string& what) const {
    if (!j.is_object()) fail(what + " must be a JSON object");
    return j;
  }
  const json& member(const json& obj, const char* key, const std::string& what) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(what + " has no '" + key + "'");
    return *it;
  }
  std::string text(const json& j, const std::string& what) const {
    if (!j.is_string()) fail(what + " must be a string");
    return j.get<std::string>();
  }
  std::vector<std::string> texts(const json& j, const std::string& what) const {
    if (!j.is_array()) fail(what + " must be a list of strings");
    std::vector<std::string> out;
    for (const auto& e : j) out.push_back(text(e, what + " item"));
    return out;
  }
  // serde's deny_unknown_fields.
  void only(const json& obj, std::initializer_list<std::string_view> keys, const std::string& what) const {
    for (const auto& [key, _] : obj.items())
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) fail(what + " has an unknown field '" + key + "'");
  }

  std::map<std::string, std::vector<std::string>> features(const json& j, const std::string& what) const {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& [feature, values] : object(j, what).items()) out[feature] = texts(values, what + " '" + feature + "'");
    return out;
  }

  VariantProvider provider(const json& j, const std::string& ns) const {
    const std::string what = "provider '" + ns + "'";
    object(j, what);
    VariantProvider p;
    if (auto it = j.find("optional"); it != j.end()) {
      if (!it->is_boolean()) fail(what + " 'optional' must be true or false");
      p.optional = it->get<bool>();
    }
    if (j.contains("static-properties")) {
      only(j, {"optional", "static-properties", "feature-order"}, what);
      p.kind = VariantProvider::Kind::static_properties;
      p.static_properties = features(j["static-properties"], what + " static-properties");
      if (j.contains("feature-order")) {
        p.feature_order = texts(j["feature-order"], what + " feature-order");
        if (p.feature_order.empty()) fail(what + " has an empty feature-order");
      }
    } else if (j.contains("requires")) {
      only(j, {"optional", "requires", "plugin-api"}, what);
      p.requirements = texts(j["requires"], what + " requires");
      if (j.contains("plugin-api")) p.plugin_api = text(j["plugin-api"], what + " plugin-api");
    } else if (j.contains("builtin")) {
      only(j, {"optional", "builtin"}, what);
      p.kind = VariantProvider::Kind::builtin;
      p.builtin = text(j["builtin"], what + " builtin");
    } else {
      fail(what + " has none of static-properties, requires, builtin");
    }
    return p;
  }

  VariantProperties properties(const json& j, const std::string& label) const {
    const std::string what = "variant '" + label + "'";
    VariantProperties out;
    for (const auto& [ns, features_json] : object(j, what).items()) out[ns] = features(features_json, what + " namespace '" + ns + "'");
    return out;
  }

 private:
  const std::string& where_;
};

json features_json(const std::map<std::string, std::vector<std::string>>& features, bool sort_values) {
  json out = json::object();
  for (auto [f, values] : features) {
    if (sort_values) std::sort(values.begin(), values.end());
    out[f] = values;
  }
  return out;
}

json provider_json(const VariantProvider& p) {
  json out = json::object();
  if (p.optional) out["optional"] = true;
  switch (p.kind) {
    case VariantProvider::Kind::plugin:
      out["requires"] = p.requirements;
      if (!p.plugin_api.empty()) out["plugin-api"] = p.plugin_api;
      break;
    case VariantProvider::Kind::static_properties:
      out["static-properties"] = features_json(p.static_properties, false);  // values in preference order
      if (!p.feature_order.empty()) out["feature-order"] = p.feature_order;
      break;
    case VariantProvider::Kind::builtin:
      out["builtin"] = p.builtin;
      break;
  }
  return out;
}

// The free text of the file (schema, requirements) goes out as JSON, which
// wants valid UTF-8; controls would only hide what a requirement says.
void check_printable(const VariantsJson& m, const Fail& fail) {
  std::vector<std::string> texts{m.schema};
  for (const auto& [ns, p] : m.providers) {
    texts.insert(texts.end(), p.requirements.begin(), p.requirements.end());
    texts.push_back(p.plugin_api);
    texts.push_back(p.builtin);
  }
  for (const auto& t : texts)
    if (unprintable_at(t) != std::string::npos) fail("'" + printable(t) + "' holds a control character or is not UTF-8");
}

}  // namespace

std::string render_variants_json(const VariantsJson& metadata) {
  const Fail fail = [](const std::string& why) { throw Error(ErrorKind::input, "cannot write variant metadata: " + why); };
  if (metadata.schema != kPep850Schema && metadata.schema != kPep825Schema)
    fail("schema '" + metadata.schema + "' is none that uv 0.13.9 knows (" + std::string(kPep850Schema) + ")");
  check_printable(metadata, fail);
  validate_metadata(metadata, !metadata.providers.empty(), fail);
  json out = json::object();
  out["$schema"] = metadata.schema;
  out["default-priorities"] = json::object({{"namespace", metadata.namespace_priorities}});
  if (!metadata.providers.empty()) {
    out["providers"] = json::object();
    for (const auto& [ns, p] : metadata.providers) out["providers"][ns] = provider_json(p);
  }
  out["variants"] = json::object();
  for (const auto& [label, properties] : metadata.variants) {
    json props = json::object();
    for (const auto& [ns, features] : properties)
      if (!features.empty()) props[ns] = features_json(features, true);
    out["variants"][label] = props;
  }
  return out.dump(2) + "\n";
}

VariantsJson parse_variants_json(std::string_view text, const std::string& where) {
  const VariantsReader r(where);
  const auto parsed = parse_bounded_json(text, kVariantsJsonLimits, ErrorKind::input, where, "is it PEP 825 variant metadata?");
  if (!parsed) r.fail("is not JSON");
  const json& root = r.object(*parsed, "the file");
  r.only(root, {"$schema", "default-priorities", "variants", "providers"}, "the file");
  VariantsJson m;
  m.schema = r.text(r.member(root, "$schema", "the file"), "'$schema'");
  const json& priorities = r.object(r.member(root, "default-priorities", "the file"), "'default-priorities'");
  r.only(priorities, {"namespace"}, "'default-priorities'");
  m.namespace_priorities = r.texts(r.member(priorities, "namespace", "'default-priorities'"), "'default-priorities.namespace'");
  // serde reads `"providers": null` as no providers.
  const bool providers_given = root.contains("providers") && !root["providers"].is_null();
  if (providers_given)
    for (const auto& [ns, p] : r.object(root["providers"], "'providers'").items()) m.providers[ns] = r.provider(p, ns);
  for (const auto& [label, p] : r.object(r.member(root, "variants", "the file"), "'variants'").items()) m.variants[label] = r.properties(p, label);
  validate_metadata(m, providers_given, r.failer());
  normalize_metadata(m);
  return m;
}

VariantsJson parse_wheel_variant_json(std::string_view text, const std::string& where, const std::string& label) {
  VariantsJson m = parse_variants_json(text, where);
  if (m.variants.size() != 1 || !m.variants.contains(label)) {
    std::vector<std::string> labels;
    for (const auto& [l, _] : m.variants) labels.push_back(l);
    throw Error(ErrorKind::input, where + ": expected variant.json to describe only the variant '" + label + "' from the wheel filename, found " +
                                      quoted_list(labels));
  }
  return m;
}

VariantsJson wheel_variant_json(const VariantsJson& release, const std::string& label) {
  auto it = release.variants.find(label);
  if (it == release.variants.end()) throw Error(ErrorKind::input, "the variant metadata has no variant '" + label + "'");
  VariantsJson wheel = release;
  wheel.variants = {*it};
  return wheel;
}

}  // namespace kwheel
