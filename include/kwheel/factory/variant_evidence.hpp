#pragma once
// What a variant's own files say about where its wheel runs, read before
// the wheel is named: its Linux objects' ELF facts (the manylinux tag, as
// auditwheel reads them) and GPU code (audited against metadata.json's
// backend.archs), its Mach-O files' minimum macOS, its PE images' CPU, and
// a module named for one CPython. An object Python or the loader would
// refuse, or a claim the evidence contradicts, fails the variant.
#include "kwheel/factory/build.hpp"
#include "kwheel/kernel/variant.hpp"

namespace kwheel {

// Fills plan.tags (platforms; python and abi for a module named for one
// CPython), plan.platform, plan.gpu, plan.macos and plan.cpython_module
// from the planned members; a noarch variant has no evidence to read.
// Throws Error(input) for a file that is not what its name says or would
// not load, Error(policy) for a tag or arch the evidence contradicts.
void gather_evidence(const Variant& variant, PlannedWheel& plan, const BuildOptions& o);

}  // namespace kwheel
