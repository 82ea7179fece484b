#include "kwheel/wheel/wheel_reader.hpp"

#include "kwheel/wheel/core_metadata.hpp"

#include <zip.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/safe_path.hpp"
#include "kwheel/base/test_seam.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/record.hpp"

namespace kwheel {

void WheelArchive::ZipClose::operator()(zip* z) const noexcept {
  if (z) zip_discard(z);  // read-only: nothing to write back
}

MetadataFields parse_metadata_fields(const std::string& text) {
  MetadataFields out;
  size_t pos = 0;
  std::string key, value;
  auto flush = [&] {
    if (!key.empty()) out.emplace(key, value);
    key.clear();
    value.clear();
  };
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {  // the body follows
      flush();
      if (pos < text.size()) out.emplace("Description", text.substr(pos));
      break;
    }
    if ((line[0] == ' ' || line[0] == '\t') && !key.empty()) {
      value += "\n" + line.substr(1);
      continue;
    }
    flush();
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    key = line.substr(0, colon);
    value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
  }
  flush();
  return out;
}

namespace {

// ------------------------------------------------------------------ zip structure

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kEnd64LocatorSig = 0x07064b50;
constexpr size_t kLocalFixed = 30, kCentralFixed = 46, kEndFixed = 22, kEnd64Fixed = 56, kEnd64LocatorSize = 20;
constexpr uint64_t kMaxCentralDirectoryBytes = 64 << 20;

uint64_t le(const std::string& b, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = width; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

std::string to_string_hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

struct CentralDirectory {
  uint64_t offset = 0, size = 0, entries = 0;
};

// The end of central directory record nearest the end whose comment ends
// the file (else the nearest one), and its zip64 record when one is used.
CentralDirectory find_central_directory(uint64_t archive_size, const ReadAt& read_at, const std::string& where) {
  auto bad = [&](const std::string& why) { return Error(ErrorKind::input, where + " cannot be read as a zip archive: " + why); };
  const uint64_t tail_size = std::min<uint64_t>(archive_size, kEndFixed + 0xffff);
  const uint64_t tail_at = archive_size - tail_size;
  const std::string tail = read_at(tail_at, tail_size);
  if (tail.size() != tail_size) throw bad("short read");
  std::optional<size_t> end;
  for (size_t i = tail.size() >= kEndFixed ? tail.size() - kEndFixed + 1 : 0; i-- > 0;) {
    if (le(tail, i, 4) != kEndSig) continue;
    if (!end) end = i;
    if (i + kEndFixed + le(tail, i + 20, 2) == tail.size()) {
      end = i;
      break;
    }
  }
  if (!end) throw bad("no end of central directory record");
  CentralDirectory cd{le(tail, *end + 16, 4), le(tail, *end + 12, 4), le(tail, *end + 10, 2)};
  const bool zip64 = cd.offset == 0xffffffff || cd.size == 0xffffffff || cd.entries == 0xffff;
  if (!zip64) return cd;
  const uint64_t end_at = tail_at + *end;
  if (end_at < kEnd64LocatorSize) throw bad("zip64 end record locator missing");
  const std::string locator = read_at(end_at - kEnd64LocatorSize, kEnd64LocatorSize);
  if (locator.size() != kEnd64LocatorSize || le(locator, 0, 4) != kEnd64LocatorSig) throw bad("zip64 end record locator missing");
  const std::string rec = read_at(le(locator, 8, 8), kEnd64Fixed);
  if (rec.size() != kEnd64Fixed || le(rec, 0, 4) != kEnd64Sig) throw bad("zip64 end record missing");
  return {le(rec, 48, 8), le(rec, 40, 8), le(rec, 32, 8)};
}

// The zip64 extended information of a central entry replaces exactly the
// fields that are saturated, in this order.
void apply_zip64_extra(const std::string& extra, ZipSpan& span, uint64_t& offset, bool size_max, bool comp_max, bool offset_max) {
  for (size_t p = 0; p + 4 <= extra.size();) {
    const uint64_t id = le(extra, p, 2), len = le(extra, p + 2, 2);
    if (p + 4 + len > extra.size()) return;
    if (id == 0x0001) {
      size_t q = p + 4;
      auto take = [&](bool saturated, uint64_t& field) {
        if (saturated && q + 8 <= p + 4 + len) {
          field = le(extra, q, 8);
          q += 8;
        }
      };
      take(size_max, span.size);
      take(comp_max, span.compressed);
      take(offset_max, offset);
      return;
    }
    p += 4 + len;
  }
}

}  // namespace

std::vector<ZipSpan> read_zip_spans(uint64_t archive_size, const ReadAt& read_at, const std::string& where) {
  auto bad = [&](const std::string& why) { return Error(ErrorKind::input, where + " cannot be read as a zip archive: " + why); };
  const CentralDirectory cd = find_central_directory(archive_size, read_at, where);
  if (cd.size > kMaxCentralDirectoryBytes)
    throw bad("its central directory is " + std::to_string(cd.size) + " bytes, over the limit of " + std::to_string(kMaxCentralDirectoryBytes));
  if (cd.offset > archive_size || cd.size > archive_size - cd.offset) throw bad("central directory beyond the end of the file");
  if (cd.entries > cd.size / kCentralFixed) throw bad("more entries than its central directory holds");
  const std::string dir = read_at(cd.offset, cd.size);
  if (dir.size() != cd.size) throw bad("short read");
  std::vector<ZipSpan> spans;
  size_t p = 0;
  for (uint64_t i = 0; i < cd.entries; ++i) {
    if (p + kCentralFixed > dir.size() || le(dir, p, 4) != kCentralSig) throw bad("central directory entry " + std::to_string(i) + " is malformed");
    const size_t name_len = le(dir, p + 28, 2), extra_len = le(dir, p + 30, 2), comment_len = le(dir, p + 32, 2);
    if (p + kCentralFixed + name_len + extra_len + comment_len > dir.size()) throw bad("central directory entry " + std::to_string(i) + " is truncated");
    ZipSpan s;
    s.name = dir.substr(p + kCentralFixed, name_len);
    s.compressed = le(dir, p + 20, 4);
    s.size = le(dir, p + 24, 4);
    uint64_t offset = le(dir, p + 42, 4);
    apply_zip64_extra(dir.substr(p + kCentralFixed + name_len, extra_len), s, offset, s.size == 0xffffffff, s.compressed == 0xffffffff,
                      offset == 0xffffffff);
    p += kCentralFixed + name_len + extra_len + comment_len;
    // libzip reads the data after the local header's own name and extra
    // field, whatever the central entry says about them.
    const std::string local = offset < archive_size ? read_at(offset, kLocalFixed) : std::string();
    if (local.size() != kLocalFixed || le(local, 0, 4) != kLocalSig)
      throw bad("member '" + s.name + "' has no local header at " + to_string_hex(offset));
    const uint64_t data = offset + kLocalFixed + le(local, 26, 2) + le(local, 28, 2);
    if (data > archive_size || s.compressed > archive_size - data) throw bad("member '" + s.name + "' extends past the end of the file");
    s.start = offset;
    s.end = data + s.compressed;
    spans.push_back(std::move(s));
  }
  return spans;
}

std::string zip_bomb_reason(const std::vector<ZipSpan>& spans, uint64_t archive_size) {
  // Members that share bytes let one small deflate stream be inflated once
  // per member (Fifield's construction keeps every CRC valid, so libzip's
  // consistency check passes). No zip writer produces them.
  std::vector<const ZipSpan*> order;
  for (const auto& s : spans) order.push_back(&s);
  std::sort(order.begin(), order.end(), [](const ZipSpan* a, const ZipSpan* b) { return a->start < b->start; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i]->start < order[i - 1]->end)
      return "members '" + order[i - 1]->name + "' and '" + order[i]->name + "' overlap in the archive (bytes " + to_string_hex(order[i - 1]->start) +
             "-" + to_string_hex(order[i - 1]->end) + " and " + to_string_hex(order[i]->start) + "-" + to_string_hex(order[i]->end) +
             "): an overlapping-entry zip bomb";
  uint64_t total = 0;
  for (const auto& s : spans) {
    if (s.size > kRatioFloorMemberBytes && s.size / kMaxInflateRatio > s.compressed)
      return "member '" + s.name + "' inflates " + std::to_string(s.size) + " bytes from " + std::to_string(s.compressed) + ", over the limit of " +
             std::to_string(kMaxInflateRatio) + ":1 for members over 1 MiB";
    total = std::min(total + std::min(s.size, kMaxWheelInflatedBytes + 1), kMaxWheelInflatedBytes + 1);  // no overflow
  }
  if (total > kMaxWheelInflatedBytes)
    return "its members inflate to over " + std::to_string(kMaxWheelInflatedBytes) + " bytes, the limit (8 GiB)";
  if (total > kRatioFloorWheelBytes && total / kMaxInflateRatio > archive_size)
    return "its members inflate to " + std::to_string(total) + " bytes from a " + std::to_string(archive_size) + "-byte archive, over the limit of " +
           std::to_string(kMaxInflateRatio) + ":1 for wheels inflating to over 64 MiB";
  return {};
}

namespace {

[[noreturn]] void throw_unreadable(const std::filesystem::path& path, zip_error_t* e) {
  std::string why = zip_error_strerror(e);
  zip_error_fini(e);
  throw Error(ErrorKind::input, "wheel '" + path.string() + "' cannot be read as a zip archive: " + why);
}

ReadAt file_reader(const std::filesystem::path& path) {
  auto in = std::make_shared<std::ifstream>(path, std::ios::binary);
  return [in](uint64_t offset, size_t n) {
    std::string out(n, '\0');
    in->clear();
    in->seekg(static_cast<std::streamoff>(offset));
    in->read(out.data(), static_cast<std::streamsize>(n));
    out.resize(static_cast<size_t>(std::max<std::streamsize>(in->gcount(), 0)));
    return out;
  };
}

}  // namespace

// Our own reading of the central directory comes before libzip's, so that a
// bomb is refused before anything reads its members (libzip's consistency
// check reads every local header) and under its own name: libzip refuses
// some overlaps for other reasons (a duplicate name) and accepts the rest.
// A zip we cannot read is left for libzip to explain.
WheelArchive::Precheck WheelArchive::precheck(const ReadAt& read_at, uint64_t archive_size) const {
  const std::string where = "wheel '" + path_.filename().string() + "'";
  Precheck p;
  try {
    p.spans = read_zip_spans(archive_size, read_at, where);
  } catch (const Error& e) {
    p.unreadable = e;
    return p;
  }
  if (auto why = zip_bomb_reason(p.spans, archive_size); !why.empty())
    throw Error(ErrorKind::input, where + ": " + why + "; refusing to inflate it (limits: docs/wheel-naming.md)");
  return p;
}

WheelArchive::WheelArchive(const std::filesystem::path& path) : path_(path) {
  note_wheel_read(path);
  filename_ = parse_wheel_filename(path.filename().string(), VariantLabels::accept);
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  const Precheck pre = precheck(file_reader(path), ec ? 0 : size);
  int err = 0;
  zip_.reset(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &err));
  if (!zip_) {
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    throw_unreadable(path, &e);
  }
  load(pre);
}

