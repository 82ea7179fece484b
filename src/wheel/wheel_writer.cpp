#include "kwheel/wheel/wheel_writer.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>

#include "kwheel/base/atomic_file.hpp"
#include "kwheel/base/environment.hpp"
#include "kwheel/wheel/archive_file.hpp"
#include "kwheel/wheel/deflate.hpp"
#include "kwheel/wheel/deflate_pool.hpp"
#include "kwheel/wheel/zip_time.hpp"
#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/shared_object.hpp"
#include "kwheel/kernel/repo_layout.hpp"

namespace kwheel {
namespace {

struct ZipDiscard {
  void operator()(zip_t* z) const noexcept {
    if (z) zip_discard(z);
  }
};
using ZipPtr = std::unique_ptr<zip_t, ZipDiscard>;

struct ErrorState {
  zip_error_t zerr{};
  std::string message;  // ours, with the member name; wins over libzip's
  ErrorState() { zip_error_init(&zerr); }
  ~ErrorState() { zip_error_fini(&zerr); }
  ErrorState(const ErrorState&) = delete;
  ErrorState& operator=(const ErrorState&) = delete;
  zip_int64_t fail(int ze, int sys, std::string why) {
    zip_error_set(&zerr, ze, sys);
    if (message.empty()) message = std::move(why);
    return -1;
  }
};

zip_int64_t supports() {
  return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
                                        ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
}

// One member as libzip reads it. With a deflate pool the bytes handed to
// libzip are already compressed (libdeflate, 1 MiB chunks, on the pool's
// workers) and the stat libzip takes after the last read carries the CRC;
// libzip then copies them as they are. Without one (level 0) libzip stores
// the raw bytes and sums the CRC itself.
class MemberSourceBase {
 public:
  virtual ~MemberSourceBase() = default;
  ErrorState err;
  std::string name;       // archive path, for messages
  uint64_t expected = 0;  // uncompressed size, known before packing
  std::time_t mtime = 0;
  DeflatePool* pool = nullptr;
  int level = 0;

  zip_int64_t handle(void* data, zip_uint64_t len, zip_source_cmd_t cmd) noexcept {
    try {
      switch (cmd) {
        case ZIP_SOURCE_OPEN:
          fed_ = 0;
          crc_ = 0;
          piece_ = {};
          out_pos_ = 0;
          fed_all_ = false;
          if (pool) stream_.emplace(*pool, level);
          return open() ? 0 : -1;
        case ZIP_SOURCE_READ: return pool ? read_packed(static_cast<unsigned char*>(data), len)
                                          : read_raw(static_cast<std::byte*>(data), len);
        case ZIP_SOURCE_CLOSE:
          stream_.reset();
          return close() ? 0 : -1;
        case ZIP_SOURCE_STAT: return stat(data, len);
        case ZIP_SOURCE_ERROR: return zip_error_to_data(&err.zerr, data, len);
        case ZIP_SOURCE_FREE: return 0;
        case ZIP_SOURCE_SUPPORTS: return supports();
        default: return err.fail(ZIP_ER_OPNOTSUPP, 0, "unsupported libzip source command");
      }
    } catch (const std::exception& e) {
      return err.fail(ZIP_ER_INTERNAL, 0, std::string("packing '") + name + "': " + e.what());
    }
  }

 protected:
  virtual bool open() = 0;
  // The member's next raw bytes, at most `cap`; 0 at its end. Returns -1
  // after setting err.
  virtual zip_int64_t fill(std::byte* buf, size_t cap) = 0;
  virtual bool close() = 0;

 private:
  uint64_t fed_ = 0;
  uint32_t crc_ = 0;
  bool fed_all_ = false;
  std::optional<DeflateStream> stream_;
  std::span<const unsigned char> piece_;  // the compressed piece libzip is reading
  size_t out_pos_ = 0;

