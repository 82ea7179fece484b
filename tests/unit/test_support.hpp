#pragma once
// Helpers the unit tests (and the wheel fuzz target) share: a temp
// directory, a scoped environment variable, a whole-file reader, a file's
// sha256 from coreutils, a writer of arbitrary (even hostile) wheels, and a
// typical interpreter to decide against.
#include <stdlib.h>
#include <time.h>
#include <zip.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "file_support.hpp"
#include "kwheel/base/digest.hpp"
#include "kwheel/packaging/record.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/validate/validate.hpp"

namespace kwheel::testing {

// Sets (or, with nullptr, unsets) an environment variable for one scope and
// restores it after; tzset() so that a TZ change reaches localtime().
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
    ::tzset();
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
    ::tzset();
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The interpreter most tests decide against: CPython 3.11 on x86_64 Linux
// with glibc 2.36 (Debian 12's), and the given torch and CUDA.
inline InterpreterInfo linux_cpython311(std::string torch, std::optional<std::string> cuda = std::nullopt) {
  InterpreterInfo in;
  in.executable = "/usr/bin/python3";
  in.python = "3.11";
  in.implementation = "cpython";
  in.machine = "x86_64";
  in.system = "linux";
  in.glibc = "2.36";
  in.torch = std::move(torch);
  in.cuda = std::move(cuda);
  return in;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// sha256 hex of a file from coreutils' sha256sum, not from kwheel's own hasher.
inline std::string sha256sum(const std::filesystem::path& p) {
  const std::string cmd = "sha256sum '" + p.string() + "'";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), &::pclose);
  if (!pipe) throw std::runtime_error("popen failed");
  char buf[65] = {};
  if (std::fread(buf, 1, 64, pipe.get()) != 64) throw std::runtime_error("sha256sum failed for " + p.string());
  return std::string(buf, 64);
}

// A zip at `path` holding `files` as given (any names, in order) plus a
// RECORD, at `record`, listing each with its true hash and size: what a wheel
// kwheel did not write may look like.
inline void write_test_wheel(const std::filesystem::path& path, const std::vector<std::pair<std::string, std::string>>& files,
                             const std::string& record) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) throw std::runtime_error("zip_open failed");
  std::string rows;
  auto add = [&](const std::string& name, const std::string& data) {
    zip_source_t* src = zip_source_buffer(z, data.data(), data.size(), 0);
    if (!src || zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8) < 0) throw std::runtime_error("zip_file_add failed");
  };
  std::vector<std::string> keep;  // libzip reads the buffers at zip_close
  keep.reserve(files.size() + 1);
  for (const auto& [name, data] : files) {
    Hasher h;
    h.update(data);
    rows += record_line({name, "sha256=" + urlsafe_b64_nopad(h.finish()), data.size()});
    add(name, keep.emplace_back(data));
  }
  rows += record_line({record, "", std::nullopt});
  add(record, keep.emplace_back(rows));
  if (zip_close(z) != 0) throw std::runtime_error("zip_close failed");
}

}  // namespace kwheel::testing
