#include "kwheel/evidence/abi3.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "kwheel/base/enum_name.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/manylinux_data.hpp"

namespace kwheel {

StableAbi StableAbi::parse(std::string_view json_text, std::string_view origin) {
  StableAbi abi;
  try {
    const auto doc = nlohmann::json::parse(json_text.begin(), json_text.end());
    abi.python_ = doc.at("python").get<std::string>();
    abi.source_ = doc.value("source", std::string(origin));
    for (const auto& s : doc.at("symbols")) abi.names_.insert(s.at("name").get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::input, std::string(origin) + ": not a stable-ABI symbol list: " + e.what());
  }
  if (abi.names_.empty()) throw Error(ErrorKind::input, std::string(origin) + ": stable-ABI symbol list is empty");
  return abi;
}

const StableAbi& StableAbi::builtin() {
  static const StableAbi abi = parse(manylinux_data::stable_abi_json(), "built-in manylinux/stable_abi.json");
  return abi;
}

std::string_view to_string(Abi3Status status) {
  using S = Abi3Status;
  static constexpr EnumName<S> names[] = {
      {S::no_python_api, "no_python_api"}, {S::stable_abi_only, "stable_abi_only"}, {S::non_stable, "non_stable"}};
  return enum_name(status, names, "non_stable");
}

std::string CpythonSuffix::python_tag() const { return "cp3" + std::to_string(minor); }
std::string CpythonSuffix::abi_tag() const { return python_tag() + (free_threaded ? "t" : ""); }

std::optional<CpythonSuffix> cpython_suffix(std::string_view path) {
  // CPython's own spellings: SOABI ("cpython-310-x86_64-linux-gnu") before
  // ".so" on POSIX, "cp310-win_amd64" before ".pyd" on Windows.
  const std::string_view name = path.substr(path.rfind('/') + 1);
  const bool pyd = name.ends_with(".pyd");
  if (!pyd && !name.ends_with(".so")) return std::nullopt;
  const std::string_view stem = name.substr(0, name.size() - (pyd ? 4 : 3));
  const std::string_view prefix = pyd ? ".cp3" : ".cpython-3";
  const auto at = stem.find(prefix);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::string_view rest = stem.substr(at + prefix.size());
  CpythonSuffix s;
  std::size_t digits = 0;
  while (digits < rest.size() && digits < 3 && rest[digits] >= '0' && rest[digits] <= '9') s.minor = s.minor * 10 + static_cast<unsigned>(rest[digits++] - '0');
  if (digits == 0 || (digits > 1 && rest[0] == '0')) return std::nullopt;
  rest.remove_prefix(digits);
  if (rest.starts_with("t")) {
    s.free_threaded = true;
    rest.remove_prefix(1);
  }
  if (!rest.starts_with("-") || rest.size() < 2 || rest.find('.') != std::string_view::npos) return std::nullopt;
  s.platform = std::string(rest.substr(1));
  return s;
}

Abi3Report check_abi3(std::span<const ElfInfo> files, const StableAbi& abi) {
  Abi3Report report;
  report.python = abi.python();
  std::set<std::string> imported;
  for (const ElfInfo& f : files) {
    const std::string& file = f.name;
    for (const ElfSymbol& s : f.dynamic_symbols) {
      if (s.defined) continue;
      const std::string_view n = s.name;
      if (!(n.starts_with("Py") || n.starts_with("_Py"))) continue;
      imported.insert(s.name);
      if (!abi.contains(n)) report.non_stable.push_back({s.name, file});
    }
  }
  std::sort(report.non_stable.begin(), report.non_stable.end(),
            [](const Abi3Violation& a, const Abi3Violation& b) { return std::tie(a.symbol, a.file) < std::tie(b.symbol, b.file); });
  report.non_stable.erase(std::unique(report.non_stable.begin(), report.non_stable.end(),
                                      [](const Abi3Violation& a, const Abi3Violation& b) {
                                        return a.symbol == b.symbol && a.file == b.file;
                                      }),
                          report.non_stable.end());
  report.python_symbols = imported.size();
  if (!report.non_stable.empty()) {
    report.status = Abi3Status::non_stable;
  } else if (!imported.empty()) {
    report.status = Abi3Status::stable_abi_only;
  }
  return report;
}

}  // namespace kwheel
