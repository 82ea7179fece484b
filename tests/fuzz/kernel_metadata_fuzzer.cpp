// A variant's metadata.json and a kernels.lock, both read from repos and
// projects kwheel does not control: parse_kernel_metadata (and the
// python-depends mapping it feeds) and parse_kernels_lock.
#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/kernel/kernel_lock.hpp"
#include "kwheel/kernel/kernel_metadata.hpp"

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
  for (const auto& d : md.kernel_depends) FUZZ_CHECK(d.version.has_value() != d.revision.has_value());
  try {
    python_requirements(md, md.backend.value_or("cpu"), "variant 'fuzz'");
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);
  }
  kernel_requirements(md);
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
