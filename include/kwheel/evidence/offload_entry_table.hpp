#pragma once
// The uncompressed clang offload bundle (offload_bundle.hpp's format):
// "__CLANG_OFFLOAD_BUNDLE__", u64 entry count, then per entry u64 offset
// (from the bundle's first byte), u64 size, u64 id length, id; all
// little-endian. Inside the reader (namespace kwheel::offload): a section
// holds it as is, and a compressed bundle (offload_compressed.hpp) holds
// one as its payload.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/evidence/offload_reading.hpp"

namespace kwheel::offload {

// An uncompressed bundle's header and entry table, read from its bytes in
// order as they arrive: a section's bytes at once, or a compressed bundle's
// as they are decompressed, chunk by chunk. Only the table is kept (its ids
// charged to the section's budget), never the code objects after it, so a
// bundle that inflates to 1 GiB costs its table and one chunk, not 1 GiB.
// Each field is checked against the bundle's size (known up front: the
// section's rest, or the size the container declares) before it is read,
// in the order and with the words of a read from whole bytes.
class EntryTableReader {
 public:
  // `where` and `budget` outlive the reader: all live for one bundle's parse.
  EntryTableReader(std::uint64_t size, const Where& where, Budget& budget);

  bool done() const { return phase_ == Phase::done; }

  // The bundle's next bytes; those past the table are skipped.
  void feed(std::span<const std::byte> bytes);

  // Once all `size` bytes were fed: the entries, each checked against the
  // bundle's size and its table.
  Parsed finish();

 private:
  enum class Phase { magic, count, fields, id, done };
  struct RawEntry {
    std::uint64_t offset = 0, size = 0;
    std::string id;
  };

  void expect(Phase phase, std::uint64_t len, std::string_view what);
  std::uint64_t u64(std::size_t at) const;
  std::string entry_name() const { return "entry " + std::to_string(entries_.size()); }
  void expect_entry();
  void complete_field();
  void read_count();
  void read_fields();

  const std::uint64_t size_;
  const Where& where_;
  Budget& budget_;
  Phase phase_ = Phase::magic;
  std::uint64_t pos_ = 0;   // where the field being read starts
  std::uint64_t need_ = 0;  // its length
  std::vector<std::byte> field_;  // its bytes so far (at most 1 KiB: an id)
  std::uint64_t count_ = 0;
  RawEntry current_;
  std::vector<RawEntry> entries_;
  std::uint64_t table_end_ = 0;  // where code objects may start
};

// `bytes` runs from the magic to the end of the section; entry offsets
// count from the magic.
Parsed parse_uncompressed(std::span<const std::byte> bytes, const Where& where, Budget& budget);

}  // namespace kwheel::offload
