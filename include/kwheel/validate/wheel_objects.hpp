#pragma once
// The shared objects of a wheel, read one at a time out of the archive, and
// what each one says: ELF facts and GPU code (Linux) or Mach-O facts
// (macOS). `inspect` reads all of it; validate only the GPU code, to judge a
// CUDA wheel against the GPU before installing it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "kwheel/evidence/elf.hpp"
#include "kwheel/evidence/gpu_code.hpp"
#include "kwheel/evidence/macho.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {

// The largest shared object extracted from a wheel (kernels' objects are a
// few hundred MB); larger ones are refused by name.
inline constexpr uint64_t kMaxInspectedObjectBytes = 4ull << 30;

// What the objects of a wheel or a file say, object by object.
struct ObjectFacts {
  std::vector<ElfInfo> elves;
  std::vector<ObjectGpuCode> gpu;  // one per ELF object, GPU code or not
  std::vector<MachOInfo> machos;
};

// One object's ELF facts and GPU code, from one mapping, or its Mach-O
// facts; reports name it `name` (the wheel member, not a temp file).
void read_object(const std::filesystem::path& file, const std::string& name, ObjectFacts& out);

// Calls `read(file, member)` for each shared object of the wheel, and each
// ELF or Mach-O executable among its scripts (is_wheel_script), in member
// order, extracted alone to a scratch file (at most kMaxInspectedObjectBytes)
// that is removed once read: the scratch space is one member, whatever the
// wheel holds. Throws Error(input) for a member named like a shared object
// that is neither ELF nor Mach-O.
void for_each_wheel_object(const WheelArchive& wheel,
                           const std::function<void(const std::filesystem::path& file, const std::string& member)>& read);

// The GPU code of every ELF object in a wheel. Objects up to
// kInMemoryObjectBytes are read from the archive into memory (no scratch
// directory, file or mapping: kwheel index reads thousands of wheels); a
// wheel with a larger one streams each to a scratch file, as above.
inline constexpr uint64_t kInMemoryObjectBytes = 32ull << 20;
std::vector<ObjectGpuCode> wheel_gpu_code(const WheelArchive& wheel);

}  // namespace kwheel
