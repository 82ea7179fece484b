#include "kwheel/evidence/offload_bundle.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "kwheel/base/byte_budget.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/evidence/offload_compressed.hpp"
#include "kwheel/evidence/offload_entry_table.hpp"

namespace kwheel {
namespace {

using offload::kBundleMagic;
using offload::kCompressedMagic;

bool starts_with(std::span<const std::byte> bytes, std::string_view magic) {
  return bytes.size() >= magic.size() && std::memcmp(bytes.data(), magic.data(), magic.size()) == 0;
}

std::uint64_t skip_zero_padding(std::span<const std::byte> section, std::uint64_t pos) {
  const auto it = std::find_if(section.begin() + static_cast<std::ptrdiff_t>(pos), section.end(),
                               [](std::byte b) { return b != std::byte{0}; });
  return static_cast<std::uint64_t>(it - section.begin());
}

[[noreturn]] void fail_not_a_bundle(std::span<const std::byte> rest, std::uint64_t pos, std::string_view name) {
  const auto is_prefix_of = [rest](std::string_view magic) {
    return rest.size() < magic.size() && std::memcmp(rest.data(), magic.data(), rest.size()) == 0;
  };
  const std::string what = is_prefix_of(kBundleMagic) || is_prefix_of(kCompressedMagic)
                               ? "ends inside an offload bundle's magic"
                               : "is neither zero padding nor an offload bundle";
  throw Error(ErrorKind::input, std::string(name) + ": the offload bundle data at offset " + hex_offset(pos) + " " + what +
                                    std::string(offload::kFix));
}

}  // namespace

ByteBudget& offload_decode_budget() {
  static ByteBudget budget(kOffloadDecodeBudgetBytes);
  return budget;
}

bool has_offload_bundle_magic(std::span<const std::byte> head) {
  return starts_with(head, kBundleMagic) || starts_with(head, kCompressedMagic);
}

std::vector<OffloadBundle> parse_offload_bundles(std::span<const std::byte> section, std::string_view name) {
  std::vector<OffloadBundle> bundles;
  offload::Budget budget(section.size());
  for (std::uint64_t pos = skip_zero_padding(section, 0); pos < section.size();
       pos = skip_zero_padding(section, pos)) {
    const auto rest = section.subspan(pos);
    const offload::Where where{name, "offload bundle at offset " + hex_offset(pos)};
    OffloadBundle bundle;
    offload::Parsed p;
    if (starts_with(rest, kBundleMagic)) {
      p = offload::parse_uncompressed(rest, where, budget);
    } else if (starts_with(rest, kCompressedMagic)) {
      bundle.compressed = true;
      p = offload::parse_compressed(rest, where, budget);
    } else {
      fail_not_a_bundle(rest, pos, name);
    }
    bundle.targets = std::move(p.targets);
    bundles.push_back(std::move(bundle));
    pos += p.extent;  // never 0: at least a header
  }
  return bundles;
}

std::vector<std::string> gfx_targets(const std::vector<OffloadBundle>& bundles) {
  std::set<std::string> processors;
  for (const OffloadBundle& b : bundles) {
    for (const OffloadTarget& t : b.targets) {
      if (t.kind != "host" && !t.processor.empty()) processors.insert(t.processor);
    }
  }
  return {processors.begin(), processors.end()};
}

}  // namespace kwheel
