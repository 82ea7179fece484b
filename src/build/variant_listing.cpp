#include "kwheel/build/variant_listing.hpp"

#include <algorithm>
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
  for (auto& name : names) {
    auto parsed = try_parse_variant(name);
    listing.variants.push_back({std::move(name), std::move(parsed.variant), std::move(parsed.error)});
  }
  return listing;
}

}  // namespace kwheel
