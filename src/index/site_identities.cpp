// The identities of a site's files (size, mtime, inode, device of each
// wheel, its .metadata and the file it was placed from), kept by one run for
// the next, so that a file whose identity held is not read again. A cache:
// missing, stale or unreadable, the files are hashed instead.
#include "kwheel/index/site_identities.hpp"

#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string_view>

namespace kwheel::site {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Where the identities live: beside SITE, as the lock does, not in it. They
// are this machine's (inode numbers, mtimes), so kwheel-index.json stays the
// same bytes for the same wheels (a site built twice, or copied, is the same
// site), and a site copied elsewhere without them has each file hashed once.
fs::path identities_path(const fs::path& site) { return site.parent_path() / ("." + site.filename().string() + ".kwheel-identities"); }

constexpr std::string_view kIdentitiesFormat = "kwheel-identities 2";

// "size mtime_ns ino dev", or "-" for none.
void append_identity(std::string& out, const std::optional<FileIdentity>& id) {
  out += '\t';
  if (!id) {
    out += '-';
    return;
  }
  char buf[96];
  char* end = std::to_chars(buf, buf + sizeof buf, id->size).ptr;
  *end++ = ' ';
  end = std::to_chars(end, buf + sizeof buf, id->mtime_ns).ptr;
  *end++ = ' ';
  end = std::to_chars(end, buf + sizeof buf, id->ino).ptr;
  *end++ = ' ';
  end = std::to_chars(end, buf + sizeof buf, id->dev).ptr;
  out.append(buf, end);
}

template <class T>
bool read_number(std::string_view& text, T& into) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), into);
  if (ec != std::errc()) return false;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  if (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  return true;
}

// One field of a line; nullopt when it is "-" or not four numbers (then
// the file is hashed: the identities are a cache).
std::optional<FileIdentity> identity_field(std::string_view text) {
  FileIdentity id;
  if (!read_number(text, id.size) || !read_number(text, id.mtime_ns) || !read_number(text, id.ino) || !read_number(text, id.dev) || !text.empty())
    return std::nullopt;
  return id;
}

// "filename\tidentity\tmetadata_identity\tsource_identity".
void read_identity_line(std::string_view line, std::map<std::string, Entry>& entries) {
  std::string_view fields[4];
  for (auto& f : fields) {
    const size_t tab = line.find('\t');
    f = line.substr(0, tab);
    line = tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1);
  }
  auto it = entries.find(std::string(fields[0]));
  if (it == entries.end()) return;
  it->second.identity = identity_field(fields[1]);
  it->second.metadata_identity = identity_field(fields[2]);
  it->second.source_identity = identity_field(fields[3]);
}

std::optional<FileIdentity> recorded_identity(const json& f, const char* key) {
  if (!f.contains(key) || !f[key].is_object()) return std::nullopt;
  const json& j = f[key];
  for (const char* k : {"size", "ino", "dev"})
    if (!j.contains(k) || !j[k].is_number_unsigned()) return std::nullopt;
  if (!j.contains("mtime_ns") || !j["mtime_ns"].is_number_integer()) return std::nullopt;
  return FileIdentity{j["size"].get<uint64_t>(), j["mtime_ns"].get<int64_t>(), j["ino"].get<uint64_t>(), j["dev"].get<uint64_t>()};
}

// The form kwheel wrote before (one JSON object a line), read so that an
// upgrade does not hash the whole site once more.
void read_identity_json(const std::string& line, std::map<std::string, Entry>& entries) {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return;
  if (!j.contains("filename") || !j["filename"].is_string()) return;
  auto it = entries.find(j["filename"].get<std::string>());
  if (it == entries.end()) return;
  Entry& e = it->second;
  e.identity = recorded_identity(j, "identity");
  e.metadata_identity = recorded_identity(j, "metadata_identity");
  e.source_identity = recorded_identity(j, "source_identity");
}

// filename -> its three identities, as the last run on this site left them;
// nothing when there are none or they cannot be read (then files are hashed).
}  // namespace

void read_identities(const fs::path& site, std::map<std::string, Entry>& entries) {
  std::ifstream in(identities_path(site), std::ios::binary);
  if (!in) return;
  std::string line;
  if (!std::getline(in, line)) return;
  const bool compact = line == kIdentitiesFormat;
  if (!compact) read_identity_json(line, entries);
  while (std::getline(in, line)) {
    if (compact) read_identity_line(line, entries);
    else read_identity_json(line, entries);
  }
}

void write_identities(const fs::path& site, const std::map<std::string, Entry>& entries) {
  const fs::path path = identities_path(site);
  const fs::path tmp = fs::path(path) += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    std::string line(kIdentitiesFormat);
    line += '\n';
    out << line;
    for (const auto& [name, e] : entries) {
      // A name no wheel has (the manifest is on disk, anyone may edit it)
      // would split the line: that file is hashed on the next run instead.
      if (name.find_first_of("\t\n") != std::string::npos) continue;
      line.assign(name);
      append_identity(line, e.identity);
      append_identity(line, e.metadata_identity);
      append_identity(line, e.source_identity);
      line += '\n';
      out << line;
    }
    out.close();
    // A cache: without it the next run hashes the site's files once more.
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
}

}  // namespace kwheel::site
