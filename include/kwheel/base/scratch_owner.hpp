#pragma once
// Whose scratch is this? Every temp file or scratch directory kwheel makes
// is named "…kwheel-<kind>-<token>-…", where <token> is random per
// process, and while it exists the process holds an flock on
// "<same directory>/.kwheel-owner-<token>". A later run sweeps what no live
// process owns. A lock proves liveness where a PID cannot: two containers
// sharing one volume see different PID namespaces but the same locks.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kwheel {

struct OwnerLock;

// This process's ownership of scratch in one directory. Leases of the same
// directory share one lock file, removed when the last lease goes (so a
// finished run leaves no lock file behind); "same" means the same directory
// however its path is spelled ("d", "./d", "d/sub/..", a symlink to it),
// since a process that locked its own lock file twice would wait on itself.
// The first lease a process takes in a directory sweeps it
// (sweep_stale_scratch). Throws Error(io).
class OwnerLease {
 public:
  explicit OwnerLease(const std::filesystem::path& dir);
  ~OwnerLease();
  OwnerLease(const OwnerLease&) = delete;
  OwnerLease& operator=(const OwnerLease&) = delete;
  // "kwheel-<kind>-<token>-": the start of a scratch name this lease owns.
  static std::string stem(std::string_view kind);
  // This process's token.
  static const std::string& token();

 private:
  std::shared_ptr<OwnerLock> lock_;
};

// What a scratch name says, read against the whole name: whose it is, and
// what kwheel made under that name. The grammar is exactly the names kwheel
// makes (T: the 16 lower-case hex digits of a token; K: [a-z]+(-[a-z]+)*;
// R: the 6 letters or digits mkdtemp and libzip draw):
//   .kwheel-owner-T                      the owner lock             (file)
//   kwheel-K-T-R                         TempDir in $TMPDIR         (directory)
//   .LEAF.kwheel-K-T-R[.old]             TempDir::beside            (directory)
//   .LEAF.kwheel-tmp-T-N[.R]             TempPath, libzip's temp    (file)
// A name that merely contains "kwheel-K-T-" (a user's
// "ci-kwheel-build-3af4e79c0ffee123-log.txt") is not one of ours.
struct ScratchName {
  std::string token;
  bool lock = false;       // the owner lock file itself
  bool may_be_file = false;
  bool may_be_directory = false;
};
std::optional<ScratchName> parse_scratch_name(std::string_view name);

// The owner token in a scratch name, if the name is one of ours.
std::optional<std::string> scratch_token(std::string_view name);

// Removes, in `dir`, what a dead kwheel process provably left: an entry is
// removed only when its whole name is one of ours (parse_scratch_name), it
// is of the type kwheel made under that name (never a symlink), it belongs
// to this process's uid, and its owner's lock file -- the marker kwheel
// writes before any scratch of that token -- is there (a regular file of
// this uid) and held by no one. Everything else is left alone, and so is
// anything it cannot stat or lock. Never throws.
void sweep_stale_scratch(const std::filesystem::path& dir);

}  // namespace kwheel
