// Variant directory names (build/<variant>/ of a Hub repo, chosen by whoever
// publishes the repo) through the grammar parser, and what build derives
// from a parsed name: the wheel's local version label.
#include "fuzz_support.hpp"
#include "kwheel/validate/compat.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/wheel/tags.hpp"
#include "kwheel/kernel/variant.hpp"

using namespace kwheel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string name = fuzz_string(data, size);
  const VariantParse r = try_parse_variant(name);
  FUZZ_CHECK(r.variant.has_value() == r.error.empty());
  try {
    const Variant v = parse_variant(name);
    FUZZ_CHECK(r.variant && *r.variant == v);
  } catch (const Error& e) {
    FUZZ_CHECK(!r.variant && e.kind() == ErrorKind::input);
  }
  if (!r.variant) return 0;
  const Variant& v = *r.variant;
  // The grammar is a bijection: the name prints back as given, and re-parses equal.
  FUZZ_CHECK(v.str() == name);
  const VariantParse again = try_parse_variant(v.str());
  FUZZ_CHECK(again.variant && *again.variant == v);
  FUZZ_CHECK(v.is_noarch() == !v.noarch.empty());
  FUZZ_CHECK(!v.cxx11_abi || v.framework == Framework::torch);

  // The label build puts in the wheel version must make a valid PEP 440
  // version, and index/pin/validate must read back what it says.
  const std::string label = local_label(v);
  const std::string version = "0.1.0" + (label.empty() ? "" : "+" + label);
  FUZZ_CHECK(Version::try_parse(version).has_value());
  const LocalLabel back = read_label(version);
  if (v.is_noarch()) {
    FUZZ_CHECK(back.noarch == (v.noarch != "universal"));
    FUZZ_CHECK(back.universal() == (v.noarch == "universal"));
  } else {
    FUZZ_CHECK(back.is_kwheel() && !back.noarch);
    FUZZ_CHECK(back.framework_version == v.framework_version);
    FUZZ_CHECK(back.cxx98 == (v.cxx11_abi == false));
    FUZZ_CHECK(back.backend == v.backend.variant_str());
    FUZZ_CHECK(back.cpu == (v.backend.kind == BackendKind::cpu));
    FUZZ_CHECK(back.cuda.has_value() == (v.backend.kind == BackendKind::cuda));
  }
  return 0;
}
