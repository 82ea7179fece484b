#include "kwheel/factory/build.hpp"

#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "kwheel/base/atomic_file.hpp"
#include "kwheel/factory/reuse_state.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/work_pool.hpp"
#include "kwheel/wheel/core_metadata.hpp"
#include "kwheel/wheel/deflate.hpp"
#include "kwheel/wheel/deflate_pool.hpp"
#include "kwheel/base/digest.hpp"
#include "kwheel/evidence/abi3.hpp"
#include "kwheel/evidence/elf.hpp"
#include "kwheel/base/enum_name.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/shared_object.hpp"
#include "kwheel/kernel/kernel_digest.hpp"
#include "kwheel/evidence/macos_tag.hpp"
#include "kwheel/evidence/manylinux.hpp"
#include "kwheel/evidence/pe.hpp"
#include "kwheel/base/mapped_file.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/kernel/variant.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

void check_options(const BuildOptions& o) {
  if (!o.name.empty() && !is_valid_name(o.name))
    throw Error(ErrorKind::usage, "--name '" + o.name + "' is not a valid distribution name (letters, digits, '-', '_', '.')");
  if (!o.tags.macos.empty() && !parse_macos_version(o.tags.macos))
    throw Error(ErrorKind::usage, "--macos '" + o.tags.macos + "' is not a macOS version; pass e.g. --macos 11.0");
  if (o.version.empty()) {
    if (!o.build_number)
      throw Error(ErrorKind::usage, "the wheels' version is unknown: pass --version X.Y.Z (or --wheel-version) for a directory build");
    return;
  }
  auto v = Version::try_parse(o.version);
  if (!v)
    throw Error(ErrorKind::usage, "--version '" + o.version + "' is not a PEP 440 version; pass e.g. --version 0.1.0");
  if (!v->local().empty())
    throw Error(ErrorKind::usage, "--version '" + o.version + "' has a local label; kwheel adds the torch/backend label itself, pass " + v->public_str());
}

// kernel-builder now names Linux variants without the C++ ABI tag, and one
// repo may carry both spellings of a build: they give one wheel name, and
// kernels prefers the tagless one, so that is the one built.
std::optional<std::string> tagless_twin(const std::string& variant) {
  auto parsed = try_parse_variant(variant);
  if (!parsed.variant || parsed.variant->is_noarch() || parsed.variant->framework != Framework::torch ||
      parsed.variant->cxx11_abi != std::optional<bool>(true))
    return std::nullopt;
  Variant tagless = *parsed.variant;
  tagless.cxx11_abi.reset();
  return tagless.str();
}

bool selected(const std::string& variant, const std::vector<std::string>& globs) {
  if (globs.empty()) return true;
  for (const auto& g : globs)
    if (::fnmatch(g.c_str(), variant.c_str(), 0) == 0) return true;
  return false;
}

std::string describe(const std::string& name, const std::string& package, const Variant& v) {
  return "Build variant `" + v.str() + "` of the " + name +
         " kernel, packaged as a wheel by kwheel.\n\nImport it with `import " + package +
         "`; it needs the torch and compute backend named in this wheel's local version label.\n";
}

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

std::string stat_identity(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return "missing";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":" +
         std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
}

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

