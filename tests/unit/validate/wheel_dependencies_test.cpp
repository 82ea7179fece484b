// A kernel wheel's Requires-Dist on its way to pip in `validate`: only PEP
// 508 requirements pass, each in the one form pip is handed, and pip gets
// them after "--".
#include "kwheel/validate/wheel_dependencies.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "test_support.hpp"

namespace kwheel {
namespace {

namespace fs = std::filesystem;
using testing::error_of;

fs::path wheel_requiring(const fs::path& dir, const std::vector<std::string>& requires_dist) {
  std::string metadata = "Metadata-Version: 2.1\nName: depkern\nVersion: 0.1.0\n";
  for (const auto& r : requires_dist) metadata += "Requires-Dist: " + r + "\n";
  const fs::path path = dir / "depkern-0.1.0-py3-none-any.whl";
  testing::write_test_wheel(path, {{"depkern/__init__.py", ""}, {"depkern-0.1.0.dist-info/METADATA", metadata}}, "depkern-0.1.0.dist-info/RECORD");
  return path;
}

TEST(WheelDependencies, RequirementsReachPipInOneFormTorchLeftOut) {
  const TempDir dir("deps");
  const WheelArchive w(wheel_requiring(dir.path(), {"torch>=2.0", "einops>=0.7", "Foo.Bar[x] ; python_version >= \"3.9\"", "x.whl"}));
  EXPECT_EQ(runtime_requirements(w), (std::vector<std::string>{"einops (>=0.7)", "foo-bar[x] ; python_version >= \"3.9\"", "x-whl"}));
}

TEST(WheelDependencies, ARequiresDistThatIsNotARequirementNamesTheWheelAndTheValue) {
  const TempDir dir("deps");
  for (const std::string value : {"--find-links=http://127.0.0.1:9/", "--log=/tmp/x", "evil @ http://127.0.0.1:9/e.whl", "evil===x.whl"}) {
    const WheelArchive w(wheel_requiring(dir.path(), {"einops", value}));
    const std::string why = error_of([&] { runtime_requirements(w); });
    EXPECT_NE(why.find("depkern-0.1.0-py3-none-any.whl: Requires-Dist '" + value + "' is "), std::string::npos) << why;
    EXPECT_NE(why.find("fix the wheel's METADATA"), std::string::npos) << why;
  }
}

TEST(WheelDependencies, PipGetsTheRequirementsAfterTheEndOfOptions) {
  const TempDir dir("deps");
  const fs::path argv_file = dir.path() / "argv", pip = dir.path() / "pip";
  std::ofstream(pip) << "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > '" << argv_file.string() << "'\n";
  fs::permissions(pip, fs::perms::owner_all);
  DependencySources sources;
  sources.find_links = {dir.path().string()};
  InterpreterInfo in;
  in.torch = "2.7.0";
  EXPECT_FALSE(install_requirements({pip.string()}, {"einops (>=0.7)"}, sources, in, dir.path(), std::chrono::seconds(60)));
  std::vector<std::string> argv;
  std::ifstream got(argv_file);
  for (std::string line; std::getline(got, line);) argv.push_back(line);
  ASSERT_GE(argv.size(), 2u);
  EXPECT_EQ(argv[argv.size() - 2], "--");
  EXPECT_EQ(argv.back(), "einops (>=0.7)");
}

}  // namespace
}  // namespace kwheel
