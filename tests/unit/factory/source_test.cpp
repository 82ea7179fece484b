// resolve_source and the streamed files of a directory source: a directory
// that exists is the source (the Hub flags do not apply to it), and its
// files are all there at once, so nothing is awaited.
#include "kwheel/factory/source.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "error_support.hpp"
#include "kwheel/base/temp_dir.hpp"

using namespace kwheel;
namespace fs = std::filesystem;
using kwheel::testing::error_of;

namespace {

fs::path repo(const fs::path& dir) {
  fs::create_directories(dir / "build/torch-universal/img2gray");
  std::ofstream(dir / "build/torch-universal/img2gray/__init__.py") << "x = 1\n";
  return dir;
}

TEST(Source, ADirectoryIsTheSourceAndNamesIt) {
  TempDir t;
  const fs::path dir = repo(t.path() / "img2gray-repo");
  SourceRequest r;
  r.source = dir.string() + "/";  // a trailing slash still names the directory
  const ResolvedSource src = resolve_source(r, {});
  EXPECT_FALSE(src.is_hub);
  EXPECT_EQ(src.name, "img2gray-repo");
  EXPECT_EQ(src.location, r.source);
  EXPECT_EQ(src.describe()["type"], "directory");
  EXPECT_EQ(src.client, nullptr);
}

TEST(Source, HubFlagsAreRefusedForADirectory) {
  TempDir t;
  SourceRequest r;
  r.source = repo(t.path() / "k").string();
  r.revision = "v1";
  EXPECT_NE(error_of([&] { resolve_source(r, {}); }, ErrorKind::usage).find("is a directory"), std::string::npos);
  r.revision.reset();
  r.hub.offline = true;
  EXPECT_NE(error_of([&] { resolve_source(r, {}); }, ErrorKind::usage).find("apply to Hub repos only"), std::string::npos);
}

TEST(Source, AMissingDirectoryIsNotTakenForARepoId) {
  SourceRequest r;
  r.source = "./no/such/kernel";
  EXPECT_EQ(error_of([&] { resolve_source(r, {}); }, ErrorKind::not_found), "directory './no/such/kernel' does not exist");
}

TEST(Source, ADirectoryIsStreamedWhole) {
  TempDir t;
  SourceRequest r;
  r.source = repo(t.path() / "k").string();
  ResolvedSource src = resolve_source(r, {});
  const Feedback quiet;
  StreamedSource files(src, r, quiet);
  ASSERT_EQ(files.files().size(), 1u);
  EXPECT_EQ(files.files()[0].path, "build/torch-universal/img2gray/__init__.py");
  EXPECT_FALSE(files.awaiter());  // nothing downloads, so no writer waits
  EXPECT_NO_THROW(files.finish());
  EXPECT_EQ(fetch_source(src, r, quiet).size(), 1u);
}

TEST(Source, FeedbackWithoutListenersIsSilent) {
  Feedback f;
  EXPECT_NO_THROW(f.info("x"));
  EXPECT_NO_THROW(f.warn("x"));
  std::string heard;
  f.on_warn = [&](const std::string& line) { heard = line; };
  f.warn("careful");
  EXPECT_EQ(heard, "careful");
}

}  // namespace