void record_state(const fs::path& wheel, const ReuseState& state) {
  std::error_code ec;
  fs::create_directories(reuse_state_path(wheel).parent_path(), ec);
  if (ec) return;  // only an optimisation: the next build rewrites the wheel
  try {
    write_file_atomic(reuse_state_path(wheel), format_reuse_state(state));
  } catch (const Error&) {
  }
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

// The wheel in out_dir to keep instead of packing, if any. When the run
// reports digests and the one that wrote it took none, its digest is taken
// here and the state is also left in `taken`, for commit_build to record.
std::optional<ReuseState> kept_wheel(const fs::path& wheel, const std::string& fingerprint, const BuildOptions& o,
                                     std::optional<ReuseState>& taken) {
  auto state = o.reuse ? reusable(wheel, fingerprint) : std::nullopt;
  if (!state || !state->sha256.empty() || !o.write.digest) return state;
  taken = with_digest(wheel, *std::move(state));
  return taken;
}

// Packing hashed every member for RECORD; the digest is checked against
// those hashes, so a mismatch costs no second read and the staged wheel
// is discarded before it is ever visible.
void verify_digest(const VariantInput& input, const PlannedWheel& plan, const WrittenWheel& written) {
  std::map<std::string, std::string> known;
  for (const auto& e : written.record)
    if (auto it = plan.member_sources.find(e.path); it != plan.member_sources.end()) known[it->second] = e.hash;
  // metadata.json is outside its own digest: the packed copy must be the
  // bytes whose signature was verified and which were parsed, not a file
  // changed on disk since.
  if (auto packed = known.find("metadata.json"); packed != known.end() && packed->second != plan.metadata_record_hash)
    throw Error(ErrorKind::input, "variant '" + input.name + "': metadata.json changed while the build read it; run the build again");
  if (plan.metadata->digest) check_digest_hashes(*plan.metadata->digest, input, known);
}

// One repo is one kernel: its variants' wheels must share a name and a
// version, or an index would list them as different projects or releases.
void check_consistent(BuildReport& report, const std::vector<size_t>& todo) {
  const VariantResult* first = nullptr;
  for (auto i : todo) {
    auto& r = report.variants[i];
    if (r.status != VariantResult::Status::built) continue;
    if (!first) { first = &r; continue; }
    const std::string mine = Version::parse(r.version).public_str(), theirs = Version::parse(first->version).public_str();
    std::string what;
    if (normalize_name(r.dist_name) != normalize_name(first->dist_name)) what = "kernel name ('" + r.dist_name + "' vs '" + first->dist_name + "'); pass --name";
    else if (mine != theirs) what = "version (" + mine + " vs " + theirs + "); fix metadata.json or pass --wheel-version";
    if (what.empty()) continue;
    r.status = VariantResult::Status::failed;
    r.error = "variant '" + r.variant + "' disagrees with '" + first->variant + "' on the " + what;
    r.exit_code = static_cast<int>(ErrorKind::input);
  }
}

}  // namespace

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
  for (const auto& m : plan.contents.members) {
    field(m.archive_path);
    field(m.executable ? "x" : "-");
    field(stat_identity(m.source));
  }
  return to_hex(h.finish());
}

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

const RepoFile* find_signature(const VariantInput& input) {
  for (const auto& f : input.files)
    if (f.path == kSignatureFile) return &f;
  return nullptr;
}

// metadata.json, parsed only after its signature verified over the very
// bytes parsed (kernels' rule: never parse unverified metadata).
void read_signed_metadata(const VariantInput& input, const BuildOptions& o, PlannedWheel& plan) {
  const std::string where = "variant '" + input.name + "'";
  const RepoFile* md = find_metadata(input);
  const RepoFile* sig = find_signature(input);
  if (sig && !md)
    throw Error(ErrorKind::input, where + " has " + kSignatureFile + " but no metadata.json for it to sign; rebuild the kernel with a current kernel-builder");
  const std::string text = md ? read_kernel_metadata_text(md->source, where) : std::string();
  std::optional<std::string> bundle;
  if (sig) bundle = read_small_file(sig->source, kMaxSignatureBytes, where + ": " + kSignatureFile);
  plan.signature = check_metadata_signature(text, bundle, o.signatures, where + ": " + kSignatureFile, std::time(nullptr));
  if (!md) return;
  plan.metadata = parse_kernel_metadata(text, where);
  Hasher h;
  h.update(text);
  plan.metadata_record_hash = "sha256=" + urlsafe_b64_nopad(h.finish());
}

