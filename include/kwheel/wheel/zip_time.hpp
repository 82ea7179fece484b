#pragma once
// The one timestamp every member of a wheel carries, as DOS time in UTC
// whatever the local time zone (wheel_writer.hpp): libzip converts with
// localtime(), so it is fed a shifted time_t and the written headers are
// stamped afterwards.
#include <ctime>

namespace kwheel {

inline constexpr std::time_t kZipEpoch = 315532800;  // 1980-01-01T00:00:00Z, the DOS epoch

// The local time_t whose local broken-down time is `utc`'s UTC one,
// clamped to what DOS time can hold.
std::time_t libzip_time_for(std::time_t utc);
// Stamps `utc` as DOS date and time over every local and central header of
// the archive open read-write at `fd`. Throws std::runtime_error on an
// archive it cannot walk.
void stamp_dos_time(int fd, std::time_t utc);

}  // namespace kwheel