  zip_int64_t stat(void* data, zip_uint64_t len) {
    auto* st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &err.zerr);
    if (!st) return -1;
    zip_stat_init(st);
    st->valid = ZIP_STAT_SIZE | ZIP_STAT_MTIME;
    st->size = expected;
    st->mtime = mtime;
    if (pool) {
      // Before the first read the CRC is a placeholder: libzip writes
      // the local header again from the stat it takes at the end.
      st->valid |= ZIP_STAT_COMP_METHOD | ZIP_STAT_CRC;
      st->comp_method = ZIP_CM_DEFLATE;
      st->crc = crc_;
    }
    return sizeof(*st);
  }

  zip_int64_t read_raw(std::byte* data, zip_uint64_t len) { return fill(data, static_cast<size_t>(len)); }

  // Reads ahead as many chunks as the run's budget allows (each read once:
  // hashed in fill(), CRC'd here, then compressed from the same buffer on a
  // worker), and hands libzip the compressed pieces in order. While the
  // oldest piece is being compressed, an input that comes back is filled at
  // once, so that the workers do not wait for this writer's turn.
  zip_int64_t read_packed(unsigned char* data, zip_uint64_t len) {
    while (out_pos_ == piece_.size()) {
      if (!feed()) return -1;
      if (!stream_->pending()) return 0;  // every piece handed over
      if (!stream_->await(!fed_all_)) continue;
      piece_ = stream_->take();
      out_pos_ = 0;
    }
    const size_t n = std::min<size_t>(static_cast<size_t>(len), piece_.size() - out_pos_);
    std::memcpy(data, piece_.data() + out_pos_, n);
    out_pos_ += n;
    return static_cast<zip_int64_t>(n);
  }

  // Queues the member's next chunks until it is all queued or the budget is
  // spent; false after setting err.
  bool feed() {
    while (!fed_all_) {
      std::unique_ptr<DeflateChunk> chunk = stream_->next_buffer();
      if (!chunk) return true;
      // A whole chunk (or the member's rest), whatever read() returns.
      const size_t want = static_cast<size_t>(std::min<uint64_t>(kDeflateChunk, expected - fed_));
      size_t got = 0;
      while (got < want) {
        zip_int64_t n = fill(chunk->raw.get() + got, want - got);
        if (n < 0) return false;
        if (n == 0) break;  // fill() has already failed on a short file
        got += static_cast<size_t>(n);
      }
      fed_ += got;
      crc_ = crc32_update(crc_, {chunk->raw.get(), got});
      fed_all_ = fed_ == expected;
      if (fed_all_) {
        std::byte probe;  // the member must end here, not grow under us
        if (fill(&probe, 1) != 0) return false;
      }
      chunk->size = got;
      chunk->last = fed_all_;
      stream_->push(std::move(chunk));
    }
    return true;
  }
};

// A file member: read once with read(2), hashed for RECORD on the way.
class FileSource final : public MemberSourceBase {
 public:
  const WheelMember* member = nullptr;
  RecordEntry* record = nullptr;
  ~FileSource() override {
    if (fd_ >= 0) ::close(fd_);
  }

