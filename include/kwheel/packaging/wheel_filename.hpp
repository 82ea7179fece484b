#pragma once
// Wheel filenames (the binary distribution format spec):
// {name}-{version}(-{build})?-{python tags}-{abi tags}-{platform tags}.whl,
// each tag part a '.'-joined set.
#include <optional>
#include <string>
#include <vector>

namespace kwheel {

struct WheelFilename {
  std::string name;     // as written (escaped): img2gray
  std::string version;  // as written: 0.1.0+torch2.7.cu126
  std::optional<std::string> build;
  std::vector<std::string> python, abi, platform;
  // Every python-abi-platform combination.
  std::vector<std::string> tags() const;
};

// Throws Error(input) naming the file and what is malformed.
WheelFilename parse_wheel_filename(const std::string& filename);

}  // namespace kwheel