WheelArchive::WheelArchive(const std::filesystem::path& name, std::string bytes) : path_(name), bytes_(std::move(bytes)) {
  filename_ = parse_wheel_filename(name.filename().string(), VariantLabels::accept);
  const Precheck pre = precheck([this](uint64_t offset, size_t n) { return offset < bytes_.size() ? bytes_.substr(offset, n) : std::string(); },
                                bytes_.size());
  zip_error_t e;
  zip_error_init(&e);
  zip_source_t* src = zip_source_buffer_create(bytes_.data(), bytes_.size(), 0, &e);
  if (src) {
    zip_.reset(zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &e));
    if (!zip_) zip_source_free(src);  // on failure the source is still ours
  }
  if (!zip_) throw_unreadable(name, &e);
  zip_error_fini(&e);
  load(pre);
}

void WheelArchive::check_same_entries(const std::vector<ZipSpan>& spans) const {
  // The spans must be the entries libzip reads, or checking them proves
  // nothing: a second end record could point libzip elsewhere.
  const zip_int64_t n = zip_get_num_entries(zip_.get(), 0);
  bool same = n >= 0 && static_cast<uint64_t>(n) == spans.size();
  for (size_t i = 0; same && i < spans.size(); ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    same = zip_stat_index(zip_.get(), i, ZIP_FL_ENC_RAW, &st) == 0 && st.name && spans[i].name == st.name && st.comp_size == spans[i].compressed &&
           st.size == spans[i].size;
  }
  if (!same)
    throw Error(ErrorKind::input, "wheel '" + path_.filename().string() +
                                      "' has an ambiguous central directory (libzip reads other entries than its end record names); refusing to read it");
}