 protected:
  bool open() override {
    fd_ = ::open(member->source.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
    {
      err.fail(ZIP_ER_OPEN, errno, "cannot open '" + member->source.string() + "': " + std::strerror(errno));
      return false;
    }
    seen_ = 0;
    return true;
  }
  zip_int64_t fill(std::byte* buf, size_t cap) override {
    ssize_t n;
    do n = ::read(fd_, buf, cap);
    while (n < 0 && errno == EINTR);
    if (n < 0) return err.fail(ZIP_ER_READ, errno, "cannot read '" + member->source.string() + "': " + std::strerror(errno));
    seen_ += static_cast<uint64_t>(n);
    // A file that changes while we pack it would make RECORD lie.
    if (seen_ > expected || (n == 0 && seen_ != expected))
      return err.fail(ZIP_ER_INCONS, 0,
                      "'" + member->source.string() + "' changed size while being packed (expected " +
                          std::to_string(expected) + " bytes, read " + std::to_string(seen_) + ")");
    hasher_.update(std::span<const std::byte>(buf, static_cast<size_t>(n)));
    return n;
  }
  bool close() override {
    ::close(fd_);
    fd_ = -1;
    auto digest = hasher_.finish();
    *record = RecordEntry{name, "sha256=" + urlsafe_b64_nopad(digest), expected};
    return true;
  }

 private:
  int fd_ = -1;
  uint64_t seen_ = 0;
  Hasher hasher_;
};

// An in-memory member (METADATA, WHEEL), or RECORD, which is rendered when
// libzip opens it: after every other member was read. RECORD's size is
// known up front, as each hash is exactly 43 characters.
class TextSource final : public MemberSourceBase {
 public:
  std::string text;
  // Set for RECORD only.
  const std::vector<RecordEntry>* record_rows = nullptr;

 protected:
  bool open() override {
    if (record_rows) {
      std::vector<RecordEntry> rows = *record_rows;
      for (const auto& r : rows)
        if (r.hash.empty()) {
          err.fail(ZIP_ER_INTERNAL, 0, "RECORD was requested before member '" + r.path + "' was packed");
          return false;
        }
      rows.push_back({name, "", std::nullopt});
      text = format_record(rows);
    }
    if (text.size() != expected) {
      err.fail(ZIP_ER_INTERNAL, 0, "'" + name + "' size differs from its plan");
      return false;
    }
    pos_ = 0;
    return true;
  }
  zip_int64_t fill(std::byte* buf, size_t cap) override {
    const size_t n = std::min(cap, text.size() - pos_);
    std::memcpy(buf, text.data() + pos_, n);
    pos_ += n;
    return static_cast<zip_int64_t>(n);
  }
  bool close() override { return true; }

