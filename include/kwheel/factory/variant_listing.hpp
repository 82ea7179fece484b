#pragma once
// The variants a kernel repo offers, named by build/'s subdirectories and
// judged by their names alone: a Hub repo's are read from its file tree, so
// listing them downloads no binaries.
#include <optional>
#include <string>
#include <vector>

#include "kwheel/factory/source.hpp"
#include "kwheel/kernel/variant.hpp"

namespace kwheel {

struct ListedVariant {
  std::string name;                // the directory under build/
  std::optional<Variant> variant;  // parsed; empty when the name is not a variant
  std::string error;               // why it is not, when it is not
};

// The variants of one version of a Hub kernel (branch vN), as `kernels
// versions` lists them.
struct VersionVariants {
  uint64_t version = 0;                 // N of branch vN
  std::string ref;                      // "v2"
  std::string commit;
  std::vector<ListedVariant> variants;  // sorted by name, each once
};

struct VariantListing {
  ResolvedSource source;
  std::vector<ListedVariant> variants;  // sorted by name, each once
  // A Hub repo asked for without --version or --revision, online: every
  // vN branch, lowest first (the resolved one, the highest, included).
  // Empty otherwise: the listing is `variants` alone.
  std::vector<VersionVariants> versions;
  bool all_valid() const;  // of `variants`: an old version's odd names do not fail the listing
};

VariantListing list_variants(const SourceRequest& request, const Feedback& feedback);

// "build/<variant>/..." -> the variant names, sorted, each once.
std::vector<std::string> variant_names(const std::vector<TreeEntry>& tree);

}  // namespace kwheel
