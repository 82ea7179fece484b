#pragma once
// The platform evidence of a wheel or a shared object: what its ELF files
// need (symbol versions per library, external libraries), which manylinux
// policy that satisfies, and its abi3 status.
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include "kwheel/evidence/gpu_code.hpp"
#include "kwheel/kernel/kernel_metadata.hpp"
#include "kwheel/kernel/kernel_signature.hpp"
#include "kwheel/evidence/macos_tag.hpp"
#include "kwheel/evidence/manylinux.hpp"
#include "kwheel/packaging/wheel_variant.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {

struct InspectOptions {
  std::set<std::string> allowed_external;
  std::string backend;  // "" accepts any backend's torch libraries
  SignatureOptions signatures;  // whose signatures count (require is not used)
};

struct Inspection {
  std::string kind;                 // "wheel" or "shared object"
  std::vector<std::string> files;   // the ELF members inspected
  std::string current_tags;         // the wheel's platform tags, "" for a .so
  bool tagged_abi3 = false;
  ManylinuxReport report;
  GpuEvidence gpu;                  // GPU code per object, against the kernel's backend.archs
  // macOS wheels and objects (Mach-O): the minimum macOS per object and the
  // tag they need; `report` is then empty. A wheel tagged below what its
  // objects need has a problem here.
  std::optional<MacosReport> macos;
  std::vector<std::string> macos_problems;
  // A wheel kwheel built: its metadata.json's signature, verified again
  // from the wheel (nullopt: no metadata.json); a bundle that does not
  // verify leaves `kernel` unread and says why here.
  std::optional<SignatureVerdict> signature;
  std::string signature_error;
  // A PEP 825 variant wheel: its label and the properties its
  // <dist-info>/variant.json gives that label; a variant.json that is
  // missing, malformed or about another label is a problem.
  std::optional<std::string> variant_label;
  VariantProperties variant_properties;
  std::string variant_problem;
  bool ok() const {
    return report.ok() && macos_problems.empty() && gpu.audit.missing.empty() && gpu.outside_declared.empty() && signature_error.empty() &&
           variant_problem.empty();
  }
  // Wheels kwheel built from a kernel repo: the metadata.json they carry
  // (backend, archs, kernel version) and the Hub commit they record.
  std::optional<KernelMetadata> kernel;
  std::optional<std::pair<std::string, std::string>> revision;  // repo id, commit
};

// Throws Error(input) for a file that is neither a wheel nor an ELF or
// Mach-O object,
// or a wheel that holds no ELF file.
Inspection inspect_path(const std::filesystem::path& path, const InspectOptions& options);

}  // namespace kwheel