 private:
  size_t pos_ = 0;
};

zip_int64_t trampoline(void* ud, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
  return static_cast<MemberSourceBase*>(ud)->handle(data, len, cmd);
}

}  // namespace

std::optional<std::time_t> source_date_epoch_from_env() {
  const auto v = env_value("SOURCE_DATE_EPOCH");
  if (!v) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long t = std::strtoll(v->c_str(), &end, 10);
  if (errno || *end || t < 0) throw Error(ErrorKind::usage, "SOURCE_DATE_EPOCH='" + *v + "' is not a non-negative integer of seconds");
  return static_cast<std::time_t>(t);
}

StagedWheel::StagedWheel() = default;
StagedWheel::StagedWheel(StagedWheel&&) noexcept = default;
StagedWheel& StagedWheel::operator=(StagedWheel&&) noexcept = default;
StagedWheel::~StagedWheel() = default;
void StagedWheel::commit() { temp->commit(); }

WrittenWheel write_wheel(const WheelContents& contents, const std::filesystem::path& out, const WriteOptions& options) {
  StagedWheel staged = stage_wheel(contents, out, options);
  staged.commit();
  return std::move(staged.info);
}

namespace {

// Errors name the wheel they are about.
struct WheelError {
  std::string wheel_name;
  Error operator()(ErrorKind kind, const std::string& why) const { return Error(kind, "wheel " + wheel_name + ": " + why); }
};

// The members in archive order, refused where they would clash with each
// other or with what the writer generates.
std::vector<const WheelMember*> sorted_members(const WheelContents& contents, const WheelError& fail) {
  std::vector<const WheelMember*> members;
  std::set<std::string> seen;
  const std::string dist_prefix = contents.dist_info + "/";
  const std::set<std::string> generated{dist_prefix + "METADATA", dist_prefix + "WHEEL", dist_prefix + "RECORD"};
  for (const auto& m : contents.members) {
    // Other .dist-info files (a variant wheel's variant.json) are members;
    // what the writer generates is not.
    if (generated.count(m.archive_path) || (m.archive_path.starts_with(dist_prefix + "RECORD.")))
      throw fail(ErrorKind::input, "member '" + m.archive_path + "' would overwrite the generated .dist-info");
    // The reserved names are the wheel's own .dist-info; a file in it (a
    // license, a variant.json) belongs there.
    if (auto why = reserved_wheel_path_reason(m.archive_path); !why.empty() && !m.archive_path.starts_with(dist_prefix))
      throw fail(ErrorKind::input, "member '" + m.archive_path + "': " + why);
    if (!seen.insert(m.archive_path).second) throw fail(ErrorKind::input, "duplicate member '" + m.archive_path + "'");
    members.push_back(&m);
  }
  for (const auto& [name, _] : contents.dist_info_texts)
    if (name.empty() || name.find('/') != std::string::npos || generated.count(dist_prefix + name) || name.starts_with("RECORD.") ||
        !seen.insert(dist_prefix + name).second)
      throw fail(ErrorKind::input, ".dist-info file '" + name + "' is not a plain name, or names a file the wheel already has");
  // .dist-info last, as the wheel spec recommends.
  std::sort(members.begin(), members.end(), [&](auto* a, auto* b) {
    return std::pair(a->archive_path.starts_with(dist_prefix), a->archive_path) < std::pair(b->archive_path.starts_with(dist_prefix), b->archive_path);
  });
  return members;
}

std::string hash_text(const std::string& text) {
  Hasher h;
  h.update(text);
  return "sha256=" + urlsafe_b64_nopad(h.finish());
}

// Every member's source, in archive order, and the RECORD rows they fill
// in as libzip finishes reading each. Neither copied nor moved: the sources
// point into `rows`.
struct Packing {
  int level = 0;
  RunPool pool;  // null at level 0: members are stored
  std::vector<RecordEntry> rows;
  std::vector<std::unique_ptr<FileSource>> files;
  std::vector<std::unique_ptr<TextSource>> dist_info_texts;  // WheelContents::dist_info_texts, in its order
  std::unique_ptr<TextSource> metadata, wheel, record;

  Packing(const WheelContents& contents, const std::vector<const WheelMember*>& members, std::time_t mtime, const WriteOptions& options,
          const WheelError& fail);
  Packing(const Packing&) = delete;
  Packing& operator=(const Packing&) = delete;

  // Our sources know which member failed and why; libzip only the code.
  std::string member_error() const {
    std::string why;
    for (auto& src : files)
      if (!src->err.message.empty()) why = src->err.message;
    for (auto& src : dist_info_texts)
      if (!src->err.message.empty()) why = src->err.message;
    for (auto* src : {metadata.get(), wheel.get(), record.get()})
      if (!src->err.message.empty()) why = src->err.message;
    return why;
  }

