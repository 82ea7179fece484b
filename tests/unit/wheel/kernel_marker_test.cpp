// The kernel marker (kernel_marker.hpp) in METADATA as the core metadata
// spec writes Keywords: one field, comma-separated ("Keywords:
// dog,puppy,voting,election" is the spec's example); packaging splits it
// on commas and strips each keyword.
#include "kwheel/wheel/kernel_marker.hpp"

#include <gtest/gtest.h>

#include "kwheel/wheel/core_metadata.hpp"

using namespace kwheel;

namespace {
bool marked(const std::string& headers) { return marks_kernel(parse_metadata_fields("Metadata-Version: 2.4\nName: x\nVersion: 1\n" + headers)); }
}  // namespace

TEST(KernelMarker, AKeywordAmongOthersMarksAKernel) {
  EXPECT_TRUE(marked("Keywords: hf-kernel\n"));
  EXPECT_TRUE(marked("Keywords: cuda, hf-kernel ,torch\n"));
  EXPECT_TRUE(marked("keywords: HF-Kernel\n"));  // header names and ASCII case do not matter
  EXPECT_FALSE(marked("Keywords: hf-kernels,kernel\n"));
  EXPECT_FALSE(marked("Keywords: hf kernel\n"));
  EXPECT_FALSE(marked("Summary: an hf-kernel in the summary is no marker\n"));
  EXPECT_FALSE(marked(""));
}

TEST(KernelMarker, WheelsWrittenBeforeTheKeywordAreKnownByTheirHubRevision) {
  EXPECT_TRUE(marked("Project-URL: Hub revision, https://huggingface.co/kernels/org/img2gray/tree/" + std::string(40, 'a') + "\n"));
  EXPECT_FALSE(marked("Project-URL: Source, https://huggingface.co/kernels/org/img2gray/tree/" + std::string(40, 'a') + "\n"));
  EXPECT_FALSE(marked("Project-URL: Hub revision, https://huggingface.co/kernels/org/img2gray/tree/main\n"));
}

TEST(KernelMarker, RenderedMetadataCarriesOneCommaSeparatedKeywordsField) {
  CoreMetadata m;
  m.name = "img2gray";
  m.version = "1.0";
  m.keywords = {kKernelKeyword, "cuda"};
  const std::string text = render_metadata(m);
  EXPECT_NE(text.find("\nKeywords: hf-kernel,cuda\n"), std::string::npos) << text;
  EXPECT_TRUE(marks_kernel(parse_metadata_fields(text)));
  m.keywords = {"a,b"};
  EXPECT_THROW(render_metadata(m), Error);
}
