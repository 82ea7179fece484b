// Tags for every variant kind named in issue 2. Expected values follow the
// scheme in docs/wheel-naming.md and the platform-tag specs (PEP 600
// manylinux_x_y_arch, macosx_X_Y_arch with "arm64", abi3 from PEP 384/425).
#include "kwheel/wheel/tags.hpp"

#include <gtest/gtest.h>

#include <set>

#include "kwheel/base/error.hpp"
#include "kwheel/packaging/pep440.hpp"

using namespace kwheel;

namespace {

struct Expect {
  const char* variant;
  const char* tag;          // WheelTags::str()
  const char* label;        // local version label
  const char* requires_dist;
  bool purelib;
};

// Every name from the issue, with --min-python 3.9 (the default) and an
// explicit --manylinux 2_28 (the default, auto, leaves Linux tags to the ELF
// evidence read in build.cpp; see Tags.AutoLeavesLinuxPlatformOpen).
const Expect kAll[] = {
    {"torch27-cxx11-cu126-x86_64-linux", "cp39-abi3-manylinux_2_28_x86_64", "torch2.7.cu126", "torch==2.7.*", false},
    {"torch26-cxx98-cu124-x86_64-linux", "cp39-abi3-manylinux_2_28_x86_64", "torch2.6.cu124.cxx98", "torch==2.6.*", false},
    {"torch28-cxx11-cu129-aarch64-linux", "cp39-abi3-manylinux_2_28_aarch64", "torch2.8.cu129", "torch==2.8.*", false},
    {"torch27-cxx11-rocm63-x86_64-linux", "cp39-abi3-manylinux_2_28_x86_64", "torch2.7.rocm63", "torch==2.7.*", false},
    {"torch29-cxx11-cpu-x86_64-linux", "cp39-abi3-manylinux_2_28_x86_64", "torch2.9.cpu", "torch==2.9.*", false},
    {"torch28-cxx11-xpu20251-x86_64-linux", "cp39-abi3-manylinux_2_28_x86_64", "torch2.8.xpu20251", "torch==2.8.*", false},
    {"torch27-metal-aarch64-darwin", "cp39-abi3-macosx_26_0_arm64", "torch2.7.metal", "torch==2.7.*", false},
    {"torch210-cxx11-cu130-x86_64-linux", "cp39-abi3-manylinux_2_28_x86_64", "torch2.10.cu130", "torch==2.10.*", false},
    {"torch-universal", "py3-none-any", "", "torch", true},
    {"torch-cpu", "py3-none-any", "torch.cpu", "torch", true},
    {"torch-cuda", "py3-none-any", "torch.cuda", "torch", true},
    {"torch-metal", "py3-none-any", "torch.metal", "torch", true},
    {"torch-rocm", "py3-none-any", "torch.rocm", "torch", true},
    {"torch-xpu", "py3-none-any", "torch.xpu", "torch", true},
};

TagOptions claim_2_28() {
  TagOptions o;
  o.manylinux = "2_28";
  return o;
}

WheelTags tags_for(const char* variant, TagOptions o = claim_2_28()) { return compute_tags(parse_variant(variant), o); }

}  // namespace

TEST(Tags, EveryIssueVariant) {
  for (const auto& e : kAll) {
    SCOPED_TRACE(e.variant);
    WheelTags t = tags_for(e.variant);
    EXPECT_EQ(t.str(), e.tag);
    EXPECT_EQ(t.local_label, e.label);
    EXPECT_EQ(local_label(parse_variant(e.variant)), e.label);
    EXPECT_EQ(t.requires_dist, e.requires_dist);
    EXPECT_EQ(t.purelib, e.purelib);
    ASSERT_EQ(t.expanded().size(), 1u);
    EXPECT_EQ(t.expanded()[0], e.tag);
  }
}

TEST(Tags, LabelsAreValidLocalVersionsAndNormalised) {
  // PEP 440 local labels: [a-z0-9]+ segments joined by '.'; a normalised
  // label prints back unchanged.
  for (const auto& e : kAll) {
    if (!*e.label) continue;
    SCOPED_TRACE(e.variant);
    auto v = Version::try_parse(std::string("0.1.0+") + e.label);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->local(), e.label);
    EXPECT_EQ(v->str(), std::string("0.1.0+") + e.label);
  }
}

