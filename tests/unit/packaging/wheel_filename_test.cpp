// Wheel filenames per the binary distribution format specification
// (packaging.python.org/specifications/binary-distribution-format):
// {distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}.whl,
// each tag part a '.'-joined (compressed) set. Expected values are the
// spec's, cross-checked with packaging.utils.parse_wheel_filename.
#include "kwheel/packaging/wheel_filename.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"

namespace kwheel {
namespace {

using testing::error_of;

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(WheelFilename, PlainNameVersionAndOneTag) {
  const WheelFilename w = parse_wheel_filename("foo-1.0-py3-none-any.whl");
  EXPECT_EQ(w.name, "foo");
  EXPECT_EQ(w.version, "1.0");
  EXPECT_FALSE(w.build.has_value());
  EXPECT_EQ(w.python, std::vector<std::string>{"py3"});
  EXPECT_EQ(w.abi, std::vector<std::string>{"none"});
  EXPECT_EQ(w.platform, std::vector<std::string>{"any"});
  EXPECT_EQ(w.tags(), std::vector<std::string>{"py3-none-any"});
}

TEST(WheelFilename, LocalVersionLabelIsKeptAsWritten) {
  const WheelFilename w = parse_wheel_filename("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl");
  EXPECT_EQ(w.name, "img2gray");
  EXPECT_EQ(w.version, "0.1.0+torch2.7.cu126");
  EXPECT_EQ(w.tags(), std::vector<std::string>{"cp39-abi3-manylinux_2_28_x86_64"});
}

TEST(WheelFilename, EscapedNameIsKeptAsWritten) {
  // The spec escapes '-' in names to '_'; the parser reports the name as
  // written (normalisation is the caller's business).
  const WheelFilename w = parse_wheel_filename("Foo.Bar_baz-2.0-cp311-cp311-linux_x86_64.whl");
  EXPECT_EQ(w.name, "Foo.Bar_baz");
  EXPECT_EQ(w.tags(), std::vector<std::string>{"cp311-cp311-linux_x86_64"});
}

TEST(WheelFilename, BuildTagIsTheOptionalThirdPart) {
  const WheelFilename w = parse_wheel_filename("foo-1.0-1000-py3-none-any.whl");
  ASSERT_TRUE(w.build.has_value());
  EXPECT_EQ(*w.build, "1000");
  EXPECT_EQ(w.version, "1.0");
  EXPECT_EQ(w.tags(), std::vector<std::string>{"py3-none-any"});
  // "1000abc": a number then a string, still starting with a digit.
  EXPECT_EQ(parse_wheel_filename("foo-1.0-1000abc-py3-none-any.whl").build, std::optional<std::string>("1000abc"));
}

TEST(WheelFilename, BuildTagMustStartWithADigit) {
  const std::string msg = error_of([] { parse_wheel_filename("foo-1.0-abc-py3-none-any.whl"); });
  EXPECT_NE(msg.find("foo-1.0-abc-py3-none-any.whl"), std::string::npos) << msg;
  EXPECT_NE(msg.find("build tag"), std::string::npos) << msg;
}

TEST(WheelFilename, CompressedTagSetsExpandToEveryCombination) {
  const WheelFilename w = parse_wheel_filename("foo-1.0-py2.py3-none-any.whl");
  EXPECT_EQ(w.python, (std::vector<std::string>{"py2", "py3"}));
  EXPECT_EQ(sorted(w.tags()), (std::vector<std::string>{"py2-none-any", "py3-none-any"}));

  const WheelFilename m =
      parse_wheel_filename("img2gray-0.1.0-cp311.cp312-cp311.cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
  EXPECT_EQ(m.platform, (std::vector<std::string>{"manylinux_2_17_x86_64", "manylinux2014_x86_64"}));
  const std::vector<std::string> expected{
      "cp311-cp311-manylinux2014_x86_64", "cp311-cp311-manylinux_2_17_x86_64", "cp311-cp312-manylinux2014_x86_64",
      "cp311-cp312-manylinux_2_17_x86_64", "cp312-cp311-manylinux2014_x86_64", "cp312-cp311-manylinux_2_17_x86_64",
      "cp312-cp312-manylinux2014_x86_64", "cp312-cp312-manylinux_2_17_x86_64"};
  EXPECT_EQ(sorted(m.tags()), expected);
}

TEST(WheelFilename, MustEndInWhl) {
  for (const char* name : {"foo-1.0-py3-none-any", "foo-1.0-py3-none-any.zip", "foo-1.0-py3-none-any.WHL.txt"}) {
    const std::string msg = error_of([&] { parse_wheel_filename(name); });
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
    EXPECT_NE(msg.find(".whl"), std::string::npos) << msg;
  }
}

TEST(WheelFilename, WrongNumberOfPartsIsRefused) {
  for (const char* name : {"foo-1.0.whl", "foo-1.0-py3-none.whl", "foo-1.0-1-2-py3-none-any.whl"}) {
    const std::string msg = error_of([&] { parse_wheel_filename(name); });
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
  }
}

TEST(WheelFilename, EmptyComponentsAreRefused) {
  for (const char* name : {"foo--py3-none-any.whl", "-1.0-py3-none-any.whl", "foo-1.0-py3--any.whl", "foo-1.0-py3-none-.whl"})
    error_of([&] { parse_wheel_filename(name); });
}

TEST(WheelFilename, VersionMustBePep440) {
  const std::string msg = error_of([] { parse_wheel_filename("foo-notaversion-py3-none-any.whl"); });
  EXPECT_NE(msg.find("notaversion"), std::string::npos) << msg;
}

TEST(WheelFilename, NameMustBeAValidDistributionName) {
  // PEP 508 names start and end with a letter or digit.
  const std::string msg = error_of([] { parse_wheel_filename("foo!-1.0-py3-none-any.whl"); });
  EXPECT_NE(msg.find("foo!"), std::string::npos) << msg;
}

TEST(WheelFilename, OnlyTheBytesOfAWheelFilenameAnywhere) {
  // An index page may list any string: a byte outside letters, digits and
  // . _ - + ! is refused wherever it is, before the name is split, so no
  // part (name, version, tags) carries it on. The message stays one line.
  for (const char* b : {"\n", "\r", " ", "\t", "/", "#", ";", "%", "\"", "'", "@", "=", "\\", "\x7f", "\xff", "\xe2\x80\xa8"})
    for (const std::string& name : {"foo-1.0" + std::string(b) + "-py3-none-any.whl", "foo-1.0-py3-none-any" + std::string(b) + ".whl",
                                    "fo" + std::string(b) + "o-1.0-py3-none-any.whl", "foo-1.0-py3-none" + std::string(b) + "x-any.whl"}) {
      const std::string msg = error_of([&] { parse_wheel_filename(name, VariantLabels::accept); });
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  // PEP 440's regex lets whitespace surround a version; a file name has none.
  const std::string msg = error_of([] { parse_wheel_filename("foo-1.0\n-py3-none-any.whl"); });
  EXPECT_NE(msg.find("byte 7 ('\\x0a') is not one a wheel filename holds"), std::string::npos) << msg;
}

TEST(WheelFilename, TagsAreLettersDigitsAndUnderscoresJoinedByDots) {
  for (const char* name : {"foo-1.0-py3+x-none-any.whl", "foo-1.0-py3-no!ne-any.whl", "foo-1.0-py3-none-any..x.whl", "foo-1.0-.py3-none-any.whl",
                           "foo-1.0-1+x-py3-none-any.whl", "foo-1.0-1.2-py3-none-any.whl"})
    error_of([&] { parse_wheel_filename(name); });
  EXPECT_EQ(parse_wheel_filename("foo-1.0-1_a-py3-none-manylinux_2_28_x86_64.whl").build, std::optional<std::string>("1_a"));
}

TEST(WheelFilename, LongerThanOnePathComponentIsRefused) {
  // NAME_MAX is 255 bytes: no file on disk can carry a longer name.
  std::string name = "foo-1.0-py3-none-" + std::string(300, 'a') + ".whl";
  const std::string msg = error_of([&] { parse_wheel_filename(name); });
  EXPECT_NE(msg.find("255"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 200u) << "the message quotes only the start of a huge name";
  // 255 bytes exactly is still a name.
  name = "foo-1.0-py3-none-" + std::string(255 - 21, 'a') + ".whl";
  ASSERT_EQ(name.size(), 255u);
  EXPECT_EQ(parse_wheel_filename(name).platform.front().size(), 255u - 21);
}

}  // namespace
}  // namespace kwheel