// docs/wheel-naming.md: a fixed version as given; an integer-versioned
// kernel's wheel is <N>.<build>, N from the commit's own metadata.json
// (else the vN branch), build the commit's position in its history.
std::string public_version(const VariantInput& input, const std::optional<KernelMetadata>& md, const BuildOptions& o) {
  if (!o.version.empty()) return Version::parse(o.version).public_str();
  const std::optional<uint64_t> n = md && md->version ? md->version : o.branch_version;
  if (!n)
    throw Error(ErrorKind::input, "variant '" + input.name + "' has no kernel version: " +
                                      std::string(md ? "its metadata.json has no 'version'" : "it has no metadata.json") +
                                      " and the revision was not reached through a vN branch; pass --version N to build branch vN, or --wheel-version X.Y.Z");
  return std::to_string(*n) + "." + std::to_string(*o.build_number);
}

std::string backend_of(const Variant& v, const std::optional<KernelMetadata>& md) {
  if (md && md->backend) return *md->backend;
  return v.is_noarch() ? v.noarch : v.backend.name();
}

std::string dist_name_of(const VariantLayout& layout, const std::optional<KernelMetadata>& md, const BuildOptions& o) {
  const std::string& own = !o.name.empty() ? o.name : md && md->name ? *md->name : layout.package;
  return o.name_prefix + own;
}

// The name a requirement is on: "torch==2.10.*" -> "torch".
std::string requirement_name(const std::string& requirement) {
  return normalize_name(requirement.substr(0, requirement.find_first_of("<>=!~;[ ")));
}

// kernel-depends after the framework and python-depends: one whose name is
// already required (org/torch -> "torch>=1,<2") would narrow or replace
// what the kernel needs to run, so it is refused, not merged.
void add_kernel_requirements(std::vector<std::string>& requires_dist, const KernelMetadata& md, const std::string& prefix, const std::string& where) {
  std::set<std::string> taken;
  for (const auto& r : requires_dist) taken.insert(requirement_name(r));
  for (auto& r : kernel_requirements(md, prefix)) {
    if (!taken.insert(requirement_name(r)).second)
      throw Error(ErrorKind::input, where + ": metadata.json field 'kernel-depends' would require '" + r + "', a project the wheel already requires " +
                                        "(its framework, a python-depends, or another kernel-depends of that name); pass --name-prefix so kernel wheels have names of their own");
    requires_dist.push_back(std::move(r));
  }
}

// `kwheel verify` binds a verified signature's name and version to the
// wheel (docs/security.md, "What verify holds to what"): a wheel named or
// versioned against them would be written here and refused there, and the
// build table would call it signed. --name-prefix keeps the signed name as
// the ending, so it binds; a --name or --version that drops it does not.
void check_signed_identity(const PlannedWheel& plan, const std::string& version, const std::string& where) {
  if (!plan.signature.result || !plan.metadata) return;
  const KernelMetadata& md = *plan.metadata;
  if (md.name && !normalize_name(plan.dist_name).ends_with(normalize_name(*md.name)))
    throw Error(ErrorKind::input, where + ": the wheel would be named '" + plan.dist_name + "', but metadata.json is signed for the kernel '" + *md.name +
                                      "', and kwheel verify refuses a signed kernel under another name; build it without --name (--name-prefix keeps the name)");
  const Version v = Version::parse(version);
  if (md.version && (v.epoch() != 0 || v.release().front() != static_cast<long long>(*md.version)))
    throw Error(ErrorKind::input, where + ": the wheel would be version " + version + ", but metadata.json is signed for kernel version " +
                                      std::to_string(*md.version) + ", and kwheel verify refuses another version; pass a version " +
                                      std::to_string(*md.version) + ".B (or none)");
}

