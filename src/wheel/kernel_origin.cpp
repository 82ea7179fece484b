#include "kwheel/wheel/kernel_origin.hpp"

#include <nlohmann/json.hpp>

#include "kwheel/base/error.hpp"
#include "kwheel/hub/hf_config.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/wheel/core_metadata.hpp"

namespace kwheel {

namespace {

bool is_commit(const std::string& s) {
  return s.size() == 40 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The variant core_metadata's description names: "Build variant `X` of".
std::optional<std::string> described_variant(const MetadataFields& fields) {
  const auto d = fields.find("Description");
  if (d == fields.end()) return std::nullopt;
  static constexpr std::string_view kLead = "Build variant `";
  const auto at = d->second.find(kLead);
  if (at == std::string::npos) return std::nullopt;
  const auto from = at + kLead.size();
  const auto to = d->second.find('`', from);
  if (to == std::string::npos || to == from) return std::nullopt;
  return d->second.substr(from, to - from);
}

}  // namespace

std::string render_hub_kernel_json(const KernelOrigin& o) {
  // nlohmann's object is a std::map: keys come out sorted.
  nlohmann::json j{{"package", o.package}, {"repo_id", o.repo_id.empty() ? nlohmann::json() : nlohmann::json(o.repo_id)},
                   {"revision", o.revision.empty() ? nlohmann::json() : nlohmann::json(o.revision)},
                   {"variant", o.variant}, {"version", o.version}};
  return j.dump(1) + "\n";
}

KernelOrigin parse_hub_kernel_json(std::string_view text, const std::string& where) {
  auto fail = [&](const std::string& why) { return Error(ErrorKind::input, where + ": " + why + "; reinstall the wheel kwheel built"); };
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) throw fail("is not a JSON object");
  auto text_field = [&](const char* key, bool nullable) {
    const auto it = j.find(key);
    if (it == j.end() || (!it->is_string() && !(nullable && it->is_null())))
      throw fail(std::string("field '") + key + "' is missing or not a string");
    return it->is_null() ? std::string() : it->get<std::string>();
  };
  KernelOrigin o;
  o.package = text_field("package", false);
  o.repo_id = text_field("repo_id", true);
  o.revision = text_field("revision", true);
  o.variant = text_field("variant", false);
  const auto v = j.find("version");
  if (v == j.end() || !v->is_number_unsigned()) throw fail("field 'version' is missing or not a kernel version N");
  o.version = v->get<std::uint64_t>();
  if (!o.repo_id.empty() && !looks_like_repo_id(o.repo_id)) throw fail("repo_id '" + o.repo_id.substr(0, 200) + "' is not ORG/NAME");
  if (!o.revision.empty() && !is_commit(o.revision)) throw fail("revision '" + o.revision.substr(0, 60) + "' is not a 40-hex commit");
  if (o.package.empty() || o.package.find('/') != std::string::npos || o.package.starts_with("."))
    throw fail("package '" + o.package.substr(0, 200) + "' is not a package directory name");
  if (o.variant.empty() || o.variant.find('/') != std::string::npos || o.variant.starts_with("."))
    throw fail("variant '" + o.variant.substr(0, 200) + "' is not a variant name");
  return o;
}

std::optional<KernelOrigin> origin_from_metadata(const MetadataFields& fields) {
  const auto rev = recorded_revision(fields);
  const auto variant = described_variant(fields);
  const auto version = fields.find("Version");
  if (!rev || !variant || version == fields.end()) return std::nullopt;
  const auto parsed = Version::try_parse(version->second);
  if (!parsed || parsed->release().empty() || parsed->release().front() < 0 || !looks_like_repo_id(rev->first)) return std::nullopt;
  KernelOrigin o;
  o.repo_id = rev->first;
  o.revision = rev->second;
  o.variant = *variant;
  o.version = static_cast<std::uint64_t>(parsed->release().front());
  return o;
}

}  // namespace kwheel
