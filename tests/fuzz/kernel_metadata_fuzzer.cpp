// A variant's metadata.json and a kernels.lock, both read from repos and
// projects kwheel does not control: parse_kernel_metadata (and the
// python-depends mapping it feeds) and parse_kernels_lock.
#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/kernel/kernel_lock.hpp"
#include "kwheel/kernel/kernel_metadata.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/base/text.hpp"

using namespace kwheel;

namespace {

void metadata(const std::string& text) {
  KernelMetadata md;
  try {
    md = parse_kernel_metadata(text, "variant 'fuzz'");
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);
    return;
  }
  if (md.name) FUZZ_CHECK(is_valid_kernel_name(*md.name));
  if (md.digest) FUZZ_CHECK(md.digest->algorithm == "sha256" || md.digest->algorithm == "sha512");
  for (const auto& d : md.kernel_depends) {
    FUZZ_CHECK(d.version.has_value() != d.revision.has_value());
    FUZZ_CHECK(!d.version || *d.version <= kMaxKernelVersion);
  }
  // Issue 30: nothing unprintable gets out of metadata.json.
  for (const auto* text : {&md.name, &md.id, &md.license, &md.upstream, &md.source, &md.backend})
    if (*text) FUZZ_CHECK(unprintable_at(**text) == std::string::npos);
  try {
    python_requirements(md, md.backend.value_or("cpu"), "variant 'fuzz'");
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);
  }
  // A requirement between kernels is a bare normalised name and, at most, a
  // version range: never a URL, a marker, an extra or an option.
  for (const auto& r : kernel_requirements(md, "acme-")) {
    const std::string name = r.substr(0, r.find_first_of("<>="));
    FUZZ_CHECK(is_valid_name(name) && name == normalize_name(name));
    FUZZ_CHECK(r.find_first_of(" @;[\\\"'") == std::string::npos);
  }
}

void lock(const std::string& text) {
  try {
    for (const auto& k : parse_kernels_lock(text, "fuzz.lock")) {
      FUZZ_CHECK(k.commit.size() == 40);
      FUZZ_CHECK(k.dependency.repo_id.find('/') != std::string::npos);
    }
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz_string(data, size);
  metadata(text);
  lock(text);
  return 0;
}
