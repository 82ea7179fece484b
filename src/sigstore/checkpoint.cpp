#include "kwheel/sigstore/checkpoint.hpp"

#include <algorithm>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel::sigstore {

namespace {

constexpr size_t kMaxEnvelope = 64 << 10;
constexpr size_t kMaxSignatures = 64;
constexpr std::string_view kEmDash = "\xe2\x80\x94 ";  // U+2014 and a space

Error malformed(const std::string& why) { return Error(ErrorKind::input, "malformed checkpoint: " + why); }

NoteSignature signature_line(std::string_view line) {
  if (!line.starts_with(kEmDash)) throw malformed("a signature line does not start with an em dash");
  line.remove_prefix(kEmDash.size());
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || space == 0 || line.find(' ', space + 1) != std::string_view::npos)
    throw malformed("a signature line is not '— <name> <signature>'");
  NoteSignature s;
  s.name = std::string(line.substr(0, space));
  const Bytes raw = decode_base64(line.substr(space + 1), "a checkpoint signature");
  if (raw.size() < 5) throw malformed("a signature holds fewer than 5 bytes");
  std::copy_n(raw.begin(), 4, s.key_hint.begin());
  s.signature.assign(raw.begin() + 4, raw.end());
  return s;
}

}  // namespace

SignedNote parse_signed_note(std::string_view envelope) {
  if (envelope.size() > kMaxEnvelope) throw malformed("larger than 64 KiB");
  const size_t blank = envelope.find("\n\n");
  if (blank == std::string_view::npos || envelope.find("\n\n", blank + 1) != std::string_view::npos)
    throw malformed("it needs exactly one blank line between the note and its signatures");
  SignedNote note;
  note.text = std::string(envelope.substr(0, blank + 1));
  std::string_view block = envelope.substr(blank + 2);
  if (block.empty()) throw malformed("it has no signature");
  if (block.back() != '\n') throw malformed("its signatures do not end with a newline");
  block.remove_suffix(1);
  for (const auto& line : split(block, '\n')) {
    if (note.signatures.size() == kMaxSignatures) throw malformed("more than 64 signatures");
    note.signatures.push_back(signature_line(line));
  }
  return note;
}

Checkpoint parse_checkpoint(std::string_view text) {
  std::vector<std::string> lines = split(trim(text), '\n');
  if (lines.size() < 3) throw malformed("its note has fewer than 3 lines (origin, size, root hash)");
  Checkpoint c;
  c.origin = lines[0];
  if (c.origin.empty()) throw malformed("its origin is empty");
  const std::string& size = lines[1];
  if (size.empty() || size.size() > 19 || !std::ranges::all_of(size, [](char ch) { return ch >= '0' && ch <= '9'; }))
    throw malformed("its size '" + size.substr(0, 32) + "' is not a number");
  c.size = std::stoull(size);
  c.root_hash = decode_base64(lines[2], "the checkpoint's root hash");
  if (c.root_hash.size() != 32) throw malformed("its root hash is not 32 bytes");
  c.extensions.assign(lines.begin() + 3, lines.end());
  return c;
}

Checkpoint verify_checkpoint(std::string_view envelope, std::span<const unsigned char> log_id, std::span<const unsigned char> root_hash,
                             const std::vector<LogKey>& tlogs, std::span<const std::int64_t> valid_at) {
  const SignedNote note = parse_signed_note(envelope);
  const Checkpoint checkpoint = parse_checkpoint(note.text);
  if (log_id.size() < 4) throw Error(ErrorKind::input, "the log entry's log ID is shorter than a key hint");
  // Only the line the log's key hint names is the log's; a witness's
  // cosignature, whose key kwheel does not hold, is not an answer either way.
  auto mine = std::ranges::find_if(note.signatures, [&](const NoteSignature& s) { return std::ranges::equal(s.key_hint, log_id.first(4)); });
  if (mine == note.signatures.end())
    throw Error(ErrorKind::input, "the checkpoint has no signature of log " + to_hex(log_id));
  const auto text = std::span(reinterpret_cast<const unsigned char*>(note.text.data()), note.text.size());
  if (!verify_with_log_keys(tlogs, log_id, mine->signature, text, valid_at))
    throw Error(ErrorKind::input, "the checkpoint's signature by " + printable(mine->name) + " does not verify with a log key of the trusted root valid at the signing time");
  if (!std::ranges::equal(checkpoint.root_hash, root_hash))
    throw Error(ErrorKind::input, "the checkpoint's root hash " + to_hex(checkpoint.root_hash) + " is not the inclusion proof's " + to_hex(root_hash));
  return checkpoint;
}

}  // namespace kwheel::sigstore
