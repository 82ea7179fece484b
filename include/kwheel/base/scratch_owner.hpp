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

// The owner token in a scratch name, if the name is one of ours.
std::optional<std::string> scratch_token(std::string_view name);

// Removes, in `dir`, the scratch entries (files or whole directories) and
// lock files of owners that no longer hold their lock. Entries it cannot
// prove dead (lock held, or unreadable) are left alone. Never throws.
void sweep_stale_scratch(const std::filesystem::path& dir);

}  // namespace kwheel
