// Requires-Python as pip 26 holds a file to it (check_requires_python: the
// interpreter's major.minor.micro in the specifier set). Every expected
// verdict is what pip's vendored packaging 26 answers for the same value
// and version (`Version(v) in SpecifierSet(s)`, checked by hand with
// .venv's pip), not what kwheel computes.
#include "kwheel/packaging/requires_python.hpp"

#include <gtest/gtest.h>

using namespace kwheel;

namespace {
bool fits(const char* requires_python, const char* python) { return !requires_python_problem(requires_python, python, "its index entry").has_value(); }
}  // namespace

TEST(RequiresPython, VerdictsAgreeWithPipsPackaging) {
  EXPECT_FALSE(fits(">=3.99", "3.11.2"));
  EXPECT_TRUE(fits(">=3.9", "3.11.2"));
  EXPECT_FALSE(fits(">=3.11.4", "3.11.2"));  // the micro version counts
  EXPECT_TRUE(fits(">=3.11.1", "3.11.2"));
  EXPECT_TRUE(fits("==3.11.*", "3.11.2"));
  EXPECT_FALSE(fits("==3.10.*", "3.11.2"));
  EXPECT_TRUE(fits("~=3.10", "3.11.2"));
  EXPECT_FALSE(fits("!=3.11.2", "3.11.2"));
  EXPECT_FALSE(fits(">=3.8, <3.11", "3.11.2"));
  EXPECT_TRUE(fits(">=3.9,", "3.11.2"));  // packaging drops the empty part
  EXPECT_TRUE(fits("<3.12", "3.11"));
  EXPECT_FALSE(fits(">=3.11.1", "3.11"));  // "3.11" is 3.11.0
}

TEST(RequiresPython, NoValueAllowsEveryPython) {
  EXPECT_TRUE(fits("", "3.11.2"));
  EXPECT_TRUE(fits("  ", "3.11.2"));
}

TEST(RequiresPython, TheReasonNamesTheValueWhereItCameFromAndTheTarget) {
  EXPECT_EQ(requires_python_problem(">=3.99", "3.11.2", "its METADATA"), "requires Python >=3.99 by its METADATA, the target has 3.11.2");
}

TEST(RequiresPython, AValueThatIsNoSpecifierSetIsAReasonQuotedOnOneLine) {
  // packaging raises InvalidSpecifier for each of these.
  for (const char* bad : {">=3.x", "3.11", "python>=3", ">=3.9\n-i http://evil.test/"}) {
    const auto why = requires_python_problem(bad, "3.11.2", "its index entry");
    ASSERT_TRUE(why.has_value()) << bad;
    EXPECT_NE(why->find("is not a PEP 440 specifier set"), std::string::npos) << *why;
    EXPECT_NE(why->find("its index entry"), std::string::npos) << *why;
    EXPECT_EQ(why->find('\n'), std::string::npos) << *why;
  }
  EXPECT_NE(requires_python_problem(">=3.9\n-i x", "3.11.2", "its index entry")->find("'>=3.9\\x0a-i x'"), std::string::npos);
}
