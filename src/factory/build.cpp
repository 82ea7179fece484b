#include "kwheel/factory/build.hpp"

#include "kwheel/base/enum_name.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/factory/signed_metadata.hpp"
#include "kwheel/factory/staging.hpp"
#include "kwheel/factory/variant_evidence.hpp"
#include "kwheel/factory/wheel_metadata.hpp"
#include "kwheel/kernel/kernel_digest.hpp"
#include "kwheel/kernel/variant.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/wheel/kernel_origin.hpp"

// One variant's wheel is planned here from the parts that decide it: its
// signed metadata.json (signed_metadata), what its files say about where it
// runs (variant_evidence), and its name, version and METADATA
// (wheel_metadata). Staging and committing a build's wheels, with reuse of
// those already written, are staging and reuse.
namespace kwheel {

bool BuildReport::ok() const {
  for (const auto& v : variants)
    if (v.status == VariantResult::Status::failed) return false;
  return true;
}

const char* status_name(VariantResult::Status s) {
  using S = VariantResult::Status;
  static constexpr EnumName<S> names[] = {{S::built, "built"}, {S::failed, "failed"}, {S::filtered, "filtered"}};
  return enum_name(s, names).data();
}

namespace {

// What kernels' loaders need to find the installed wheel (kernel_origin.hpp):
// N is metadata.json's version, else the vN branch's, else the public
// version's major part (a directory build's --version).
KernelOrigin kernel_origin(const VariantInput& input, const PlannedWheel& plan, const std::string& version, const BuildOptions& o) {
  KernelOrigin k;
  k.package = plan.package;
  k.repo_id = o.source.repo_id;
  k.revision = o.source.commit;
  k.variant = input.name;
  if (plan.metadata && plan.metadata->version) k.version = *plan.metadata->version;
  else if (o.branch_version) k.version = *o.branch_version;
  else if (const Version v = Version::parse(version); !v.release().empty() && v.release().front() >= 0)
    k.version = static_cast<std::uint64_t>(v.release().front());
  return k;
}

}  // namespace

PlannedWheel plan_wheel(const VariantInput& input, const BuildOptions& o) {
  auto fail = [&](const std::string& why) { return Error(ErrorKind::input, "variant '" + input.name + "': " + why); };
  auto parsed = try_parse_variant(input.name);
  if (!parsed.variant) throw fail(parsed.error);
  const Variant& variant = *parsed.variant;
  if (input.files.empty()) throw fail("the variant directory is empty; rebuild or remove it");

  PlannedWheel plan;
  read_signed_metadata(input, o, plan);
  if (plan.metadata && plan.metadata->digest) check_digest_files(*plan.metadata->digest, input);
  const VariantLayout layout = lay_out_variant(input, plan.metadata ? &*plan.metadata : nullptr, o.name, o.fallback_name);
  plan.layout = layout.kind;
  plan.package = layout.package;
  plan.ignored = layout.left_out;
  plan.dist_name = dist_name_of(layout, plan.metadata, o);
  if (!is_valid_name(plan.dist_name)) throw fail("'" + plan.dist_name + "' is not a valid distribution name; pass --name");
  plan.tags = compute_tags(variant, o.tags);
  const std::string version = public_version(input, plan.metadata, o);
  check_signed_identity(plan, version, "variant '" + input.name + "'");
  plan.version = plan.tags.local_label.empty() ? version : version + "+" + plan.tags.local_label;
  for (const auto& m : layout.members) {
    plan.contents.members.push_back({m.archive_path, m.file->source, m.file->size, m.file->executable});
    plan.member_sources[m.archive_path] = m.file->path;
  }
  gather_evidence(variant, plan, o);
  const std::string dist = wheel_name_component(plan.dist_name);
  plan.contents.dist_info = dist + "-" + plan.version + ".dist-info";
  plan.filename = dist + "-" + plan.version + "-" + plan.tags.str() + ".whl";
  plan.contents.metadata = render_metadata(core_metadata(plan, variant, o, "variant '" + input.name + "'"));
  plan.contents.wheel = render_wheel_file(plan.tags, std::string("kwheel ") + KWHEEL_VERSION);
  plan.contents.dist_info_texts.emplace_back(kHubKernelFile, render_hub_kernel_json(kernel_origin(input, plan, version, o)));
  return plan;
}

BuildReport build_wheels(const std::vector<VariantInput>& variants, const BuildOptions& o) {
  StagedBuild build = stage_build(variants, o);
  if (!build.report.ok()) return build.report;  // staged temp files are removed here
  if (o.before_commit) o.before_commit();
  commit_build(build);
  return build.report;
}

nlohmann::json to_json(const VariantResult& r) {
  nlohmann::json j{{"variant", r.variant}, {"status", status_name(r.status)}};
  if (r.status == VariantResult::Status::failed) j["error"] = r.error;
  if (r.status == VariantResult::Status::filtered && !r.error.empty()) j["reason"] = r.error;
  if (r.status == VariantResult::Status::built) {
    j["wheel"] = r.wheel.string();
    j["filename"] = r.wheel.filename().string();
    j["sha256"] = r.sha256;
    j["size"] = r.size;
    j["version"] = r.version;
    j["package"] = r.package;
    j["name"] = r.dist_name;
    j["layout"] = r.layout;
    if (r.metadata) j["kernel"] = to_json(*r.metadata);
    j["signed"] = r.signature.signed_by_trusted();
    j["signature"] = r.signature.to_json();
    j["tags"] = r.tags.expanded();
    j["requires_dist"] = r.tags.requires_dist;
    j["reused"] = r.reused;
    if (!r.ignored.empty()) j["ignored_files"] = r.ignored;
    if (r.platform) {
      const ManylinuxReport& p = *r.platform;
      j["platform"] = {{"tag", p.platform_tag}, {"policy", p.policy}, {"reason", p.reason}, {"torch_provided", p.torch_provided},
                       {"allowed_external", p.allowed_external}, {"abi3", p.abi3}, {"source", p.policy_source}};
      if (!p.warnings.empty()) j["platform"]["warnings"] = p.warnings;
    }
    if (!r.gpu.empty()) j["gpu"] = to_json(r.gpu);
    if (r.macos) j["macos"] = to_json(*r.macos);
    if (!r.cpython_module.empty()) j["cpython_module"] = r.cpython_module;
  }
  return j;
}

nlohmann::json to_json(const BuildReport& report) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& v : report.variants) arr.push_back(to_json(v));
  return {{"ok", report.ok()}, {"committed", report.committed}, {"variants", arr}};
}

}  // namespace kwheel
