// Pinning from a variant index: the machine uv's NVIDIA provider would see,
// and the variant chosen for it. The expected choices follow uv 0.13.9's
// provider (crates/uv-distribution/src/variant/nvidia.rs) worked by hand:
// a 13.0 driver offers lower bounds 13.0, 13, 12.20, ...; a 9.0 GPU offers
// 90_real, then 90_virtual.
#include "kwheel/index/pin_variants.hpp"

#include <gtest/gtest.h>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/packaging/wheel_variant.hpp"
#include "test_support.hpp"

namespace kwheel {
namespace {

using kwheel::testing::linux_cpython311;
using kwheel::testing::ScopedEnv;

const char* kWheel = "img2gray-1+torch2.11-cp39-abi3-manylinux_2_28_x86_64-";

VariantProperties nvidia(const std::string& bound, std::vector<std::string> sm) {
  return {{"nvidia", {{"cuda_version_lower_bound", {bound}}, {"sm_arch", std::move(sm)}}}};
}

// A variant index's project page: cu130 (sm_90), cu129 (sm_100 only),
// cu126 (sm_80, sm_90) and the null variant, and its variants.json.
struct Page {
  std::string json;
  std::vector<IndexFile> files;
  Page() {
    VariantsJson v;
    v.namespace_priorities = {"nvidia"};
    v.providers["nvidia"] = nvidia_variant_provider();
    v.variants = {{"cu130_sm90", nvidia("13.0", {"90_real"})},
                  {"cu129_sm100", nvidia("12.9", {"100_real", "103_real"})},
                  {"cu126_sm80.sm90", nvidia("12.6", {"80_real", "86_real", "87_real", "88_real", "89_real", "90_real"})},
                  {"null", {}}};
    json = render_variants_json(v);
    for (const auto& [label, _] : v.variants) files.push_back(file(std::string(kWheel) + label + ".whl"));
    IndexFile meta = file("img2gray-1+torch2.11-variants.json");
    meta.sha256 = sha256_hex(json);
    files.push_back(meta);
  }
  static IndexFile file(const std::string& name) {
    IndexFile f;
    f.filename = name;
    f.url = "file:///site/variants/files/" + name;
    f.sha256 = sha256_hex(name);
    f.version = "1+torch2.11";
    return f;
  }
};

std::string pinned_label(const std::optional<std::string>& driver, const std::optional<std::string>& sm, const std::string& torch = "2.11.0") {
  const Page page;
  PinRequest req;
  req.target = linux_cpython311(torch, "13.0");
  PinResult r;
  r.project = "img2gray";
  int fetches = 0;
  pin_variant_listing(page.files, req, variant_machine(driver, sm), [&](const IndexFile& f) {
    ++fetches;
    EXPECT_TRUE(f.filename.ends_with("-variants.json"));
    return page.json;
  }, r);
  EXPECT_LE(fetches, 1);
  if (r.files.empty()) return "";
  EXPECT_EQ(r.version, "1+torch2.11");
  EXPECT_EQ(r.files.size(), 1u);
  EXPECT_TRUE(r.files.front().filename.ends_with(r.variant_label + ".whl"));
  return r.variant_label;
}

TEST(PinVariants, ChoosesWhatUvWouldForTheMachine) {
  EXPECT_EQ(pinned_label("13.0", "9.0"), "cu130_sm90");
  EXPECT_EQ(pinned_label("13.0", "10.0"), "cu129_sm100");  // cu130 has no code for 10.0
  EXPECT_EQ(pinned_label("12.9", "9.0"), "cu126_sm80.sm90");  // the sm_100-only build never for 9.0
  EXPECT_EQ(pinned_label("12.6", "9.0"), "cu126_sm80.sm90");
  EXPECT_EQ(pinned_label("12.6", "8.6"), "cu126_sm80.sm90");
  EXPECT_EQ(pinned_label("12.6", "10.0"), "null");
  EXPECT_EQ(pinned_label("12.4", "9.0"), "null");
  EXPECT_EQ(pinned_label("none", std::nullopt), "null");
  // A driver and no GPU: no sm_arch is offered, so every CUDA build fails it.
  EXPECT_EQ(pinned_label("13.0", std::nullopt), "null");
}

TEST(PinVariants, TheTorchOfTheTargetMustBeTheIndexs) { EXPECT_EQ(pinned_label("13.0", "9.0", "2.10.0"), ""); }

TEST(PinVariants, MachineComesFromFlagsThenUvsForcingVariables) {
  {
    ScopedEnv d("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.6");
    ScopedEnv s("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "8.9");
    const VariantMachine forced = variant_machine(std::nullopt, std::nullopt);
    EXPECT_EQ(forced.cuda_driver, (CudaRelease{12, 6}));
    EXPECT_EQ(forced.gpu->capability(), "8.9");
    const VariantMachine flags = variant_machine("13.0", "9.0");  // flags win
    EXPECT_EQ(flags.cuda_driver, (CudaRelease{13, 0}));
    EXPECT_EQ(flags.gpu->capability(), "9.0");
    EXPECT_FALSE(variant_machine("none", std::nullopt).cuda_driver);
  }
  ScopedEnv bad("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "thirteen");
  EXPECT_THROW(variant_machine(std::nullopt, std::nullopt), Error);
}

TEST(PinVariants, BadFlagsAreOneLineUsageErrors) {
  for (auto [driver, sm] : std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>>{
           {"13", "9.0"}, {"13.0", "sm_90"}, {std::nullopt, "9.0"}}) {
    try {
      variant_machine(driver, sm);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

TEST(PinVariants, RecognisesAVariantIndexByItsMetadataFile) {
  EXPECT_TRUE(is_variant_listing(Page().files));
  EXPECT_FALSE(is_variant_listing({Page::file("img2gray-1+torch2.11.cu130-cp39-abi3-manylinux_2_28_x86_64.whl")}));
}

}  // namespace
}  // namespace kwheel
