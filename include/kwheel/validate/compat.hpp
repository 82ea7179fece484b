#pragma once
// Which wheel fits which environment, decided from the wheel's filename
// alone: its compatibility tags and kwheel's local version label
// (docs/wheel-naming.md). `kwheel validate` adds what only the archive can
// say (Requires-Dist); `kwheel pin` has nothing but an index's filenames;
// `kwheel index` groups wheels into per-variant sub-indexes by the label.
#include <optional>
#include <string>

#include "kwheel/validate/interpreter.hpp"
#include "kwheel/kernel/variant.hpp"
#include "kwheel/packaging/wheel_filename.hpp"

namespace kwheel {


// kwheel's label segments read back: "torch2.7.cu126", "torch2.7.cu126.cxx98",
// "torchstableabi2.9.cu126", "tvmffi0.1.cpu", a noarch backend ("cuda",
// "cpu"), or nothing (torch-universal). Foreign labels yield what they match.
struct LocalLabel {
  std::string text;                        // the label as written, "" if none
  std::string framework;                   // "torch", "torchstableabi", "tvmffi"; "" otherwise
  std::optional<MajorMinor> framework_version;
  std::string backend;                     // "cu126", "cpu", "rocm63", "xpu", or the noarch backend
  std::optional<std::string> cuda;         // "12.6" for cu126
  bool rocm = false, cpu = false, cxx98 = false;
  bool noarch = false;                     // a torch-<backend> pure-Python build: label is the backend alone

  bool universal() const { return text.empty(); }
  bool is_kwheel() const { return !framework.empty() || noarch; }
  // The sub-index a kwheel site files the wheel under: "torch2.7-cu126",
  // "torch1.13-cpu", "torch2.7-cu126-cxx98", "cuda" (noarch); "" for a
  // universal or foreign label.
  std::string index_name() const;
  // For people: "torch 2.7, CUDA 12.6"; "torch-universal (any torch)".
  std::string describe() const;
};

LocalLabel read_label(const std::string& version);

// Why a wheel with this filename cannot run with `env` on `device` ("auto",
// "cuda", "cpu"), or nullopt. The label's backend must fit the backend
// kernels selects for `env` (validate/backend_rule: a CPU build does not fit
// a CUDA torch unless --device cpu), and the reason is then kernels' own
// sentence. Fields of `env` left empty are not checked:
// an unknown Python version skips the Python tags, an empty `system` the
// platform tags (how `kwheel pin --torch X.Y --cuda X.Y` describes a target).
std::optional<std::string> filename_incompatibility(const WheelFilename& wheel, const InterpreterInfo& env, const std::string& device);

// The part of filename_incompatibility a PEP 825 variant wheel is judged
// by (its GPU fit is its variant properties'): Python and platform tags,
// and the torch version of its label.
std::optional<std::string> tags_and_torch_incompatibility(const WheelFilename& wheel, const InterpreterInfo& env);

// Why a build variant cannot run with `env`, or nullopt: the wheel kwheel
// would build from it (its label, Python tags and platform), judged by
// filename_incompatibility. What only the binaries say (the glibc floor,
// the GPU code) is not known from a name, nor is torch's C++ ABI, which
// the probe reads without importing torch: those are not checked.
std::optional<std::string> variant_incompatibility(const Variant& variant, const InterpreterInfo& env);

// "2.7" from "2.7.1+cu126" or "1.13.0a0"; nullopt if it does not start with N.N.
std::optional<MajorMinor> leading_major_minor(const std::string& version);

}  // namespace kwheel
