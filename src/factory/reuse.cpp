#include "kwheel/factory/reuse.hpp"

#include <sys/stat.h>

#include <fstream>

#include "kwheel/base/atomic_file.hpp"
#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/wheel/deflate.hpp"

namespace kwheel {
namespace fs = std::filesystem;

std::string stat_identity(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return "missing";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":" +
         std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
}

namespace {

// The wheel in out_dir, if kwheel wrote it from exactly these inputs and it
// has not been touched since (same identity as recorded right after writing).
std::optional<ReuseState> reusable(const fs::path& wheel, const std::string& fingerprint) {
  std::ifstream in(reuse_state_path(wheel), std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(kMaxReuseStateBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  auto state = parse_reuse_state(text);
  if (!state || state->fingerprint != fingerprint || state->wheel_identity != stat_identity(wheel)) return std::nullopt;
  return state;
}

// A kept wheel's state with its digest, taken now because the run that
// wrote it reported none; nullopt if the wheel cannot be read or changed
// while it was hashed, and then it is packed again.
std::optional<ReuseState> with_digest(const fs::path& wheel, ReuseState state) {
  try {
    state.sha256 = sha256_file_hex(wheel);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (stat_identity(wheel) != state.wheel_identity) return std::nullopt;
  return state;
}

}  // namespace

void record_state(const fs::path& wheel, const ReuseState& state) {
  std::error_code ec;
  fs::create_directories(reuse_state_path(wheel).parent_path(), ec);
  if (ec) return;  // only an optimisation: the next build rewrites the wheel
  try {
    write_file_atomic(reuse_state_path(wheel), format_reuse_state(state));
  } catch (const Error&) {
  }
}

std::optional<ReuseState> kept_wheel(const fs::path& wheel, const std::string& fingerprint, const BuildOptions& o,
                                     std::optional<ReuseState>& taken) {
  auto state = o.reuse ? reusable(wheel, fingerprint) : std::nullopt;
  if (!state || !state->sha256.empty() || !o.write.digest) return state;
  taken = with_digest(wheel, *std::move(state));
  return taken;
}

std::string input_fingerprint(const PlannedWheel& plan, const BuildOptions& o) {
  Hasher h;
  auto field = [&](const std::string& v) {
    h.update(v);
    h.update(std::string_view("\0", 1));
  };
  field(std::string("kwheel ") + KWHEEL_VERSION);
  // Wheels written before digests were checked must not be reused unchecked.
  field("digest-checked");
  field(std::to_string(o.write.compression_level));
  // The deflate library's version decides the compressed bytes.
  field(o.write.compression_level > 0 ? ChunkDeflater::engine(o.write.compression_level) : "stored");
  field(o.write.source_date_epoch ? std::to_string(*o.write.source_date_epoch) : "default-epoch");
  field(plan.filename);
  field(plan.contents.metadata);
  field(plan.contents.wheel);
  for (const auto& [name, text] : plan.contents.dist_info_texts) {
    field(name);
    field(text);
  }
  for (const auto& m : plan.contents.members) {
    field(m.archive_path);
    field(m.executable ? "x" : "-");
    field(stat_identity(m.source));
  }
  return to_hex(h.finish());
}

}  // namespace kwheel
