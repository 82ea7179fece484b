// The DOS timestamps of a wheel's members, the same in every time zone:
// split from the writer, which is about members and RECORD.
#include "kwheel/wheel/zip_time.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include <unistd.h>

namespace kwheel {
namespace {

constexpr std::time_t kZipLatest = 4354819198;        // 2107-12-31T23:59:58Z

// DOS date and time (APPNOTE 4.4.6) of a UTC instant, already clamped.
std::pair<uint16_t, uint16_t> dos_date_time(std::time_t utc) {
  utc = std::clamp(utc, kZipEpoch, kZipLatest);
  std::tm tm{};
  gmtime_r(&utc, &tm);
  return {static_cast<uint16_t>((tm.tm_year - 80) << 9 | (tm.tm_mon + 1) << 5 | tm.tm_mday),
          static_cast<uint16_t>(tm.tm_hour << 11 | tm.tm_min << 5 | tm.tm_sec / 2)};
}

uint64_t le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

}  // namespace

// libzip converts a time_t to DOS time with localtime(); pypa/wheel takes
// the UTC broken-down time. Feeding libzip the local time_t whose local
// broken-down time equals the UTC one makes archives identical in any TZ.
std::time_t libzip_time_for(std::time_t utc) {
  utc = std::clamp(utc, kZipEpoch, kZipLatest);
  std::tm tm{};
  gmtime_r(&utc, &tm);
  tm.tm_isdst = -1;
  return std::mktime(&tm);
}

// libzip (1.7) turns a time_t into DOS time with localtime(), and every
// libzip API that sets it goes through mktime(): a UTC time that falls in a
// local DST gap (02:30 on a spring-forward day) cannot be expressed. So the
// written archive's local and central headers get the UTC DOS time stamped
// over whatever libzip wrote; the CRC does not cover these fields.
void stamp_dos_time(int fd, std::time_t utc) {
  const auto [date, time] = dos_date_time(utc);
  auto pread_all = [fd](void* buf, size_t n, uint64_t off) {
    if (::pread(fd, buf, n, static_cast<off_t>(off)) != static_cast<ssize_t>(n)) throw std::runtime_error("short read");
  };
  auto pwrite_all = [fd](const void* buf, size_t n, uint64_t off) {
    if (::pwrite(fd, buf, n, static_cast<off_t>(off)) != static_cast<ssize_t>(n)) throw std::runtime_error("short write");
  };
  const off_t end = ::lseek(fd, 0, SEEK_END);
  unsigned char eocd[22];
  if (end < 22) throw std::runtime_error("archive too short");
  pread_all(eocd, 22, static_cast<uint64_t>(end) - 22);
  if (le(eocd, 4) != 0x06054b50) throw std::runtime_error("no end of central directory record");
  uint64_t count = le(eocd + 10, 2), cd_size = le(eocd + 12, 4), cd_off = le(eocd + 16, 4);
  if (count == 0xffff || cd_size == 0xffffffff || cd_off == 0xffffffff) {  // ZIP64 (APPNOTE 4.3.14, 4.3.15)
    unsigned char loc[20], z64[56];
    pread_all(loc, 20, static_cast<uint64_t>(end) - 42);
    if (le(loc, 4) != 0x07064b50) throw std::runtime_error("no ZIP64 locator");
    pread_all(z64, 56, le(loc + 8, 8));
    if (le(z64, 4) != 0x06064b50) throw std::runtime_error("no ZIP64 end of central directory record");
    count = le(z64 + 32, 8), cd_size = le(z64 + 40, 8), cd_off = le(z64 + 48, 8);
  }
  std::vector<unsigned char> cd(cd_size);
  pread_all(cd.data(), cd.size(), cd_off);
  const unsigned char stamp[4] = {uint8_t(time), uint8_t(time >> 8), uint8_t(date), uint8_t(date >> 8)};
  size_t o = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (o + 46 > cd.size() || le(&cd[o], 4) != 0x02014b50) throw std::runtime_error("bad central directory");
    const size_t name = le(&cd[o + 28], 2), extra = le(&cd[o + 30], 2), comment = le(&cd[o + 32], 2);
    if (o + 46 + name + extra + comment > cd.size()) throw std::runtime_error("bad central directory");
    uint64_t local = le(&cd[o + 42], 4);
    if (local == 0xffffffff) {  // in the ZIP64 extra field, after the sizes that overflowed
      for (size_t x = o + 46 + name; x + 4 <= o + 46 + name + extra;) {
        const size_t id = le(&cd[x], 2), len = le(&cd[x + 2], 2);
        if (id == 1) {
          size_t at = x + 4 + (le(&cd[o + 24], 4) == 0xffffffff ? 8 : 0) + (le(&cd[o + 20], 4) == 0xffffffff ? 8 : 0);
          if (at + 8 > x + 4 + len) throw std::runtime_error("bad ZIP64 extra field");
          local = le(&cd[at], 8);
        }
        x += 4 + len;
      }
    }
    std::memcpy(&cd[o + 12], stamp, 4);
    pwrite_all(stamp, 4, local + 10);
    o += 46 + name + extra + comment;
  }
  pwrite_all(cd.data(), cd.size(), cd_off);
}

}  // namespace kwheel