TEST(Tags, LabelsAreDistinct) {
  std::set<std::string> seen;
  for (const auto& e : kAll) EXPECT_TRUE(seen.insert(std::string(e.tag) + "+" + e.label).second) << e.variant;
}

TEST(Tags, DarwinWithoutMetalStartsAtMacos11) {
  // Apple-silicon builds that are not Metal need only what arm64 macOS has.
  EXPECT_EQ(tags_for("torch27-cpu-aarch64-darwin").platforms, std::vector<std::string>{"macosx_11_0_arm64"});
  EXPECT_EQ(platform_tag(parse_variant("torch27-metal-aarch64-darwin"), "2_28"), "macosx_26_0_arm64");
}

TEST(Tags, StableAbiAndTvmFfi) {
  auto s = tags_for("torch-stable-abi10-cu126-x86_64-linux");
  EXPECT_EQ(s.local_label, "torchstableabi1.0.cu126");
  EXPECT_EQ(s.requires_dist, "torch>=1.0");
  auto t = tags_for("tvm-ffi01-cu128-x86_64-linux");
  EXPECT_EQ(t.local_label, "tvmffi0.1.cu128");
  EXPECT_EQ(t.requires_dist, "apache-tvm-ffi==0.1.*");
}

TEST(Tags, MinPythonChangesNativeTagOnly) {
  TagOptions o = claim_2_28();
  o.min_python = "3.12";
  EXPECT_EQ(tags_for("torch27-cxx11-cu126-x86_64-linux", o).str(), "cp312-abi3-manylinux_2_28_x86_64");
  EXPECT_EQ(tags_for("torch-universal", o).str(), "py3-none-any");
  o.min_python = "3.2";  // abi3 exists since 3.2 (PEP 384)
  EXPECT_EQ(tags_for("torch27-cxx11-cu126-x86_64-linux", o).python, "cp32");
}

TEST(Tags, MinPythonValidation) {
  // "3.09" would otherwise become the tag cp309.
  for (auto bad : {"3.1", "2.7", "3", "3.9.1", "39", "cp39", "3.x", "", " 3.9", "4.0", "3.100", "3.09", "3.02"}) {
    TagOptions o = claim_2_28();
    o.min_python = bad;
    try {
      tags_for("torch27-cxx11-cu126-x86_64-linux", o);
      ADD_FAILURE() << "accepted --min-python '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << bad;
      EXPECT_NE(std::string(e.what()).find("--min-python"), std::string::npos);
    }
  }
}

TEST(Tags, ManylinuxOption) {
  TagOptions o;
  o.manylinux = "2_17";
  EXPECT_EQ(tags_for("torch28-cxx11-cu129-aarch64-linux", o).str(), "cp39-abi3-manylinux_2_17_aarch64");
  o.manylinux = "2_34";
  EXPECT_EQ(tags_for("torch27-cxx11-cu126-x86_64-linux", o).str(), "cp39-abi3-manylinux_2_34_x86_64");
  // Not used for darwin or noarch, so not even validated there.
  o.manylinux = "bogus";
  EXPECT_EQ(tags_for("torch27-metal-aarch64-darwin", o).str(), "cp39-abi3-macosx_26_0_arm64");
  EXPECT_EQ(tags_for("torch-cuda", o).str(), "py3-none-any");
}

TEST(Tags, ManylinuxValidation) {
  for (auto bad : {"2.28", "2_", "_28", "x", "", "manylinux_2_28", "2_28_x86_64", "3_28", "2_1000", "2_028", "2_0"}) {
    TagOptions o;
    o.manylinux = bad;
    try {
      tags_for("torch27-cxx11-cu126-x86_64-linux", o);
      ADD_FAILURE() << "accepted --manylinux '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << bad;
      EXPECT_NE(std::string(e.what()).find("--manylinux"), std::string::npos);
    }
  }
}

