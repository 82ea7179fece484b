#include "kwheel/factory/signed_metadata.hpp"

#include <ctime>
#include <map>
#include <optional>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/kernel/kernel_digest.hpp"
#include "kwheel/packaging/pep440.hpp"

namespace kwheel {
namespace {

const RepoFile* find_signature(const VariantInput& input) {
  for (const auto& f : input.files)
    if (f.path == kSignatureFile) return &f;
  return nullptr;
}

}  // namespace

void read_signed_metadata(const VariantInput& input, const BuildOptions& o, PlannedWheel& plan) {
  const std::string where = "variant '" + input.name + "'";
  const RepoFile* md = find_metadata(input);
  const RepoFile* sig = find_signature(input);
  if (sig && !md)
    throw Error(ErrorKind::input, where + " has " + kSignatureFile + " but no metadata.json for it to sign; rebuild the kernel with a current kernel-builder");
  const std::string text = md ? read_kernel_metadata_text(md->source, where) : std::string();
  std::optional<std::string> bundle;
  if (sig) bundle = read_small_file(sig->source, kMaxSignatureBytes, where + ": " + kSignatureFile);
  plan.signature = check_metadata_signature(text, bundle, o.signatures, where + ": " + kSignatureFile, std::time(nullptr));
  if (!md) return;
  plan.metadata = parse_kernel_metadata(text, where);
  Hasher h;
  h.update(text);
  plan.metadata_record_hash = "sha256=" + urlsafe_b64_nopad(h.finish());
}

void check_signed_identity(const PlannedWheel& plan, const std::string& version, const std::string& where) {
  if (!plan.signature.result || !plan.metadata) return;
  const KernelMetadata& md = *plan.metadata;
  if (md.name && !normalize_name(plan.dist_name).ends_with(normalize_name(*md.name)))
    throw Error(ErrorKind::input, where + ": the wheel would be named '" + plan.dist_name + "', but metadata.json is signed for the kernel '" + *md.name +
                                      "', and kwheel verify refuses a signed kernel under another name; build it without --name (--name-prefix keeps the name)");
  const Version v = Version::parse(version);
  if (md.version && (v.epoch() != 0 || v.release().front() != static_cast<long long>(*md.version)))
    throw Error(ErrorKind::input, where + ": the wheel would be version " + version + ", but metadata.json is signed for kernel version " +
                                      std::to_string(*md.version) + ", and kwheel verify refuses another version; pass a version " +
                                      std::to_string(*md.version) + ".B (or none)");
}

void verify_digest(const VariantInput& input, const PlannedWheel& plan, const WrittenWheel& written) {
  std::map<std::string, std::string> known;
  for (const auto& e : written.record)
    if (auto it = plan.member_sources.find(e.path); it != plan.member_sources.end()) known[it->second] = e.hash;
  // metadata.json is outside its own digest: the packed copy must be the
  // bytes whose signature was verified and which were parsed, not a file
  // changed on disk since.
  if (auto packed = known.find("metadata.json"); packed != known.end() && packed->second != plan.metadata_record_hash)
    throw Error(ErrorKind::input, "variant '" + input.name + "': metadata.json changed while the build read it; run the build again");
  if (plan.metadata->digest) check_digest_hashes(*plan.metadata->digest, input, known);
}

}  // namespace kwheel