void WheelArchive::load(const Precheck& pre) {
  if (pre.unreadable) throw *pre.unreadable;
  check_same_entries(pre.spans);
  const std::filesystem::path& path = path_;
  // The spec: {name}-{version}.dist-info, name/version as in the filename.
  std::set<std::string> dist_infos;
  for (const auto& m : members()) {
    auto slash = m.find('/');
    if (slash != std::string::npos && m.substr(0, slash).ends_with(".dist-info")) dist_infos.insert(m.substr(0, slash));
  }
  if (dist_infos.size() != 1)
    throw Error(ErrorKind::input, "wheel '" + path.filename().string() + "' has " + std::to_string(dist_infos.size()) + " .dist-info directories; a wheel has exactly one");
  dist_info_ = *dist_infos.begin();
  metadata_ = read(dist_info_ + "/METADATA", 4 << 20);
  fields_ = parse_metadata_fields(metadata_);
  if (normalize_name(field("Name")) != normalize_name(filename_.name))
    throw Error(ErrorKind::input, "wheel '" + path.filename().string() + "': METADATA Name '" + field("Name") + "' does not match the filename");
  // pip (MetadataInconsistent) and warehouse compare parsed versions:
  // 1.0 == 1.0.0, and the local label counts. An index files the wheel
  // under METADATA's version, an installer under the filename's.
  const auto meta_version = Version::try_parse(field("Version"));
  const auto file_version = Version::try_parse(filename_.version);
  if (!meta_version || !file_version || *meta_version != *file_version)
    throw Error(ErrorKind::input, "wheel '" + path.filename().string() + "': METADATA Version '" + field("Version") + "' does not match the filename's '" +
                                      filename_.version + "'; rebuild the wheel");
}