TEST(Tags, LocalLabelOrderingPicksNewerTorch) {
  // The reason for the dotted scheme (PEP 440: numeric local segments
  // compare as integers).
  auto v = [](const char* variant) { return Version::parse("0.1.0+" + local_label(parse_variant(variant))); };
  EXPECT_GT(v("torch210-cxx11-cu130-x86_64-linux"), v("torch29-cxx11-cpu-x86_64-linux"));
  EXPECT_GT(v("torch210-cxx11-cu130-x86_64-linux"), v("torch27-cxx11-cu126-x86_64-linux"));
  EXPECT_GT(v("torch28-cxx11-cu129-aarch64-linux"), v("torch27-cxx11-cu126-x86_64-linux"));
}

TEST(Tags, PurePythonLabelsSortBelowEveryNativeBuild) {
  // An unpinned install must prefer a native build for the platform; the
  // pure-Python fallback (and torch-universal, no label) comes last.
  auto v = [](const char* variant) { return Version::parse("0.1.0+" + local_label(parse_variant(variant))); };
  for (const char* noarch : {"torch-xpu", "torch-cuda", "torch-cpu", "torch-rocm", "torch-metal"})
    for (const char* native : {"torch26-cxx98-cu124-x86_64-linux", "torch29-cxx11-cpu-x86_64-linux", "torch28-cxx11-xpu20251-x86_64-linux"})
      EXPECT_LT(v(noarch), v(native)) << noarch << " vs " << native;
  EXPECT_LT(Version::parse("0.1.0"), v("torch-cpu"));
}

TEST(Tags, AutoLeavesLinuxPlatformOpen) {
  // --manylinux auto (the default): no Linux platform can be claimed before
  // the build has read the variant's ELF files; everything else is known.
  TagOptions o;
  ASSERT_EQ(o.manylinux, "auto");
  auto linux_tags = compute_tags(parse_variant("torch27-cxx11-cu126-x86_64-linux"), o);
  EXPECT_TRUE(linux_tags.platforms.empty());
  EXPECT_EQ(linux_tags.python, "cp39");
  EXPECT_EQ(linux_tags.abi, "abi3");
  EXPECT_EQ(linux_tags.local_label, "torch2.7.cu126");
  EXPECT_EQ(compute_tags(parse_variant("torch27-metal-aarch64-darwin"), o).str(), "cp39-abi3-macosx_26_0_arm64");
  EXPECT_EQ(compute_tags(parse_variant("torch-universal"), o).str(), "py3-none-any");
}

TEST(Tags, Kernels0172NewForms) {
  // Names kernels 0.17.2 accepts beyond issue 2's list. torch-npu needs no
  // new code: a pure-Python label is "torch." + the name, which compat's
  // read_label already knows for npu, neuron and tpu.
  for (const char* n : {"npu", "neuron", "tpu"}) {
    SCOPED_TRACE(n);
    WheelTags t = tags_for((std::string("torch-") + n).c_str());
    EXPECT_EQ(t.str(), "py3-none-any");
    EXPECT_EQ(t.local_label, std::string("torch.") + n);
    EXPECT_EQ(t.requires_dist, "torch");
    EXPECT_TRUE(t.purelib);
  }
  // Tagless Linux: like cxx11, no ABI segment in the label.
  WheelTags tagless = tags_for("torch211-cu126-x86_64-linux");
  EXPECT_EQ(tagless.str(), "cp39-abi3-manylinux_2_28_x86_64");
  EXPECT_EQ(tagless.local_label, "torch2.11.cu126");
  EXPECT_EQ(tagless.requires_dist, "torch==2.11.*");
  EXPECT_EQ(tags_for("torch210-cu128-x86_64-windows").str(), "cp39-abi3-win_amd64");
  WheelTags abi = tags_for("torch-stable-abi211-cu128-x86_64-linux");
  EXPECT_EQ(abi.local_label, "torchstableabi2.11.cu128");
  EXPECT_EQ(abi.requires_dist, "torch>=2.11");
  WheelTags ffi = tags_for("tvm-ffi01-metal-aarch64-darwin");
  EXPECT_EQ(ffi.str(), "cp39-abi3-macosx_26_0_arm64");
  EXPECT_EQ(ffi.local_label, "tvmffi0.1.metal");
  EXPECT_EQ(ffi.requires_dist, "apache-tvm-ffi==0.1.*");
}
