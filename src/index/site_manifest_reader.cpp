// The manifest, read as JSON events (base/json_events.hpp): the events of
// the settings and of each file's fields go straight into KeptSettings and
// an Entry. Only a file's "variant" (sites built with --variants) is built as
// a json value, to be checked whole, as kwheel writes it, or dropped.
#include "kwheel/index/site_manifest_reader.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/base/json_events.hpp"
#include "kwheel/base/small_file.hpp"

namespace kwheel::site {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// kwheel's own manifest: no file is deeper than this, nor the site larger.
constexpr size_t kManifestDepth = 8;
constexpr size_t kManifestFiles = 1000000;
constexpr uint64_t kManifestBytes = 2ull << 30;

SignatureStanding standing_of(const std::string& s) {
  if (s == "trusted") return SignatureStanding::trusted;
  if (s == "unsigned") return SignatureStanding::unsigned_;
  if (s == "invalid") return SignatureStanding::invalid;
  return SignatureStanding::none;
}

std::string text(const json& f, const char* key) { return f.is_object() && f.contains(key) && f[key].is_string() ? f[key].get<std::string>() : std::string(); }

std::vector<std::string> strings(const json& f, const char* key) {
  std::vector<std::string> out;
  if (f.contains(key) && f[key].is_array())
    for (const auto& v : f[key])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

// A recorded variant outcome, or nothing where any part is not what kwheel
// writes (the build is then derived again: a cache, not a source of truth).
std::optional<RecordedVariant> recorded_variant(const json& v) {
  if (!v.is_object()) return std::nullopt;
  RecordedVariant r;
  if (v.contains("left_out")) {
    r.left_out = text(v, "left_out");
    return r.left_out.empty() ? std::nullopt : std::optional(r);
  }
  VariantWheel w;
  w.filename = text(v, "filename");
  w.index = text(v, "index");
  w.version = text(v, "version");
  w.label = text(v, "label");
  w.sha256 = text(v, "sha256");
  w.requires_python = text(v, "requires_python");
  w.metadata_sha256 = text(v, "metadata_sha256");
  w.evidence = strings(v, "evidence");
  w.unclaimed = strings(v, "unclaimed");
  if (!v.contains("size") || !v["size"].is_number_unsigned() || !v.contains("properties") || !v["properties"].is_object()) return std::nullopt;
  w.size = v["size"].get<uint64_t>();
  for (const auto& [ns, features] : v["properties"].items()) {
    if (!features.is_object()) return std::nullopt;
    for (const auto& [feature, values] : features.items()) {
      if (!values.is_array()) return std::nullopt;
      for (const auto& value : values)
        if (value.is_string()) w.properties[ns][feature].push_back(value.get<std::string>());
    }
  }
  if (w.filename.empty() || w.filename.find('/') != std::string::npos || w.filename.starts_with(".") || w.sha256.size() != 64 ||
      w.index.find("torch") == std::string::npos || w.label.empty())
    return std::nullopt;
  r.wheel = std::move(w);
  return r;
}

// What an open object or array is to the manifest; `other` is anything
// kwheel does not write there, whose values are skipped.
enum class Role { root, files, file, gpu_code, hub, signature, other };

// The manifest's events (base/json_events.hpp); returning false stops the reading.
class ManifestEvents : public JsonEvents {
 public:
  ManifestEvents(const fs::path& manifest, const fs::path& site, KeptSettings& kept, const std::function<void(RecordedFile&&)>& on_file)
      : manifest_(manifest), site_(site), kept_(kept), on_file_(on_file) {}

  bool null() override { return variant_ ? variant_->null() : scalar(nullptr); }
  bool boolean(bool b) override { return variant_ ? variant_->boolean(b) : scalar(&b); }
  bool number_integer(int64_t n) override { return variant_ ? variant_->number_integer(n) : scalar(nullptr); }
  bool number_unsigned(uint64_t n) override {
    if (variant_) return variant_->number_unsigned(n);
    if (in(Role::file) && key_ == "size") file_.e.size = n;
    return scalar(nullptr);
  }
  bool number_float(double n, std::string_view s) override { return variant_ ? variant_->number_float(n, std::string(s)) : scalar(nullptr); }
  bool string(std::string& s) override;
  bool key(std::string& k) override {
    if (variant_) return variant_->key(k);
    key_ = k;
    return true;
  }
  bool start_object() override;
  bool end_object() override;
  bool start_array() override;
  bool end_array() override;

  // Whether the whole text was the manifest kwheel writes.
  bool complete() const { return done_ && format_ok_ && files_seen_; }
  [[noreturn]] void not_a_manifest() const;

 private:
  bool in(Role r) const { return !stack_.empty() && stack_.back() == r; }
  bool scalar(const bool* b);
  bool open(Role r);
  void deeper();
  [[noreturn]] void malformed() const {
    throw Error(ErrorKind::input, "'" + manifest_.string() + "' lists a malformed file entry; rebuild the site into a new directory");
  }

  const fs::path& manifest_;
  const fs::path& site_;
  const std::string files_dir_ = (site_ / "files").string() + "/";
  KeptSettings& kept_;
  const std::function<void(RecordedFile&&)>& on_file_;
  std::vector<Role> stack_;
  std::string key_;  // the key the next value is for (in a root, file, hub or signature object)
  RecordedFile file_;
  size_t files_ = 0;
  // Within a file's "variant": its value, built by nlohmann's own DOM
  // handler, and how deep in it the parser is.
  json variant_value_;
  std::optional<nlohmann::detail::json_sax_dom_parser<json>> variant_;
  size_t variant_depth_ = 0;
  bool format_ok_ = false, files_seen_ = false, done_ = false;
};

// Values are copied, not moved: the reader's buffer keeps its capacity for
// the next string, and each field gets one allocation of its own size (a
// moved buffer grown by doubling would hold up to twice the bytes, for
// every field of 20,000 entries).
bool ManifestEvents::string(std::string& s) {
  if (variant_) return variant_->string(s);
  if (in(Role::root)) {
    if (key_ == "format") format_ok_ = s == kManifestFormat;
    else if (key_ == "title") kept_.title = s;
    else if (key_ == "deps_index") kept_.deps_index = s;
    else if (key_ == "base_url") kept_.base_url = s;
    else if (key_ == "signature_policy") kept_.signature_policy = s;
    else if (key_ == "kwheel_version") kept_.kwheel_version = s;
  } else if (in(Role::file)) {
    Entry& e = file_.e;
    if (key_ == "filename") e.filename = s;
    else if (key_ == "project") e.project = s;
    else if (key_ == "version") e.version = s;
    else if (key_ == "sha256") e.sha256 = s;
    else if (key_ == "requires_python") e.requires_python = s;
    else if (key_ == "metadata_sha256") e.metadata_sha256 = s;
  } else if (in(Role::gpu_code)) {
    file_.e.gpu_code.push_back(s);
  } else if (in(Role::hub)) {
    if (key_ == "repo") file_.e.hub_repo = s;
    else if (key_ == "commit") file_.e.hub_commit = s;
    else if (key_ == "url") file_.e.hub_url = s;
  } else if (in(Role::signature)) {
    ShownSignature& sig = file_.e.signature;
    if (key_ == "summary") sig.summary = s;
    else if (key_ == "standing") sig.standing = standing_of(s);
    else if (key_ == "reason") sig.reason = s;
  }
  return scalar(nullptr);
}

// A value that is not a string or a number kwheel reads: only the root's
// "variants" is a boolean. A top-level value that is no object is no manifest.
bool ManifestEvents::scalar(const bool* b) {
  if (stack_.empty()) return false;
  if (b && in(Role::root) && key_ == "variants") kept_.variants = *b;
  return true;
}

void ManifestEvents::not_a_manifest() const {
  throw Error(ErrorKind::input, "'" + manifest_.string() + "' is not a " + kManifestFormat + " manifest; rebuild the site into a new directory");
}

bool ManifestEvents::open(Role r) {
  if (stack_.size() >= kManifestDepth) not_a_manifest();
  stack_.push_back(r);
  return true;
}

// One level further into a variant, which counts toward the bound too.
void ManifestEvents::deeper() {
  if (stack_.size() + ++variant_depth_ > kManifestDepth) not_a_manifest();
}

bool ManifestEvents::start_object() {
  constexpr size_t n = static_cast<size_t>(-1);  // nlohmann's "size unknown"
  if (variant_) return deeper(), variant_->start_object(n);
  if (stack_.empty()) return open(Role::root);
  if (in(Role::files)) {
    if (files_ == kManifestFiles) throw Error(ErrorKind::input, "'" + manifest_.string() + "' lists more than 1,000,000 files; split the site");
    file_ = RecordedFile{};
    return open(Role::file);
  }
  if (in(Role::file) && key_ == "variant") {
    variant_value_ = json();
    variant_.emplace(variant_value_, /*allow_exceptions=*/false);
    variant_depth_ = 1;
    return variant_->start_object(n);
  }
  if (in(Role::file) && key_ == "hub") return file_.hub = true, open(Role::hub);
  if (in(Role::file) && key_ == "signature") return file_.signature = true, open(Role::signature);
  return open(Role::other);
}

bool ManifestEvents::end_object() {
  if (variant_) {
    if (!variant_->end_object()) return false;
    if (--variant_depth_ == 0) {
      if (auto v = recorded_variant(variant_value_)) file_.e.variant = std::make_shared<const RecordedVariant>(std::move(*v));
      variant_.reset();
      variant_value_ = json();
    }
    return true;
  }
  const Role r = stack_.back();
  stack_.pop_back();
  if (r == Role::root) done_ = true;
  if (r == Role::file) {
    Entry& e = file_.e;
    // One name in SITE/files/: no path, and no NUL (a C string would end there, naming another file).
    if (e.filename.empty() || e.filename.find_first_of(std::string_view("/\0", 2)) != std::string::npos || e.filename == "." || e.filename == ".." ||
        e.project.empty())
      malformed();
    e.source = files_dir_ + e.filename;
    ++files_;
    on_file_(std::move(file_));
  }
  return true;
}

bool ManifestEvents::start_array() {
  constexpr size_t n = static_cast<size_t>(-1);
  if (variant_) return deeper(), variant_->start_array(n);
  if (stack_.empty()) return false;
  if (in(Role::root) && key_ == "files") return files_seen_ = true, open(Role::files);
  if (in(Role::file) && key_ == "gpu_code") return file_.gpu = true, open(Role::gpu_code);
  return open(Role::other);
}

bool ManifestEvents::end_array() {
  if (variant_) return --variant_depth_, variant_->end_array();
  stack_.pop_back();
  return true;
}

}  // namespace

void read_manifest(const fs::path& manifest, const fs::path& site, KeptSettings& kept, const std::function<void(RecordedFile&&)>& on_file) {
  // Read whole (a site of 20,000 wheels: 10 MB, held while its entries are
  // made, in one read: built from a stream iterator, char by char, it cost
  // more than parsing it), not mapped: a file cut short under a mapping
  // would be SIGBUS.
  // A million files of kwheel's manifest are well under this.
  const std::string text = read_small_file(manifest, kManifestBytes, "the site's manifest", "rebuild the site into a new directory");
  ManifestEvents events(manifest, site, kept, on_file);
  if (!read_json_events(text, events) || !events.complete()) events.not_a_manifest();
}

}  // namespace kwheel::site
