#include <algorithm>

#include "cli.hpp"
#include "kwheel/base/error.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

std::vector<fs::path> wheel_files(const std::vector<std::string>& inputs) {
  const std::vector<std::string> names = wheel_file_names(inputs);
  return {names.begin(), names.end()};
}

std::vector<std::string> wheel_file_names(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(in))
        if (e.is_regular_file() && e.path().extension() == ".whl" && !e.path().filename().string().starts_with(".")) found.push_back(e.path().string());
      if (found.empty()) throw Error(ErrorKind::not_found, "directory '" + in + "' holds no .whl file; build some with `kwheel build`");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(in, ec)) {
      if (fs::path(in).extension() != ".whl") throw Error(ErrorKind::input, "'" + in + "' is not a wheel (a .whl file)");
      out.emplace_back(in);
    } else {
      throw Error(ErrorKind::not_found, "'" + in + "' is neither a wheel file nor a directory of wheels");
    }
  }
  return out;
}

}  // namespace kwheel::cli
