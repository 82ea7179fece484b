#pragma once
// How a wheel says it is a Hub kernel, in what an index serves of it: its
// METADATA, which PEP 658 serves beside the wheel. kwheel writes the
// standard core-metadata field Keywords with kKernelKeyword among its
// values (comma-separated, as the core metadata spec and packaging read
// it). `kwheel pin SOURCE` without --name pins only the projects whose
// METADATA says so, and leaves the rest (their dependencies, other
// packages of a team index) to the resolver or out (docs/wheel-naming.md,
// "The kernel marker").
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {

inline constexpr const char* kKernelKeyword = "hf-kernel";

// Whether METADATA marks a kernel: a Keywords value holding kKernelKeyword
// (ASCII case ignored), or, for wheels kwheel wrote before it wrote the
// keyword, the "Hub revision" Project-URL it has always recorded for a
// build from the Hub (recorded_revision()).
bool marks_kernel(const MetadataFields& fields);

}  // namespace kwheel
