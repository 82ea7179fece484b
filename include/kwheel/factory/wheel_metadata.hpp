#pragma once
// What a variant's wheel says it is: its distribution name, its public
// version, and the core metadata (METADATA) rendered into its .dist-info,
// decided from the options and the kernel's own metadata.json
// (docs/wheel-naming.md).
#include <optional>
#include <string>

#include "kwheel/factory/build.hpp"
#include "kwheel/kernel/kernel_layout.hpp"
#include "kwheel/kernel/kernel_metadata.hpp"
#include "kwheel/kernel/variant.hpp"
#include "kwheel/wheel/core_metadata.hpp"

namespace kwheel {

// docs/wheel-naming.md: a fixed version as given; an integer-versioned
// kernel's wheel is <N>.<build>, N from the commit's own metadata.json
// (else the vN branch), build the commit's position in its history.
std::string public_version(const VariantInput& input, const std::optional<KernelMetadata>& md, const BuildOptions& o);

// --name, else metadata.json's name, else the package directory; after
// --name-prefix.
std::string dist_name_of(const VariantLayout& layout, const std::optional<KernelMetadata>& md, const BuildOptions& o);

// METADATA's fields for the planned wheel (name, version, tags and
// metadata.json already in `plan`); `where` names the variant in errors.
CoreMetadata core_metadata(const PlannedWheel& plan, const Variant& variant, const BuildOptions& o, const std::string& where);

}  // namespace kwheel
