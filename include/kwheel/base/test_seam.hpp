#pragma once
// Test seams, nothing else; unset, each costs one getenv per process.
//
// KWHEEL_TEST_OPEN_LOG=FILE: every wheel kwheel opens or hashes is appended
// to FILE, one path a line, so tests/integration/test_index_update.py can
// count what a second `kwheel index` reads (strace is not on every CI
// runner).
//
// KWHEEL_TEST_INTERRUPT_AT=POINT: at the named point kwheel sends itself
// SIGINT, as a Ctrl-C arriving at that instant would, so that a test can
// interrupt a run at a chosen step without racing it with sleeps.
#include <filesystem>

namespace kwheel {

void note_wheel_read(const std::filesystem::path& wheel);

// At POINT (when KWHEEL_TEST_INTERRUPT_AT names it): SIGINT to this process.
// With `then_wait`, the calling thread then waits for the cleanup to end the
// process (nothing after the point runs); without, it goes on (a point
// inside DeferInterrupts, where the signal must wait for the section).
void interrupt_point(const char* point, bool then_wait);

}  // namespace kwheel