CoreMetadata core_metadata(const PlannedWheel& plan, const Variant& variant, const BuildOptions& o, const std::string& where) {
  CoreMetadata md;
  md.name = plan.dist_name;
  md.version = plan.version;
  md.summary = plan.dist_name + " kernel for " + (variant.is_noarch() ? "torch (" + variant.noarch + ", pure Python)" : variant.str());
  md.requires_python = variant.is_noarch() ? ">=3.9" : ">=" + o.tags.min_python;
  if (!plan.cpython_module.empty()) md.requires_python = "==3." + plan.tags.python.substr(3) + ".*";
  md.requires_dist = {plan.tags.requires_dist};
  if (plan.metadata) {
    for (auto& r : python_requirements(*plan.metadata, backend_of(variant, plan.metadata), where)) md.requires_dist.push_back(r);
    add_kernel_requirements(md.requires_dist, *plan.metadata, o.name_prefix, where);
    if (plan.metadata->license) md.license = *plan.metadata->license;
    if (plan.metadata->upstream)
      if (auto url = browsable_url(*plan.metadata->upstream)) md.project_urls.emplace_back("Upstream", *url);
    if (plan.metadata->source)
      if (auto url = browsable_url(*plan.metadata->source)) md.project_urls.emplace_back("Source", *url);
  }
  if (!o.source.url.empty()) md.project_urls.emplace_back(kHubRevisionLabel, o.source.url);
  md.description = describe(plan.dist_name, plan.package, variant);
  return md;
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
  if (!variant.is_noarch()) tag_for_named_cpython(variant, plan, o);
  if (!variant.is_noarch() && variant.os == "linux") {
    VariantObjects objects = read_objects(variant, plan);
    ManylinuxReport evidence = platform_evidence(variant, objects.elves, plan, o);
    plan.tags.platforms = split(evidence.compressed_tag, '.');
    plan.platform = evidence;
    plan.gpu = audit_gpu_code(variant, std::move(objects.gpu), plan);
  }
  if (!variant.is_noarch() && variant.os == "darwin") {
    plan.macos = darwin_evidence(variant, plan, o);
    plan.tags.platforms = {plan.macos->platform_tag};
  }
  if (!variant.is_noarch() && variant.os == "windows") check_windows_objects(variant, plan);
  const std::string dist = wheel_name_component(plan.dist_name);
  plan.contents.dist_info = dist + "-" + plan.version + ".dist-info";
  plan.filename = dist + "-" + plan.version + "-" + plan.tags.str() + ".whl";
  plan.contents.metadata = render_metadata(core_metadata(plan, variant, o, "variant '" + input.name + "'"));
  plan.contents.wheel = render_wheel_file(plan.tags, std::string("kwheel ") + KWHEEL_VERSION);
  return plan;
}

namespace {

// Which variants this run builds (their indices); the others are marked
// filtered in the report, with the reason when it is not --variant.
std::vector<size_t> select_variants(const std::vector<VariantInput>& variants, const BuildOptions& o, BuildReport& report) {
  report.variants.resize(variants.size());
  std::vector<size_t> todo;
  std::set<std::string> names;
  for (const auto& v : variants) names.insert(v.name);
  for (size_t i = 0; i < variants.size(); ++i) {
    auto& r = report.variants[i];
    r.variant = variants[i].name;
    if (auto twin = tagless_twin(variants[i].name); twin && names.count(*twin)) {
      r.status = VariantResult::Status::filtered;
      r.error = "superseded by " + *twin + " (the same build without the ABI tag; kernels 0.17 loads that one)";
    } else if (selected(variants[i].name, o.variant_globs)) {
      todo.push_back(i);
    } else {
      r.status = VariantResult::Status::filtered;
    }
  }
  if (todo.empty()) {
    std::string available;
    for (const auto& v : variants) available += (available.empty() ? "" : ", ") + v.name;
    throw Error(ErrorKind::not_found, variants.empty() ? "the repo has no variants under build/"
                                                       : "no variant matches --variant; available: " + available);
  }
  return todo;
}

void prepare_out_dir(const fs::path& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw Error(ErrorKind::io, "cannot create output directory '" + out_dir.string() + "': " + ec.message());
  // No sweep here: a directory is swept by the first scratch this run makes
  // in it (scratch_owner.hpp), so a run that writes nothing touches nothing.
}

// One variant's wheel, planned and staged (or an up-to-date one in out_dir
// kept); a failure is the variant's, recorded in its report.
void stage_variant(const VariantInput& input, const BuildOptions& o, StagedBuild& build, size_t i) {
  VariantResult& r = build.report.variants[i];
  try {
    if (o.await_inputs) o.await_inputs(input);
    PlannedWheel plan = plan_wheel(input, o);
    r.tags = plan.tags;
    r.version = plan.version;
    r.package = plan.package;
    r.dist_name = plan.dist_name;
    r.layout = layout_name(plan.layout);
    r.metadata = plan.metadata;
    r.signature = plan.signature;
    r.ignored = plan.ignored;
    r.platform = plan.platform;
    r.gpu = plan.gpu;
    r.macos = plan.macos;
    r.cpython_module = plan.cpython_module;
    r.wheel = o.out_dir / plan.filename;
    build.fingerprints[i] = input_fingerprint(plan, o);
    if (auto state = kept_wheel(r.wheel, build.fingerprints[i], o, build.digests_taken[i])) {
      r.sha256 = state->sha256;
      r.size = state->size;
      r.reused = true;
    } else {
      StagedWheel& staged = build.staged[i];
      staged = stage_wheel(plan.contents, r.wheel, o.write);
      if (plan.metadata) verify_digest(input, plan, staged.info);
      r.sha256 = staged.info.sha256;
      r.size = staged.info.size;
    }
    r.status = VariantResult::Status::built;
  } catch (const Error& e) {
    r.status = VariantResult::Status::failed;
    r.error = e.what();
    r.exit_code = e.exit_code();
  }
}

// Runs task(0) .. task(count - 1) on `jobs` threads (0: one per CPU), this
// one included; returns when all are done.
void run_parallel(size_t count, unsigned jobs, const std::function<void(size_t)>& task) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k; (k = next.fetch_add(1)) < count;) task(k);
  };
  jobs = resolve_workers(jobs);
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(count));
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < jobs; ++t) pool.emplace_back(worker);
  worker();
}

