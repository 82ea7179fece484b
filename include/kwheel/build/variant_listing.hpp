#pragma once
// The variants a kernel repo offers, named by build/'s subdirectories and
// judged by their names alone: a Hub repo's are read from its file tree, so
// listing them downloads no binaries.
#include <optional>
#include <string>
#include <vector>

#include "kwheel/build/source.hpp"
#include "kwheel/kernel/variant.hpp"

namespace kwheel {

struct ListedVariant {
  std::string name;                // the directory under build/
  std::optional<Variant> variant;  // parsed; empty when the name is not a variant
  std::string error;               // why it is not, when it is not
};

struct VariantListing {
  ResolvedSource source;
  std::vector<ListedVariant> variants;  // sorted by name, each once
  bool all_valid() const;
};

VariantListing list_variants(const SourceRequest& request, const Feedback& feedback);

// "build/<variant>/..." -> the variant names, sorted, each once.
std::vector<std::string> variant_names(const std::vector<TreeEntry>& tree);

}  // namespace kwheel
