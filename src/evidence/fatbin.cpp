#include "kwheel/evidence/fatbin.hpp"

#include <map>

#include "kwheel/base/byte_reader.hpp"
#include "kwheel/base/error.hpp"

namespace kwheel {
namespace {

constexpr std::uint32_t kMagic = 0xBA55ED50;
constexpr std::uint64_t kContainerHeader = 16;
constexpr std::uint64_t kEntryHeaderMin = 64;
// nvcc 13 writes 64-112; a header far beyond that is not a fatbin's.
constexpr std::uint64_t kEntryHeaderMax = 4096;
constexpr std::uint16_t kKindPtx = 1, kKindSass = 2;
constexpr std::uint64_t kFlagLz4 = 0x2000, kFlagZstd = 0x8000, kFlagArchA = 0x100000, kFlagArchF = 0x200000;

// The section with the fatbin's error message. Fatbins are little-endian;
// every field is read checked, though the callers check each header's
// length first and so name what is cut off.
class Bytes : public ByteReader {
 public:
  Bytes(std::span<const std::byte> b, std::string_view name)
      : ByteReader(b, ByteOrder::little, past_the_end(name)), name_(name) {}
  [[noreturn]] void fail(std::uint64_t off, const std::string& what) const { fail(name_, off, what); }
  bool zeros_from(std::uint64_t off) const {
    for (; off < size(); ++off)
      if (bytes()[off] != std::byte{0}) return false;
    return true;
  }

 private:
  [[noreturn]] static void fail(std::string_view name, std::uint64_t off, const std::string& what) {
    throw Error(ErrorKind::input, std::string(name) + ": malformed CUDA fatbin (.nv_fatbin offset " + std::to_string(off) +
                                      "): " + what + "; the file is damaged or not what nvcc wrote");
  }
  static Refusal past_the_end(std::string_view name) {
    return [name](std::uint64_t off, std::uint64_t, std::string_view what) {
      fail(name, off, std::string(what) + " runs past the section");
    };
  }

  std::string_view name_;
};

ArchSuffix suffix_of(std::uint64_t flags) {
  if (flags & kFlagArchA) return ArchSuffix::a;
  if (flags & kFlagArchF) return ArchSuffix::f;
  return ArchSuffix::none;
}

// Reads the entry at `off` (inside a container ending at `end`); returns
// the offset of the next one.
std::uint64_t read_entry(const Bytes& b, std::uint64_t off, std::uint64_t end, std::vector<FatbinEntry>& out) {
  if (end - off < kEntryHeaderMin) b.fail(off, "an entry header runs past its container");
  const auto header = b.u32(off + 4, "the entry header size");
  const auto payload = b.u64(off + 8, "the entry payload size");
  if (header < kEntryHeaderMin || header > kEntryHeaderMax) b.fail(off, "entry header size " + std::to_string(header) + " is implausible");
  if (header > end - off || payload > end - off - header) b.fail(off, "an entry's payload runs past its container");
  FatbinEntry e;
  e.kind = b.u16(off, "the entry kind");
  const auto flags = b.u64(off + 40, "the entry flags");
  e.compressed = (flags & (kFlagLz4 | kFlagZstd)) != 0;
  e.size = payload;
  e.code_minor = b.u16(off + 24, "the entry code version");
  e.code_major = b.u16(off + 26, "the entry code version");
  if (!e.compressed) e.toolkit = toolkit_of_payload(b.range(off + header, payload, "the entry payload"));
  if (e.kind == kKindPtx || e.kind == kKindSass) {
    const auto number = b.u32(off + 28, "the entry architecture");
    const auto arch = arch_from_number(number, suffix_of(flags));
    if (!arch) b.fail(off, "architecture number " + std::to_string(number) + " is no GPU's");
    e.target = CudaTarget{e.kind == kKindPtx ? CudaCodeKind::ptx : CudaCodeKind::sass, *arch};
  }
  out.push_back(e);
  return off + header + payload;
}

}  // namespace

std::string FatbinEntry::str() const { return target ? target->str() : "kind_" + std::to_string(kind); }

std::vector<FatbinEntry> parse_fatbin(std::span<const std::byte> section, std::string_view name) {
  const Bytes b(section, name);
  std::vector<FatbinEntry> out;
  std::uint64_t off = 0;
  // Containers follow one another; what the linker pads between or after
  // them is zeros.
  while (off < b.size() && !b.zeros_from(off)) {
    while (b.u8(off, "padding") == 0) ++off;  // terminates: a non-zero byte follows
    if (b.size() - off < kContainerHeader) b.fail(off, "a container header runs past the section");
    if (b.u32(off, "the container magic") != kMagic) b.fail(off, "no fatbin magic 0xBA55ED50");
    const auto header = b.u16(off + 6, "the container header size");
    const auto body = b.u64(off + 8, "the container body size");
    if (header < kContainerHeader || header > b.size() - off) b.fail(off, "container header size " + std::to_string(header) + " is implausible");
    if (body > b.size() - off - header) b.fail(off, "a container of " + std::to_string(body) + " bytes runs past the section");
    const std::uint64_t end = off + header + body;
    for (std::uint64_t e = off + header; e < end;) e = read_entry(b, e, end, out);
    off = end;
  }
  return out;
}

std::vector<CudaTarget> cuda_targets(const std::vector<FatbinEntry>& entries) {
  std::vector<CudaTarget> out;
  for (const auto& e : entries)
    if (e.target) out.push_back(*e.target);
  return out;
}

std::string describe_entries(const std::vector<FatbinEntry>& entries, bool compression, std::size_t max_names) {
  std::vector<std::string> order;
  std::map<std::string, std::size_t> count;
  for (const auto& e : entries) {
    std::string name = e.str();
    if (compression && e.compressed) name.append(" (compressed)");
    if (count[name]++ == 0) order.push_back(std::move(name));
  }
  std::string out;
  for (std::size_t i = 0; i < order.size() && i < max_names; ++i) {
    if (i) out.append(", ");
    out.append(order[i]);
    if (const auto n = count[order[i]]; n > 1) out.append(" \u00d7").append(std::to_string(n));
  }
  if (order.size() > max_names) out.append(", and ").append(std::to_string(order.size() - max_names)).append(" more");
  return out;
}

}  // namespace kwheel
