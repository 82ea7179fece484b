// Which package a distribution's name imports: read from the top level of
// site-packages or a wheel, as Python's path finder sees it.
#include "kwheel/trust/import_package.hpp"

#include <gtest/gtest.h>

using namespace kwheel;

namespace {

TopLevelImports tops(const std::vector<std::string>& members) { return imports_of_members(members); }

}  // namespace

TEST(ImportPackage, TheWholeNameFirst) {
  const auto t = tops({"img2gray/__init__.py", "gray/__init__.py", "img2gray-1.2.dist-info/RECORD"});
  EXPECT_EQ(import_name_of("img2gray", t), "img2gray");
  EXPECT_EQ(import_name_of("Img2Gray", t), "img2gray");
}

TEST(ImportPackage, APrefixedNameImportsItsKernel) {
  const auto t = tops({"flash_attn/__init__.py", "attn/__init__.py"});
  EXPECT_EQ(import_name_of("acme-flash-attn", t), "flash_attn");  // never the shorter attn
  EXPECT_EQ(import_name_of("acme.flash_attn", t), "flash_attn");
  EXPECT_EQ(import_name_of("acmeflash-attn", tops({"flash_attn/__init__.py"})), "flash_attn");
}

TEST(ImportPackage, NothingImportsFromRecordClaimsOrDottedDirectories) {
  const auto t = tops({"relu/__init__.py", "img2gray-1.2.dist-info/RECORD", "img2gray.pth", "img2gray.data/purelib/x.py"});
  EXPECT_EQ(import_name_of("img2gray", t), std::nullopt);
}

TEST(ImportPackage, AFileBesideThePackageIsAFault) {
  EXPECT_EQ(import_forms_fault(tops({"relu/__init__.py"}), "relu"), "");
  for (const std::string planted : {"relu.py", "relu.abi3.so", "relu.cpython-311-x86_64-linux-gnu.so", "relu.pyc"}) {
    const auto why = import_forms_fault(tops({"relu/__init__.py", planted}), "relu");
    EXPECT_NE(why.find("'" + planted + "' imports as 'relu'"), std::string::npos) << why;
  }
  EXPECT_NE(import_forms_fault(tops({"relu.py"}), "relu").find("not the package directory 'relu/'"), std::string::npos);
}

TEST(ImportPackage, TheOnlyPackageDirectoryIsForRenamedDistributionsAlone) {
  EXPECT_EQ(only_package_dir(tops({"img2gray/__init__.py", "k-1.0.dist-info/RECORD"})), "img2gray");
  EXPECT_EQ(only_package_dir(tops({"img2gray/__init__.py", "relu/__init__.py"})), std::nullopt);
  EXPECT_EQ(only_package_dir(tops({"img2gray.py"})), std::nullopt);
}
