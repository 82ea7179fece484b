// METADATA and WHEEL text, against the core metadata spec
// (packaging.python.org/specifications/core-metadata, version 2.4: header
// fields, then a blank line and the description as the message body) and
// the binary distribution format spec (WHEEL: Wheel-Version, Generator,
// Root-Is-Purelib, one Tag line per tag).
#include "kwheel/wheel/core_metadata.hpp"

#include <gtest/gtest.h>

#include "kwheel/base/error.hpp"

using namespace kwheel;

TEST(CoreMetadata, FullDocument) {
  CoreMetadata m;
  m.name = "img2gray";
  m.version = "0.1.0+torch2.10.cu130";
  m.summary = "img2gray kernel";
  m.requires_python = ">=3.9";
  m.requires_dist = {"torch==2.10.*"};
  m.project_urls = {{"Source", "https://huggingface.co/kernels-community/img2gray"}};
  m.description = "Body line 1\n\nBody line 3";
  EXPECT_EQ(render_metadata(m),
            "Metadata-Version: 2.4\n"
            "Name: img2gray\n"
            "Version: 0.1.0+torch2.10.cu130\n"
            "Summary: img2gray kernel\n"
            "Project-URL: Source, https://huggingface.co/kernels-community/img2gray\n"
            "Requires-Python: >=3.9\n"
            "Requires-Dist: torch==2.10.*\n"
            "Description-Content-Type: text/markdown\n"
            "\n"
            "Body line 1\n\nBody line 3\n");
}

TEST(CoreMetadata, MinimalHasOnlyRequiredFields) {
  CoreMetadata m;
  m.name = "x";
  m.version = "1.0";
  EXPECT_EQ(render_metadata(m), "Metadata-Version: 2.4\nName: x\nVersion: 1.0\n");
}

TEST(CoreMetadata, SeveralRequiresDistInOrder) {
  CoreMetadata m;
  m.name = "x";
  m.version = "1";
  m.requires_dist = {"torch", "numpy>=1"};
  EXPECT_EQ(render_metadata(m), "Metadata-Version: 2.4\nName: x\nVersion: 1\nRequires-Dist: torch\nRequires-Dist: numpy>=1\n");
}

TEST(CoreMetadata, DescriptionKeepsItsTrailingNewline) {
  CoreMetadata m;
  m.name = "x";
  m.version = "1";
  m.description = "ends\n";
  EXPECT_TRUE(render_metadata(m).ends_with("\n\nends\n"));
  EXPECT_FALSE(render_metadata(m).ends_with("ends\n\n"));
}

TEST(CoreMetadata, NonAsciiSummaryIsUtf8Verbatim) {
  CoreMetadata m;
  m.name = "x";
  m.version = "1";
  m.summary = "Graustufen f\xc3\xbcr Bilder";
  EXPECT_NE(render_metadata(m).find("Summary: Graustufen f\xc3\xbcr Bilder\n"), std::string::npos);
}

TEST(CoreMetadata, HeaderInjectionRefused) {
  // Line breaks end the header; NUL cuts C strings; ESC, DEL and C1's CSI
  // drive terminals; a lone continuation byte is not UTF-8.
  for (std::string bad : {std::string("a\nRequires-Dist: evil"), std::string("a\rb"), std::string("a\0b", 3), std::string("\x1b]8;;http://e\x1b\\MIT"),
                          std::string("a\x7f"), std::string("a\xc2\x9b" "31m"), std::string("a\tb"), std::string("a\x80")}) {
    CoreMetadata m;
    m.name = "x";
    m.version = "1";
    m.summary = bad;
    try {
      render_metadata(m);
      ADD_FAILURE() << "accepted an unprintable Summary: " << printable(bad);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      EXPECT_NE(std::string(e.what()).find("Summary"), std::string::npos);
    }
  }
  CoreMetadata m;
  m.name = "x";
  m.version = "1";
  m.requires_dist = {"torch\nX: y"};
  EXPECT_THROW(render_metadata(m), Error);
}

TEST(WheelFile, NativeAndPure) {
  WheelTags native;
  native.python = "cp39";
  native.abi = "abi3";
  native.platforms = {"manylinux_2_28_x86_64"};
  EXPECT_EQ(render_wheel_file(native, "kwheel 0.1.0"),
            "Wheel-Version: 1.0\nGenerator: kwheel 0.1.0\nRoot-Is-Purelib: false\nTag: cp39-abi3-manylinux_2_28_x86_64\n\n");
  WheelTags pure;
  pure.python = "py3";
  pure.abi = "none";
  pure.platforms = {"any"};
  pure.purelib = true;
  EXPECT_EQ(render_wheel_file(pure, "kwheel 0.1.0"),
            "Wheel-Version: 1.0\nGenerator: kwheel 0.1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n\n");
}

TEST(WheelFile, OneTagLinePerPlatform) {
  WheelTags t;
  t.python = "cp39";
  t.abi = "abi3";
  t.platforms = {"manylinux_2_17_x86_64", "manylinux2014_x86_64"};
  EXPECT_EQ(t.str(), "cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64");
  EXPECT_EQ(render_wheel_file(t, "g"),
            "Wheel-Version: 1.0\nGenerator: g\nRoot-Is-Purelib: false\n"
            "Tag: cp39-abi3-manylinux_2_17_x86_64\nTag: cp39-abi3-manylinux2014_x86_64\n\n");
}
