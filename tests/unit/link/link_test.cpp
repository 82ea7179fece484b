// The two pieces of link.hpp that are text: the export line and the
// stand-in revision of a directory build.
#include "kwheel/link/link.hpp"

#include <gtest/gtest.h>

using namespace kwheel;

TEST(Link, TheExportLineIsQuotedOnlyWhereTheShellNeedsIt) {
  EXPECT_EQ(export_line("/srv/app/.kernels"), "export KERNELS_CACHE=/srv/app/.kernels");
  EXPECT_EQ(export_line("/srv/my app/k"), "export KERNELS_CACHE='/srv/my app/k'");
  EXPECT_EQ(export_line("/srv/it's/$HOME"), "export KERNELS_CACHE='/srv/it'\\''s/$HOME'");
}

TEST(Link, AStandInRevisionIsFortyHexAndStable) {
  const std::string a = stand_in_revision("org/img2gray", "img2gray 1.0+torch.cpu");
  EXPECT_EQ(a.size(), 40u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(a, stand_in_revision("org/img2gray", "img2gray 1.0+torch.cpu"));
  EXPECT_NE(a, stand_in_revision("org/img2gray", "img2gray 1.1+torch.cpu"));
}
