#include "kwheel/validate/inspect.hpp"

#include <ctime>
#include <regex>

#include <stdlib.h>

#include "kwheel/validate/compat.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/macho.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/validate/wheel_objects.hpp"
#include "kwheel/trust/wheel_signature.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

// A macOS wheel or object judged as the build judges a darwin variant,
// once per CPU its tags stand for (universal2: arm64 and x86_64); the
// report kept is the one needing the newest macOS.
void judge_macos(Inspection& out, const std::vector<MachOInfo>& machos, const std::vector<std::string>& platforms, bool metal) {
  std::vector<std::pair<MacosVersion, std::string>> tagged;
  for (const auto& p : platforms)
    if (auto t = parse_macos_tag(p))
      for (const auto& arch : macos_tag_archs(t->second)) tagged.emplace_back(t->first, arch);
  if (tagged.empty()) tagged.emplace_back(MacosVersion{}, machos.front().slices.front().arch);
  for (const auto& [version, arch] : tagged) {
    MacosReport r = assess_macos(machos, arch, macos_backend_floor(arch, metal), std::nullopt);
    if (version != MacosVersion{} && version < r.floor)
      out.macos_problems.push_back("tagged macOS " + version.str() + " but " + r.reason + "; rebuild the wheel (kwheel tags it " + r.platform_tag + ")");
    if (!out.macos || out.macos->floor < r.floor) out.macos = std::move(r);
  }
}

}  // namespace

namespace {

// The package's metadata.json, parsed only once its signature (if any)
// verified over the bytes parsed, as a build does.
void read_kernel_evidence(const WheelArchive& wheel, const std::string& name, const InspectOptions& options, Inspection& out) {
  auto signed_metadata = wheel_signature(wheel, options.signatures, std::time(nullptr));
  if (!signed_metadata) return;
  out.signature = signed_metadata->verdict;
  out.signature_error = signed_metadata->error;
  if (out.signature_error.empty())
    out.kernel = parse_kernel_metadata(signed_metadata->metadata_text, "wheel '" + name + "' member '" + signed_metadata->member + "'");
}

// A wheel kwheel built says its torch and backend in its local label
// (+torch2.10.cu130): the torch libraries are judged for that torch.
void judge_as_labelled(const fs::path& path, ManylinuxOptions& mo) {
  const LocalLabel label = read_label(parse_wheel_filename(path.filename().string(), VariantLabels::accept).version);
  if (label.noarch || !label.framework_version) return;
  if (label.framework == "torch" || label.framework == "torchstableabi") mo.torch_minor = label.framework_version->str();
  static const std::regex versioned(R"(^(cu|rocm|xpu|cann)(\d{1,8})$)");
  std::smatch m;
  if (mo.backend.empty() && std::regex_match(label.backend, m, versioned)) {
    const std::string prefix = m[1];
    mo.backend = prefix == "cu" ? "cuda" : prefix;
    const std::string digits = m[2];
    if (digits.size() >= 2) mo.backend_major = std::stoi(digits.substr(0, digits.size() - 1));
  } else if (mo.backend.empty() && label.backend == "cpu") {
    mo.backend = "cpu";
  }
  mo.variant = label.text;
}

}  // namespace

namespace {

// What a variant wheel's variant.json says of the label in its filename.
void read_variant(const WheelArchive& wheel, Inspection& out) {
  out.variant_label = wheel.filename().variant;
  const std::string member = wheel.dist_info() + "/variant.json";
  try {
    const VariantsJson v = parse_wheel_variant_json(wheel.read(member, 4 << 20), "'" + member + "'", *out.variant_label);
    out.variant_properties = v.variants.at(*out.variant_label);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) throw;
    out.variant_problem = e.what();
  }
}

}  // namespace

Inspection inspect_path(const fs::path& path, const InspectOptions& options) {
  Inspection out;
  ObjectFacts objects;
  if (path.extension() == ".whl") {
    out.kind = "wheel";
    WheelArchive wheel(path);
    out.revision = recorded_revision(wheel.metadata());
    if (wheel.filename().variant) read_variant(wheel, out);
    read_kernel_evidence(wheel, path.filename().string(), options, out);
    out.current_tags = join(wheel.filename().platform, ".");
    for (const auto& a : wheel.filename().abi) out.tagged_abi3 = out.tagged_abi3 || a == "abi3";
    for_each_wheel_object(wheel, [&](const fs::path& file, const std::string& member) {
      read_object(file, member, objects);
      out.files.push_back(member);
    });
    if (!objects.machos.empty()) {
      if (!objects.elves.empty()) throw Error(ErrorKind::input, "wheel '" + path.filename().string() + "' mixes ELF and Mach-O objects; no platform tag fits both");
      judge_macos(out, objects.machos, wheel.filename().platform, read_label(wheel.filename().version).backend == "metal");
      return out;
    }
    if (objects.elves.empty()) throw Error(ErrorKind::input, "wheel '" + path.filename().string() + "' holds no shared object; a pure-Python wheel needs no platform evidence");
  } else {
    out.kind = "shared object";
    if (!fs::is_regular_file(path)) throw Error(ErrorKind::not_found, "'" + path.string() + "' does not exist");
    if (!is_elf_file(path) && !is_macho_file(path)) throw Error(ErrorKind::input, "'" + path.string() + "' is neither a .whl nor an ELF or Mach-O shared object");
    read_object(path, path.filename().string(), objects);
    out.files.push_back(path.filename().string());
    if (!objects.machos.empty()) {
      judge_macos(out, objects.machos, {}, false);
      return out;
    }
  }
  ManylinuxOptions mo;
  mo.arch = objects.elves.front().machine;
  mo.backend = options.backend;
  if (out.kind == "wheel") judge_as_labelled(path, mo);
  mo.allowed_external = options.allowed_external;
  mo.require_abi3 = out.tagged_abi3;
  out.report = assess_manylinux(objects.elves, mo);
  out.gpu = gpu_evidence(std::move(objects.gpu), out.kernel ? out.kernel->archs : std::vector<std::string>{});
  return out;
}

}  // namespace kwheel