// Two variants that map to one filename would overwrite each other.
void check_distinct_names(BuildReport& report, const std::vector<size_t>& todo) {
  std::map<fs::path, std::string> owners;
  for (auto i : todo) {
    auto& r = report.variants[i];
    if (r.status != VariantResult::Status::built) continue;
    auto [it, fresh] = owners.emplace(r.wheel, r.variant);
    if (!fresh) {
      r.status = VariantResult::Status::failed;
      r.error = "variant '" + r.variant + "' gives the same wheel name as '" + it->second + "' (" + r.wheel.filename().string() + ")";
      r.exit_code = static_cast<int>(ErrorKind::input);
    }
  }
}

}  // namespace

StagedBuild stage_build(const std::vector<VariantInput>& variants, const BuildOptions& options) {
  check_options(options);
  // Writers share one deflate pool: the caller's (a pipeline's, for all its
  // kernels), else one of `jobs` workers for this build.
  BuildOptions o = options;
  const RunPool pool(o.write.pool, o.write.compression_level, o.jobs);
  o.write.pool = pool.get();
  StagedBuild build;
  build.todo = select_variants(variants, o, build.report);
  prepare_out_dir(o.out_dir);
  build.staged.resize(variants.size());
  build.fingerprints.resize(variants.size());
  build.digests_taken.resize(variants.size());
  // One writer more than the pool has workers: writers of equal-sized
  // wheels finish together, and while they close, hash and rename their
  // archives the spare one keeps the workers fed. Stored members (no pool)
  // are the writers' own work: `jobs` of them.
  const unsigned writers = resolve_workers(o.jobs) + (pool.get() ? 1 : 0);
  run_parallel(build.todo.size(), writers, [&](size_t k) {
    const size_t i = build.todo[k];
    stage_variant(variants[i], o, build, i);
  });
  check_consistent(build.report, build.todo);
  check_distinct_names(build.report, build.todo);
  return build;
}

void commit_build(StagedBuild& build) {
  for (auto i : build.todo) {
    auto& r = build.report.variants[i];
    if (r.reused) {
      // Only if the wheel is still the one hashed: another run into this
      // out_dir may have replaced it since.
      const auto& taken = build.digests_taken[i];
      if (taken && stat_identity(r.wheel) == taken->wheel_identity) record_state(r.wheel, *taken);
      continue;
    }
    build.staged[i].commit();
    record_state(r.wheel, {build.fingerprints[i], stat_identity(r.wheel), r.sha256, r.size});
  }
  build.report.committed = true;
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
