// list_variants: the variants under build/, each once, judged by name.
#include "kwheel/factory/variant_listing.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "kwheel/base/temp_dir.hpp"

using namespace kwheel;
namespace fs = std::filesystem;

namespace {

void touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "x\n";
}

TEST(VariantListing, NamesComeFromBuildSubdirectoriesOfTheTree) {
  std::vector<TreeEntry> tree{{"build/b/pkg/x.py", "file"}, {"build/a/pkg/y.py", "file"}, {"build/a/pkg/z.py", "file"},
                              {"build/c", "directory"}, {"README.md", "file"}, {"builder/d/e", "file"}};
  EXPECT_EQ(variant_names(tree), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(VariantListing, ADirectoryListsEachVariantOnceWithItsVerdict) {
  TempDir t;
  touch(t.path() / "build/torch-universal/img2gray/__init__.py");
  touch(t.path() / "build/torch-universal/img2gray/ops.py");
  touch(t.path() / "build/not-a-variant/img2gray/__init__.py");
  SourceRequest r;
  r.source = t.path().string();
  const VariantListing listing = list_variants(r, {});
  EXPECT_FALSE(listing.source.is_hub);
  ASSERT_EQ(listing.variants.size(), 2u);
  EXPECT_EQ(listing.variants[0].name, "not-a-variant");
  EXPECT_FALSE(listing.variants[0].variant);
  EXPECT_FALSE(listing.variants[0].error.empty());
  EXPECT_EQ(listing.variants[1].name, "torch-universal");
  ASSERT_TRUE(listing.variants[1].variant);
  EXPECT_TRUE(listing.variants[1].variant->is_noarch());
  EXPECT_FALSE(listing.all_valid());
}

TEST(VariantListing, AllValidWhenEveryNameParses) {
  TempDir t;
  touch(t.path() / "build/torch-universal/img2gray/__init__.py");
  SourceRequest r;
  r.source = t.path().string();
  EXPECT_TRUE(list_variants(r, {}).all_valid());
}

}  // namespace
