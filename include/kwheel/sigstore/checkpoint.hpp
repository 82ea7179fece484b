#pragma once
// Rekor checkpoints: a C2SP signed note (transparency-dev's log checkpoint
// format) whose text is the log's origin, its size and its root hash, each
// on a line, then optional extension lines; after a blank line, one or more
// signature lines "— <name> base64(<4-byte key hint><signature>)". A
// witness may cosign, so the log's line need not be first.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/sigstore/codec.hpp"
#include "kwheel/sigstore/trusted_root.hpp"

namespace kwheel::sigstore {

struct NoteSignature {
  std::string name;
  std::array<unsigned char, 4> key_hint{};
  Bytes signature;
};

struct SignedNote {
  std::string text;  // what was signed: the note up to and with its last newline
  std::vector<NoteSignature> signatures;
};

struct Checkpoint {
  std::string origin;
  std::uint64_t size = 0;
  Bytes root_hash;
  std::vector<std::string> extensions;
};

// Throw Error(input) saying what is malformed. Bounded: a checkpoint is a
// few hundred bytes, more than 64 KiB or 64 signatures is refused.
SignedNote parse_signed_note(std::string_view envelope);
Checkpoint parse_checkpoint(std::string_view note_text);

// The checkpoint of an inclusion proof, checked as sigstore-python does: the
// signature line whose key hint is the first 4 bytes of `log_id` must be a
// valid signature of a key of `tlogs` valid at every time of `valid_at`
// (verify_with_log_keys), and the checkpoint's root hash must be
// `root_hash`. Throws Error(input).
Checkpoint verify_checkpoint(std::string_view envelope, std::span<const unsigned char> log_id, std::span<const unsigned char> root_hash,
                             const std::vector<LogKey>& tlogs, std::span<const std::int64_t> valid_at);

}  // namespace kwheel::sigstore