WheelArchive::~WheelArchive() = default;

std::vector<std::string> WheelArchive::members() const {
  std::vector<std::string> out;
  zip_int64_t n = zip_get_num_entries(zip_.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i)
    if (const char* name = zip_get_name(zip_.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_GUESS)) out.emplace_back(name);
  return out;
}

std::optional<uint64_t> WheelArchive::member_size(const std::string& member) const {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat(zip_.get(), member.c_str(), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) return std::nullopt;
  return st.size;
}

bool WheelArchive::executable(const std::string& member) const {
  const zip_int64_t i = zip_name_locate(zip_.get(), member.c_str(), 0);
  zip_uint8_t opsys = 0;
  zip_uint32_t attributes = 0;
  if (i < 0 || zip_file_get_external_attributes(zip_.get(), static_cast<zip_uint64_t>(i), 0, &opsys, &attributes) != 0) return false;
  return opsys == ZIP_OPSYS_UNIX && ((attributes >> 16) & 0111) != 0;
}

void WheelArchive::stream(const std::string& member, uint64_t max_bytes, const std::function<void(std::string_view)>& sink) const {
  const std::string where = "wheel '" + path_.filename().string() + "', member '" + member + "'";
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat(zip_.get(), member.c_str(), 0, &st) != 0) throw Error(ErrorKind::input, where + ": not found");
  if (!(st.valid & ZIP_STAT_SIZE) || st.size > max_bytes) throw Error(ErrorKind::input, where + ": larger than " + std::to_string(max_bytes) + " bytes");
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen(zip_.get(), member.c_str(), 0), &zip_fclose);
  if (!f) throw Error(ErrorKind::input, where + ": " + zip_strerror(zip_.get()));
  // libzip checks the inflated size only at the end of the stream: a header
  // that lies low would let a small member inflate to gigabytes first.
  // Sized to the member (one byte over, to see a lie) up to 64 KiB, and not
  // zeroed: a wheel's members are mostly small, and a zeroed 64 KiB buffer
  // for each was most of the cost of reading them.
  const size_t capacity = static_cast<size_t>(std::min<uint64_t>(st.size + 1, 1 << 16));
  const auto buf = std::make_unique_for_overwrite<char[]>(capacity);
  uint64_t got = 0;
  zip_int64_t n;
  while ((n = zip_fread(f.get(), buf.get(), std::min<uint64_t>(capacity, st.size - got + 1))) > 0) {
    got += static_cast<uint64_t>(n);
    if (got > st.size)
      throw Error(ErrorKind::input, where + ": inflates past its declared " + std::to_string(st.size) + " bytes; the archive lies about its sizes");
    sink(std::string_view(buf.get(), static_cast<size_t>(n)));
  }
  if (n < 0 || got != st.size) throw Error(ErrorKind::input, where + ": corrupt in the archive (CRC, size or deflate error)");
}

