#pragma once
// Checks a variant against its metadata.json digest, with kernels' own rule
// (kernels-data Digest::validate): every file the digest covers must be
// listed, every listed file must exist, and every hash must match.
#include <map>
#include <string>
#include <string_view>

#include "kwheel/kernel/kernel_metadata.hpp"
#include "kwheel/packaging/record.hpp"
#include "kwheel/kernel/repo_layout.hpp"

namespace kwheel {

// Whether kernels' digest walk hashes this variant-relative path: all files
// but metadata.json and metadata.json.sigstore at the top, __pycache__ and
// *.pyc.
bool digest_covers(std::string_view path);

// A sha256 from the digest (standard base64) as RECORD spells it
// ("sha256=<urlsafe b64, unpadded>"), to compare with hashes RECORD holds.
std::string as_record_hash(const std::string& standard);

// The file sets agree: no listed file missing, no covered file unlisted.
// Throws Error(input) naming the variant and the first file at fault.
void check_digest_files(const KernelDigest& digest, const VariantInput& variant);

// Every listed file's hash matches. `known` maps variant-relative paths to
// RECORD hashes ("sha256=<urlsafe b64>") already computed while packing, so
// packed files are not read twice for sha256 digests; the rest are hashed
// here. Throws Error(input) naming the variant and the file.
void check_digest_hashes(const KernelDigest& digest, const VariantInput& variant, const std::map<std::string, std::string>& known);

}  // namespace kwheel
