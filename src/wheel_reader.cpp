#include "kwheel/wheel_reader.hpp"

#include "kwheel/core_metadata.hpp"

#include <zip.h>

#include <fstream>
#include <set>

#include "kwheel/digest.hpp"
#include "kwheel/error.hpp"
#include "kwheel/pep440.hpp"
#include "kwheel/record.hpp"
#include "kwheel/repo_layout.hpp"

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

[[noreturn]] void throw_unreadable(const std::filesystem::path& path, zip_error_t* e) {
  std::string why = zip_error_strerror(e);
  zip_error_fini(e);
  throw Error(ErrorKind::input, "wheel '" + path.string() + "' cannot be read as a zip archive: " + why);
}

}  // namespace

WheelArchive::WheelArchive(const std::filesystem::path& path) : path_(path) {
  filename_ = parse_wheel_filename(path.filename().string());
  int err = 0;
  zip_.reset(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &err));
  if (!zip_) {
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    throw_unreadable(path, &e);
  }
  load();
}

WheelArchive::WheelArchive(const std::filesystem::path& name, std::string bytes) : path_(name), bytes_(std::move(bytes)) {
  filename_ = parse_wheel_filename(name.filename().string());
  zip_error_t e;
  zip_error_init(&e);
  zip_source_t* src = zip_source_buffer_create(bytes_.data(), bytes_.size(), 0, &e);
  if (src) {
    zip_.reset(zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &e));
    if (!zip_) zip_source_free(src);  // on failure the source is still ours
  }
  if (!zip_) throw_unreadable(name, &e);
  zip_error_fini(&e);
  load();
}

void WheelArchive::load() {
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
}

WheelArchive::~WheelArchive() = default;

std::vector<std::string> WheelArchive::members() const {
  std::vector<std::string> out;
  zip_int64_t n = zip_get_num_entries(zip_.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i)
    if (const char* name = zip_get_name(zip_.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_GUESS)) out.emplace_back(name);
  return out;
}

std::string WheelArchive::read(const std::string& member, uint64_t max_bytes) const {
  const std::string where = "wheel '" + path_.filename().string() + "', member '" + member + "'";
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat(zip_.get(), member.c_str(), 0, &st) != 0) throw Error(ErrorKind::input, where + ": not found");
  if (!(st.valid & ZIP_STAT_SIZE) || st.size > max_bytes) throw Error(ErrorKind::input, where + ": larger than " + std::to_string(max_bytes) + " bytes");
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen(zip_.get(), member.c_str(), 0), &zip_fclose);
  if (!f) throw Error(ErrorKind::input, where + ": " + zip_strerror(zip_.get()));
  std::string data(st.size, '\0');
  zip_int64_t got = zip_fread(f.get(), data.data(), st.size);
  if (got < 0 || static_cast<uint64_t>(got) != st.size) throw Error(ErrorKind::input, where + ": truncated or corrupt");
  return data;
}

void WheelArchive::extract(const std::string& member, const std::filesystem::path& dest) const {
  const std::string where = "wheel '" + path_.filename().string() + "', member '" + member + "'";
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen(zip_.get(), member.c_str(), 0), &zip_fclose);
  if (!f) throw Error(ErrorKind::input, where + ": " + zip_strerror(zip_.get()));
  std::ofstream out(dest, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::io, "cannot write '" + dest.string() + "'");
  std::vector<char> buf(1 << 16);
  zip_int64_t n;
  while ((n = zip_fread(f.get(), buf.data(), buf.size())) > 0) out.write(buf.data(), n);
  if (n < 0) throw Error(ErrorKind::input, where + ": corrupt in the archive (CRC or deflate error)");
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
    std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen(zip_.get(), m.c_str(), 0), &zip_fclose);
    if (!f) {
      problems.push_back("'" + m + "' cannot be read: " + zip_strerror(zip_.get()));
      continue;
    }
    Hasher h;
    uint64_t size = 0;
    std::vector<char> buf(1 << 16);
    zip_int64_t n;
    while ((n = zip_fread(f.get(), buf.data(), buf.size())) > 0) {
      h.update(std::string_view(buf.data(), static_cast<size_t>(n)));
      size += static_cast<uint64_t>(n);
    }
    if (n < 0) {
      problems.push_back("'" + m + "' is corrupt in the archive (CRC or deflate error)");
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