std::string WheelArchive::read(const std::string& member, uint64_t max_bytes) const {
  std::string data;
  if (const auto size = member_size(member); size && *size <= max_bytes) data.reserve(static_cast<size_t>(*size));
  stream(member, max_bytes, [&](std::string_view chunk) { data += chunk; });
  return data;
}

void WheelArchive::extract(const std::string& member, const std::filesystem::path& dest, uint64_t max_bytes) const {
  std::ofstream out(dest, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::io, "cannot write '" + dest.string() + "'");
  stream(member, max_bytes, [&](std::string_view chunk) { out.write(chunk.data(), static_cast<std::streamsize>(chunk.size())); });
  if (!out.flush()) throw Error(ErrorKind::io, "cannot write '" + dest.string() + "'");
}

std::string WheelArchive::field(const std::string& name) const {
  auto it = fields_.find(name);
  return it == fields_.end() ? std::string() : it->second;
}

std::vector<std::string> WheelArchive::verify_record() const {
  std::vector<std::string> problems;
  const std::string record_path = dist_info_ + "/RECORD";
  std::vector<RecordEntry> rows;
  try {
    rows = parse_record(read(record_path, 64 << 20), path_.filename().string());
  } catch (const Error& e) {
    return {e.what()};
  }
  std::map<std::string, RecordEntry> by_path;
  for (auto& r : rows) by_path[r.path] = r;
  // Hashes cover contents, not names: a wheel can list '../x' consistently.
  // Installers must refuse it; so does every command that trusts RECORD.
  auto unsafe = [](std::string path) {
    if (path.ends_with("/")) path.pop_back();  // a directory member
    return unsafe_path_reason(path);
  };
  for (const auto& m : members())
    if (auto why = unsafe(m); !why.empty()) problems.push_back("member '" + m + "' cannot be installed: " + why);
  for (const auto& [p, _] : by_path)
    if (auto why = unsafe(p); !why.empty()) problems.push_back("RECORD lists '" + p + "', which cannot be installed: " + why);
  for (const auto& m : members()) {
    if (m.ends_with("/")) continue;
    auto it = by_path.find(m);
    if (it == by_path.end()) {
      problems.push_back("'" + m + "' is not listed in RECORD");
      continue;
    }
    if (m == record_path) continue;
    const RecordEntry& r = it->second;
    Hasher h;
    uint64_t size = 0;
    try {
      stream(m, kMaxWheelInflatedBytes, [&](std::string_view chunk) {
        h.update(chunk);
        size += chunk.size();
      });
    } catch (const Error& e) {
      problems.push_back(e.what());
      continue;
    }
    std::string hash = "sha256=" + urlsafe_b64_nopad(h.finish());
    if (r.hash != hash) problems.push_back("'" + m + "' does not match its RECORD hash");
    if (r.size && *r.size != size) problems.push_back("'" + m + "' is " + std::to_string(size) + " bytes, RECORD says " + std::to_string(*r.size));
  }
  for (const auto& [p, _] : by_path)
    if (p != record_path && zip_name_locate(zip_.get(), p.c_str(), 0) < 0) problems.push_back("RECORD lists '" + p + "', which the wheel lacks");
  return problems;
}

std::optional<std::pair<std::string, std::string>> recorded_revision(const MetadataFields& fields) {
  auto [lo, hi] = fields.equal_range("Project-URL");
  for (auto it = lo; it != hi; ++it) {
    const std::string& v = it->second;
    const auto comma = v.find(',');
    if (comma == std::string::npos || v.substr(0, comma) != kHubRevisionLabel) continue;
    std::string url = v.substr(comma + 1);
    url.erase(0, url.find_first_not_of(' '));
    auto commit = commit_of_revision_url(url);
    if (!commit) continue;
    // ".../kernels/<org>/<name>/tree/<sha>" or ".../<org>/<name>/tree/<sha>"
    const std::string head = url.substr(0, url.rfind("/tree/"));
    const auto name_at = head.rfind('/');
    const auto org_at = name_at == std::string::npos ? std::string::npos : head.rfind('/', name_at - 1);
    if (org_at == std::string::npos) continue;
    return std::make_pair(head.substr(org_at + 1), *commit);
  }
  return std::nullopt;
}

}  // namespace kwheel
