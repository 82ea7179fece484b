#pragma once
// A test seam, nothing else: with KWHEEL_TEST_OPEN_LOG=FILE in the
// environment, every wheel kwheel opens or hashes is appended to FILE, one
// path a line, so tests/integration/test_index_update.py can count what a
// second `kwheel index` reads (strace is not on every CI runner). Unset,
// it costs one getenv per process.
#include <filesystem>

namespace kwheel {

void note_wheel_read(const std::filesystem::path& wheel);

}  // namespace kwheel
