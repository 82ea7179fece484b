#pragma once
// From a build variant to a wheel's compatibility tags, local version label
// and framework requirement. The scheme and its reasons are in
// docs/wheel-naming.md.
#include <optional>
#include <string>
#include <vector>

#include "kwheel/kernel/variant.hpp"

namespace kwheel {

struct TagOptions {
  std::string min_python = "3.9";   // cp39-abi3 for native variants
  // glibc floor of linux platform tags: "auto" lets the ELF evidence decide
  // (the build fills WheelTags::platforms); "2_28" claims that policy and
  // the build fails if the evidence needs a newer one.
  std::string manylinux = "auto";
  // macOS floor of darwin tags: "" lets the Mach-O evidence decide (the
  // build fills WheelTags::platforms); "11.0" claims it, and the build fails
  // if an object needs a newer macOS.
  std::string macos;
};

struct WheelTags {
  std::string python;                  // "cp39" or "py3"
  std::string abi;                     // "abi3" or "none"
  std::vector<std::string> platforms;  // "manylinux_2_28_x86_64", or "any"
  std::string local_label;             // "torch2.10.cu130"; empty for torch-universal
  std::string requires_dist;           // "torch==2.10.*", "torch"
  bool purelib = false;

  // "cp39-abi3-manylinux_2_28_x86_64" (compressed tag set, dot-joined).
  std::string str() const;
  // One "py-abi-plat" per platform, the WHEEL file's Tag lines.
  std::vector<std::string> expanded() const;
};

// Throws Error(usage) for a malformed --min-python or --manylinux value.
WheelTags compute_tags(const Variant& variant, const TagOptions& options);

// "torch2.10.cu130": numeric segments so PEP 440 orders torch 2.10 above 2.9.
std::string local_label(const Variant& variant);

// "x86_64" -> manylinux CPU names; darwin/windows spell them differently.
std::string platform_tag(const Variant& variant, const std::string& manylinux);

}  // namespace kwheel
