#pragma once
// A variant's metadata.json and its signature, as the build trusts them:
// verified before parsed, the signed name and version bound to the wheel's,
// and the packed copy held to the bytes verified and to their digest.
#include <string>

#include "kwheel/factory/build.hpp"
#include "kwheel/wheel/wheel_writer.hpp"

namespace kwheel {

// metadata.json, parsed only after its signature verified over the very
// bytes parsed (kernels' rule: never parse unverified metadata). Sets
// plan.signature and, when the variant has one, plan.metadata and
// plan.metadata_record_hash.
void read_signed_metadata(const VariantInput& input, const BuildOptions& o, PlannedWheel& plan);

// `kwheel verify` binds a verified signature's name and version to the
// wheel (docs/security.md, "What verify holds to what"): a wheel named or
// versioned against them would be written here and refused there, and the
// build table would call it signed. --name-prefix keeps the signed name as
// the ending, so it binds; a --name or --version that drops it does not.
void check_signed_identity(const PlannedWheel& plan, const std::string& version, const std::string& where);

// Packing hashed every member for RECORD; the digest is checked against
// those hashes, so a mismatch costs no second read and the staged wheel
// is discarded before it is ever visible. Needs plan.metadata.
void verify_digest(const VariantInput& input, const PlannedWheel& plan, const WrittenWheel& written);

}  // namespace kwheel
