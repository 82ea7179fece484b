#include "kwheel/factory/variant_evidence.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/base/mapped_file.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/evidence/abi3.hpp"
#include "kwheel/evidence/elf.hpp"
#include "kwheel/evidence/pe.hpp"
#include "kwheel/evidence/shared_object.hpp"

namespace kwheel {
namespace {

// An object Python's import (or the loader, for a library it needs) would
// refuse: the wheel would install and then fail at import, so none is built.
Error unloadable(const Variant& variant, const std::string& member, const std::string& why, const std::string& fix) {
  std::string msg = "variant '";
  msg.append(variant.str()).append("': '").append(member).append("' is ").append(why).append("; ").append(fix);
  return Error(ErrorKind::input, msg.append(", or leave it out of the variant"));
}

// Every shared object of a Linux variant, each read once: its ELF facts
// decide the platform tag, its GPU code is audited against metadata.json.
struct VariantObjects {
  std::vector<ElfInfo> elves;
  std::vector<ObjectGpuCode> gpu;
};

VariantObjects read_objects(const Variant& variant, const PlannedWheel& plan) {
  VariantObjects out;
  for (const auto& m : plan.contents.members) {
    if (!is_shared_object(m.archive_path)) continue;
    if (!is_elf_file(m.source))
      throw Error(ErrorKind::input, "variant '" + variant.str() + "': '" + m.archive_path + "' is not an ELF shared object; the build is broken or the file is not what its name says");
    const MappedFile file(m.source);
    ElfInfo e = parse_elf(file.bytes(), m.source.string());
    if (auto why = load_refusal(e, m.archive_path.ends_with(".so") ? LoadedAs::dlopen : LoadedAs::needed))
      throw unloadable(variant, m.archive_path, *why, "link it as a shared library (-shared, not -pie)");
    ObjectGpuCode code = read_gpu_code(file.bytes(), e, m.source.string());
    e.name = code.file = m.archive_path;  // reports name the member, errors above the file
    out.elves.push_back(std::move(e));
    out.gpu.push_back(std::move(code));
  }
  return out;
}

// A darwin variant's tag comes from its Mach-O files' minimum macOS. Each
// file is mapped once: the magic check and the parse read the same bytes.
MacosReport darwin_evidence(const Variant& variant, const PlannedWheel& plan, const BuildOptions& o) {
  std::vector<MachOInfo> objects;
  for (const auto& m : plan.contents.members) {
    if (!is_shared_object(m.archive_path) && !m.archive_path.ends_with(".dylib")) continue;
    const MappedFile file(m.source);
    if (!has_macho_magic(file.bytes()))
      throw Error(ErrorKind::input, "variant '" + variant.str() + "': '" + m.archive_path + "' is not a Mach-O object; the build is broken or the file is not what its name says");
    MachOInfo info = parse_macho(file.bytes(), m.source.string());
    info.name = m.archive_path;
    if (auto why = load_refusal(info)) throw unloadable(variant, m.archive_path, *why, "link it with -bundle or -dynamiclib");
    objects.push_back(std::move(info));
  }
  std::optional<MacosVersion> requested;
  if (!o.tags.macos.empty()) requested = parse_macos_version(o.tags.macos);
  const std::string arch = variant.cpu == "aarch64" || variant.cpu == "arm64" ? "arm64" : variant.cpu;
  return assess_macos(objects, arch, macos_backend_floor(arch, variant.backend.kind == BackendKind::metal), requested);
}

// A Windows variant's extension modules must be PE images for its CPU.
void check_windows_objects(const Variant& variant, const PlannedWheel& plan) {
  const std::string want = variant.cpu == "x86_64" ? "amd64" : variant.cpu == "aarch64" || variant.cpu == "arm64" ? "arm64" : "";
  if (want.empty()) throw Error(ErrorKind::input, "variant '" + variant.str() + "': no Windows wheel tag for CPU '" + variant.cpu + "'");
  for (const auto& m : plan.contents.members) {
    if (!m.archive_path.ends_with(".pyd") && !m.archive_path.ends_with(".dll")) continue;
    if (!is_pe_file(m.source))
      throw Error(ErrorKind::input, "variant '" + variant.str() + "': '" + m.archive_path + "' is not a PE image; the build is broken or the file is not what its name says");
    const PeInfo pe = read_pe(m.source);
    if (auto why = load_refusal(pe)) throw unloadable(variant, m.archive_path, *why, "link it as a DLL (-shared, or link.exe /DLL)");
    if (pe.arch != want)
      throw Error(ErrorKind::policy, "variant '" + variant.str() + "': '" + m.archive_path + "' is a PE image for " + pe.arch + ", not " + want +
                                         "; rebuild it for " + want + " or build the variant that matches it");
  }
}

// CPython's platform part of an extension suffix on the variant's OS and CPU
// (sysconfig's SOABI / EXT_SUFFIX there).
std::string cpython_platform(const Variant& v) {
  const bool arm = v.cpu == "aarch64" || v.cpu == "arm64";
  if (v.os == "darwin") return "darwin";
  if (v.os == "windows") return arm ? "win_arm64" : "win_amd64";
  return (arm ? std::string("aarch64") : v.cpu) + "-linux-gnu";
}

// A module named for one CPython ("_C.cpython-310-x86_64-linux-gnu.so") is
// imported by that CPython alone: the wheel is tagged for it (cp310-cp310),
// not abi3, which pip would install on every Python 3 to fail at import.
// Names for two CPythons, for another platform, or below --min-python fit
// no one wheel and are refused (docs/wheel-naming.md, "Python/ABI").
void tag_for_named_cpython(const Variant& variant, PlannedWheel& plan, const BuildOptions& o) {
  const auto fail = [&](const std::string& member, std::string why) {
    std::string msg = "variant '";
    msg.append(variant.str()).append("': '").append(member).append("' ").append(why);
    return Error(ErrorKind::input, msg.append("; rename it to <module>.abi3.so if it uses only the stable ABI, or build one variant per Python"));
  };
  std::optional<CpythonSuffix> first;
  for (const auto& m : plan.contents.members) {
    const auto s = cpython_suffix(m.archive_path);
    if (!s) continue;
    if (s->platform != cpython_platform(variant))
      throw fail(m.archive_path, "is named for CPython on " + s->platform + ", which the " + variant.os + " " + variant.cpu + " CPython never imports");
    if (!first) {
      first = s;
      plan.cpython_module = m.archive_path;
    } else if (s->abi_tag() != first->abi_tag()) {
      throw fail(m.archive_path, "is named for " + s->abi_tag() + " and '" + plan.cpython_module + "' for " + first->abi_tag() + ": no one wheel is imported by both");
    }
  }
  if (!first) return;
  // compute_tags has checked --min-python is 3.N.
  if (first->minor < std::stoul(o.tags.min_python.substr(2)))
    throw fail(plan.cpython_module, "is named for " + first->abi_tag() + ", older than --min-python " + o.tags.min_python);
  plan.tags.python = first->python_tag();
  plan.tags.abi = first->abi_tag();
}

// The platform tag a Linux variant may claim, read from its ELF files the
// way auditwheel reads them: symbol versions, needed libraries, machine.
// A claim the evidence contradicts is an Error(policy) naming the symbol.
ManylinuxReport platform_evidence(const Variant& variant, const std::vector<ElfInfo>& elves, const PlannedWheel& plan, const BuildOptions& o) {
  ManylinuxOptions mo;
  mo.arch = variant.cpu == "arm64" ? "aarch64" : variant.cpu;
  mo.backend = variant.backend.name();
  // A stable-ABI variant runs on its torch and newer: the floor decides, as
  // its libraries are the ones every newer torch still ships.
  if (variant.framework == Framework::torch || variant.framework == Framework::torch_stable_abi) mo.torch_minor = variant.framework_version.str();
  if (variant.backend.version) mo.backend_major = variant.backend.version->major;
  if (o.tags.manylinux != "auto") mo.requested = "manylinux_" + o.tags.manylinux;
  mo.allowed_external = o.allowed_external;
  mo.require_abi3 = plan.tags.abi == "abi3";
  ManylinuxReport r = assess_manylinux(elves, mo);
  if (!r.ok())
    throw Error(ErrorKind::policy, "variant '" + variant.str() + "': " + r.problems.front() +
                                       (r.problems.size() > 1 ? " (and " + std::to_string(r.problems.size() - 1) + " more problem(s); see kwheel inspect)" : ""));
  return r;
}

// metadata.json's backend.archs is what kernels and users trust. An arch
// it names that no binary has code for is a broken build, refused here
// rather than found on the first call on that GPU; so is an object with
// code for none of the declared archs (stale, or its arch undeclared).
// Declared archs are judged against the union of the objects: packages
// ship one object per arch family (docs/gpu-evidence.md).
GpuEvidence audit_gpu_code(const Variant& variant, std::vector<ObjectGpuCode> objects, const PlannedWheel& plan) {
  GpuEvidence e = gpu_evidence(std::move(objects), plan.metadata ? plan.metadata->archs : std::vector<std::string>{});
  std::string why;
  if (!e.audit.missing.empty()) {
    why.append("metadata.json declares backend arch ").append(e.audit.missing.front()).append(" but no shared object carries code for it (");
    why.append(describe_objects(e.objects)).append("); rebuild the kernel for that arch or remove it from backend.archs");
  } else if (!e.outside_declared.empty()) {
    const std::string& file = e.outside_declared.front();
    const auto it = std::find_if(e.objects.begin(), e.objects.end(), [&](const ObjectGpuCode& o) { return o.file == file; });
    why.append(describe_objects({*it})).append(", which runs on none of metadata.json's backend.archs (").append(join(e.declared, ", "));
    why.append("); declare the arch it is built for, or leave the object out");
  }
  if (!why.empty()) throw Error(ErrorKind::policy, "variant '" + variant.str() + "': " + why);
  return e;
}

}  // namespace

void gather_evidence(const Variant& variant, PlannedWheel& plan, const BuildOptions& o) {
  if (variant.is_noarch()) return;
  tag_for_named_cpython(variant, plan, o);
  if (variant.os == "linux") {
    VariantObjects objects = read_objects(variant, plan);
    ManylinuxReport evidence = platform_evidence(variant, objects.elves, plan, o);
    plan.tags.platforms = split(evidence.compressed_tag, '.');
    plan.platform = evidence;
    plan.gpu = audit_gpu_code(variant, std::move(objects.gpu), plan);
  }
  if (variant.os == "darwin") {
    plan.macos = darwin_evidence(variant, plan, o);
    plan.tags.platforms = {plan.macos->platform_tag};
  }
  if (variant.os == "windows") check_windows_objects(variant, plan);
}

}  // namespace kwheel
