#include "kwheel/factory/variant_listing.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace kwheel {

bool VariantListing::all_valid() const {
  return std::all_of(variants.begin(), variants.end(), [](const ListedVariant& v) { return v.variant.has_value(); });
}

std::vector<std::string> variant_names(const std::vector<TreeEntry>& tree) {
  std::set<std::string> names;
  for (const auto& e : tree) {
    if (!e.path.starts_with("build/")) continue;
    auto rest = e.path.substr(6);
    auto slash = rest.find('/');
    names.insert(slash == std::string::npos ? rest : rest.substr(0, slash));
  }
  return {names.begin(), names.end()};
}

namespace {

std::vector<ListedVariant> listed(std::vector<std::string> names) {
  std::vector<ListedVariant> out;
  for (auto& name : names) {
    auto parsed = try_parse_variant(name);
    out.push_back({std::move(name), std::move(parsed.variant), std::move(parsed.error)});
  }
  return out;
}

// Every vN branch's variants, from each commit's tree (names only).
std::vector<VersionVariants> every_version(ResolvedSource& src) {
  std::vector<VersionVariants> out;
  for (const auto& ref : src.client->list_refs()) {
    const auto n = ref.kind == "branch" ? version_branch(ref.name) : std::nullopt;
    if (!n) continue;
    VersionVariants v{*n, ref.name, ref.commit, {}};
    v.variants = listed(variant_names(ref.commit == src.resolution->commit ? src.tree : src.client->list_tree(ref.commit)));
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(), [](const VersionVariants& a, const VersionVariants& b) { return a.version < b.version; });
  return out;
}

}  // namespace

VariantListing list_variants(const SourceRequest& request, const Feedback& feedback) {
  VariantListing listing;
  listing.source = resolve_source(request, feedback);
  ResolvedSource& src = listing.source;
  std::vector<std::string> names;
  if (src.is_hub && !src.client->config().offline) {
    names = variant_names(src.tree);
  } else {
    std::set<std::string> unique;
    for (const auto& v : group_variants(fetch_source(src, request, feedback))) unique.insert(v.name);
    names.assign(unique.begin(), unique.end());
  }
  listing.variants = listed(std::move(names));
  if (src.is_hub && !src.client->config().offline && src.resolution && src.resolution->latest) listing.versions = every_version(src);
  return listing;
}

}  // namespace kwheel
