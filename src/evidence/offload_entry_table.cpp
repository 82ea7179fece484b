#include "kwheel/evidence/offload_entry_table.hpp"

#include <algorithm>
#include <cstring>

#include "kwheel/base/text.hpp"

namespace kwheel::offload {
namespace {

constexpr std::uint64_t kBundleHeaderBytes = 32;  // magic, entry count
constexpr std::uint64_t kEntryFieldBytes = 24;    // offset, size, id length
// Real ids are under 100 bytes; the cap keeps one hostile length from
// copying a large part of a section into a single string.
constexpr std::uint64_t kMaxEntryIdBytes = 1024;

}  // namespace

EntryTableReader::EntryTableReader(std::uint64_t size, const Where& where, Budget& budget)
    : size_(size), where_(where), budget_(budget) {
  need_ = kBundleMagic.size();
}

void EntryTableReader::feed(std::span<const std::byte> bytes) {
  while (!bytes.empty() && phase_ != Phase::done) {
    const auto n = std::min<std::uint64_t>(bytes.size(), need_ - field_.size());
    field_.insert(field_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    bytes = bytes.subspan(n);
    while (phase_ != Phase::done && field_.size() == need_) complete_field();
  }
}

Parsed EntryTableReader::finish() {
  if (phase_ == Phase::magic) where_.fail("does not start with the __CLANG_OFFLOAD_BUNDLE__ magic");
  if (phase_ != Phase::done) fail_cut_off(where_, size_, pos_, need_, "the entry table");
  Parsed p;
  p.extent = table_end_;
  for (std::uint64_t i = 0; i < entries_.size(); ++i) {
    const RawEntry& e = entries_[i];
    const std::string what = "entry " + std::to_string(i) + " ('" + e.id + "')";
    if (!inside(size_, e.offset, e.size)) fail_cut_off(where_, size_, e.offset, e.size, what + "'s code object");
    if (e.size > 0 && e.offset < table_end_) {
      where_.fail("places " + what + "'s code object at " + hex_offset(e.offset) +
                  ", inside its entry table (which ends at " + hex_offset(table_end_) + ")");
    }
    p.extent = std::max(p.extent, e.offset + e.size);
    OffloadTarget t;
    if (const std::string why = read_offload_entry_id(e.id, e.size, t); !why.empty())
      where_.fail("entry " + std::to_string(i) + " has the id '" + e.id + "', which " + why);
    p.targets.push_back(std::move(t));
  }
  return p;
}

// The next field: `len` bytes at pos_, refused at once if the bundle
// cannot hold them (they would never arrive).
void EntryTableReader::expect(Phase phase, std::uint64_t len, std::string_view what) {
  if (!inside(size_, pos_, len)) fail_cut_off(where_, size_, pos_, len, what);
  phase_ = phase;
  need_ = len;
  field_.clear();
}

std::uint64_t EntryTableReader::u64(std::size_t at) const {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i) v |= std::uint64_t(std::to_integer<std::uint8_t>(field_[at + i])) << (8 * i);
  return v;
}

// Entry i's three fields, each refused with its own name when cut off.
void EntryTableReader::expect_entry() {
  if (entries_.size() == count_) {
    table_end_ = pos_;
    phase_ = Phase::done;
    field_ = {};
    return;
  }
  const std::string what = entry_name();
  if (!inside(size_, pos_, 8)) fail_cut_off(where_, size_, pos_, 8, what + "'s offset");
  if (!inside(size_, pos_ + 8, 8)) fail_cut_off(where_, size_, pos_ + 8, 8, what + "'s size");
  if (!inside(size_, pos_ + 16, 8)) fail_cut_off(where_, size_, pos_ + 16, 8, what + "'s id length");
  expect(Phase::fields, kEntryFieldBytes, what + "'s fields");
}

void EntryTableReader::read_count() {
  count_ = u64(0);
  const std::uint64_t room = (size_ - kBundleHeaderBytes) / kEntryFieldBytes;
  if (count_ > room) {
    where_.fail("declares " + std::to_string(count_) + " entries, but the " + std::to_string(size_) +
                " bytes there are hold at most " + std::to_string(room));
  }
  pos_ = kBundleHeaderBytes;
  expect_entry();
}

void EntryTableReader::read_fields() {
  const std::string what = entry_name();
  current_.offset = u64(0);
  current_.size = u64(8);
  const std::uint64_t id_len = u64(16);
  if (id_len > kMaxEntryIdBytes) {
    where_.fail("says " + what + "'s id is " + std::to_string(id_len) + " bytes long; real ids are under " +
                std::to_string(kMaxEntryIdBytes));
  }
  budget_.charge(sizeof(OffloadTarget) + 2 * id_len, where_);
  pos_ += kEntryFieldBytes;
  expect(Phase::id, id_len, what + "'s id");
}

void EntryTableReader::complete_field() {
  switch (phase_) {
    case Phase::magic:
      if (std::memcmp(field_.data(), kBundleMagic.data(), kBundleMagic.size()) != 0) {
        where_.fail("does not start with the __CLANG_OFFLOAD_BUNDLE__ magic");
      }
      pos_ = kBundleMagic.size();
      expect(Phase::count, 8, "the entry count");
      return;
    case Phase::count: return read_count();
    case Phase::fields: return read_fields();
    case Phase::id:
      current_.id.assign(reinterpret_cast<const char*>(field_.data()), field_.size());
      pos_ += field_.size();
      entries_.push_back(std::move(current_));
      current_ = {};
      expect_entry();
      return;
    case Phase::done: return;
  }
}

Parsed parse_uncompressed(std::span<const std::byte> bytes, const Where& where, Budget& budget) {
  EntryTableReader table(bytes.size(), where, budget);
  table.feed(bytes);
  return table.finish();
}

}  // namespace kwheel::offload