 private:
  std::unique_ptr<TextSource> text_source(const std::string& name, std::string text, uint64_t size, std::time_t mtime) const {
    auto src = std::make_unique<TextSource>();
    src->name = name;
    src->text = std::move(text);
    src->expected = size;
    src->mtime = mtime;
    src->pool = pool.get();
    src->level = level;
    return src;
  }
};

Packing::Packing(const WheelContents& contents, const std::vector<const WheelMember*>& members, std::time_t mtime,
                 const WriteOptions& options, const WheelError& fail)
    : level(options.compression_level), pool(options.pool, level, 1) {
  const std::string dist_prefix = contents.dist_info + "/";
  const std::string metadata_path = dist_prefix + "METADATA";
  const std::string wheel_path = dist_prefix + "WHEEL";
  const std::string record_path = dist_prefix + "RECORD";
  const size_t texts = contents.dist_info_texts.size();
  rows.resize(members.size() + texts + 2);
  // RECORD's size is planned with a placeholder of a hash's exact length.
  const std::string hash_placeholder = "sha256=" + std::string(43, 'A');
  std::vector<RecordEntry> plan;
  for (size_t i = 0; i < members.size(); ++i) {
    auto src = std::make_unique<FileSource>();
    src->member = members[i];
    src->name = members[i]->archive_path;
    std::error_code ec;
    uint64_t actual = std::filesystem::file_size(members[i]->source, ec);
    if (ec) throw fail(ErrorKind::io, "cannot read '" + members[i]->source.string() + "': " + ec.message());
    if (members[i]->size && *members[i]->size != actual)
      throw fail(ErrorKind::input, "'" + members[i]->source.string() + "' is " + std::to_string(actual) +
                                       " bytes, expected " + std::to_string(*members[i]->size));
    src->expected = actual;
    src->mtime = mtime;
    src->pool = pool.get();
    src->level = level;
    src->record = &rows[i];
    plan.push_back({members[i]->archive_path, hash_placeholder, actual});
    files.push_back(std::move(src));
  }
  size_t at = members.size();
  for (const auto& [name, text] : contents.dist_info_texts) {
    rows[at] = {dist_prefix + name, hash_text(text), text.size()};
    plan.push_back(rows[at++]);
    dist_info_texts.push_back(text_source(dist_prefix + name, text, text.size(), mtime));
  }
  rows[at] = {metadata_path, hash_text(contents.metadata), contents.metadata.size()};
  rows[at + 1] = {wheel_path, hash_text(contents.wheel), contents.wheel.size()};
  plan.push_back(rows[at]);
  plan.push_back(rows[at + 1]);
  plan.push_back({record_path, "", std::nullopt});
  metadata = text_source(metadata_path, contents.metadata, contents.metadata.size(), mtime);
  wheel = text_source(wheel_path, contents.wheel, contents.wheel.size(), mtime);
  record = text_source(record_path, "", format_record(plan).size(), mtime);
  record->record_rows = &rows;
}

// An empty archive at `tmp`, open for libzip to fill through `file`.
ZipPtr open_archive(ArchiveFile& file, const std::filesystem::path& tmp, const WheelError& fail) {
  // The name is created here, empty, before libzip writes into it through
  // `file` (kwheel/wheel/archive_file.hpp): O_EXCL makes sure it is ours.
  if (int fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666); fd >= 0) ::close(fd);
  else throw fail(ErrorKind::io, "cannot create '" + tmp.string() + "': " + std::strerror(errno));
  zip_error_t e;
  zip_error_init(&e);
  if (zip_source_t* src = file.source(&e)) {
    if (ZipPtr za{zip_open_from_source(src, ZIP_CREATE | ZIP_TRUNCATE, &e)}) {
      zip_error_fini(&e);
      return za;
    }
    zip_source_free(src);
  }
  const int zerr = zip_error_code_zip(&e);
  std::string why = zip_error_strerror(&e);
  zip_error_fini(&e);
  // Say what the path was, so that a failure we did not foresee shows its cause.
  std::error_code sec;
  const auto st = std::filesystem::symlink_status(tmp, sec);
  const std::string found = sec || st.type() == std::filesystem::file_type::not_found ? "it does not exist"
                            : st.type() == std::filesystem::file_type::regular
                                ? "it is a file of " + std::to_string(std::filesystem::file_size(tmp, sec)) + " bytes"
                                : "it exists and is not a regular file";
  throw fail(ErrorKind::io, "cannot create '" + tmp.string() + "': " + why + " (libzip error " + std::to_string(zerr) + "; " + found + ")");
}

// One member, read from `member` when libzip closes the archive.
void add_member(zip_t* za, const std::string& name, MemberSourceBase* member, bool exec, int level, std::time_t mtime, const WheelError& fail) {
  zip_source_t* src = zip_source_function(za, &trampoline, member);
  if (!src) throw fail(ErrorKind::io, std::string("libzip: ") + zip_strerror(za));
  zip_int64_t idx = zip_file_add(za, name.c_str(), src, ZIP_FL_ENC_UTF_8);
  if (idx < 0) {
    zip_source_free(src);
    throw fail(ErrorKind::input, "cannot add '" + name + "': " + zip_strerror(za));
  }
  const zip_uint32_t mode = exec ? 0100755 : 0100644;
  if (zip_set_file_compression(za, idx, level == 0 ? ZIP_CM_STORE : ZIP_CM_DEFLATE, level) != 0 ||
      zip_file_set_mtime(za, idx, mtime, 0) != 0 ||
      zip_file_set_external_attributes(za, idx, 0, ZIP_OPSYS_UNIX, mode << 16) != 0)
    throw fail(ErrorKind::io, std::string("libzip: ") + zip_strerror(za));
}

// Packs every member: libzip reads the sources only now.
void close_archive(ZipPtr za, const Packing& packing, const std::filesystem::path& out, const WheelError& fail) {
  if (zip_close(za.get()) != 0) {
    std::string why = zip_strerror(za.get());
    const int sys = zip_error_code_system(zip_get_error(za.get()));
    if (sys == ENOSPC || sys == EFBIG || sys == EDQUOT)
      why += "; free space under '" + (out.parent_path().empty() ? std::string(".") : out.parent_path().string()) +
             "' or pass another -o";
    if (std::string member = packing.member_error(); !member.empty()) why = member;
    throw fail(ErrorKind::io, why);
  }
  za.release();  // zip_close freed it
}

void restamp(const std::filesystem::path& tmp, std::time_t utc, const WheelError& fail) {
  int fd = ::open(tmp.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw fail(ErrorKind::io, "cannot reopen '" + tmp.string() + "': " + std::strerror(errno));
  try {
    stamp_dos_time(fd, utc);
  } catch (const std::exception& e) {
    ::close(fd);
    throw fail(ErrorKind::io, std::string("setting member timestamps: ") + e.what());
  }
  ::close(fd);
}

}  // namespace

StagedWheel stage_wheel(const WheelContents& contents, const std::filesystem::path& out, const WriteOptions& options) {
  const WheelError fail{out.filename().string()};
  if (options.compression_level < 0 || options.compression_level > 9)
    throw Error(ErrorKind::usage, "--compression-level " + std::to_string(options.compression_level) + ": use 0 (store) to 9");
  const std::vector<const WheelMember*> members = sorted_members(contents, fail);
  const std::time_t mtime = libzip_time_for(options.source_date_epoch.value_or(kZipEpoch));
  const int level = options.compression_level;
  Packing packing(contents, members, mtime, options, fail);

  std::error_code ec;
  std::filesystem::create_directories(out.parent_path().empty() ? "." : out.parent_path(), ec);
  auto tmp = std::make_unique<TempPath>(out);
  ArchiveFile file(tmp->path());
  ZipPtr za = open_archive(file, tmp->path(), fail);
  for (auto& src : packing.files) {
    const auto* m = src->member;
    add_member(za.get(), m->archive_path, src.get(), m->executable || is_shared_object(m->archive_path), level, mtime, fail);
  }
  for (auto& src : packing.dist_info_texts) add_member(za.get(), src->name, src.get(), false, level, mtime, fail);
  for (auto* src : {packing.metadata.get(), packing.wheel.get(), packing.record.get()})
    add_member(za.get(), src->name, src, false, level, mtime, fail);
  close_archive(std::move(za), packing, out, fail);
  restamp(tmp->path(), options.source_date_epoch.value_or(kZipEpoch), fail);

  StagedWheel staged;
  if (options.digest) staged.info.sha256 = sha256_file_hex(tmp->path());
  staged.info.size = std::filesystem::file_size(tmp->path());
  staged.info.path = out;
  staged.info.record = std::move(packing.rows);
  staged.info.record.push_back({packing.record->name, "", std::nullopt});
  staged.temp = std::move(tmp);
  return staged;
}

}  // namespace kwheel
