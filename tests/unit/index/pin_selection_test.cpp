// Which versions and projects `kwheel pin` takes: Requires-Python held as
// pip 26 holds it (the index entry's data-requires-python / requires-python,
// then the chosen wheel's METADATA), and, without --name, only the projects
// whose METADATA marks a kernel (wheel/kernel_marker.hpp). Wheels are real
// archives; hashes come from coreutils' sha256sum; the verdicts on
// Requires-Python values are pip's (packaging's SpecifierSet).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "error_support.hpp"
#include "fake_transport.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/index/pin.hpp"
#include "test_support.hpp"

namespace kwheel {
// Named, not anonymous: the unit tests build as one unity file per domain.
namespace pin_selection_test {

namespace fs = std::filesystem;
using testing::error_of;
using testing::sha256sum;

const char* const kMarker = "Keywords: hf-kernel\n";

// CPython 3.11.2 on x86_64 Linux, as probe_interpreter reports it.
InterpreterInfo python3112() {
  InterpreterInfo t = testing::linux_cpython311("2.7.1", "12.6");
  t.python_version = "3.11.2";
  return t;
}

std::string wheel_name(const std::string& name, const std::string& version) {
  return name + "-" + version + "-cp39-abi3-manylinux_2_28_x86_64.whl";
}

// A wheel at dir/filename whose METADATA holds `headers` after Name and Version.
fs::path write_wheel(const fs::path& dir, const std::string& filename, const std::string& headers) {
  const std::string name = filename.substr(0, filename.find('-'));
  const std::string rest = filename.substr(name.size() + 1);
  const std::string version = rest.substr(0, rest.find('-'));
  const std::string dist_info = name + "-" + version + ".dist-info";
  fs::create_directories(dir);
  testing::write_test_wheel(dir / filename,
                            {{name + "/__init__.py", "\n"},
                             {dist_info + "/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n" + headers},
                             {dist_info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp39-abi3-linux_x86_64\n"}},
                            dist_info + "/RECORD");
  return dir / filename;
}

const PinCandidate& candidate(const PinResult& r, const std::string& filename) {
  auto it = std::find_if(r.candidates.begin(), r.candidates.end(), [&](const PinCandidate& c) { return c.file.filename == filename; });
  if (it == r.candidates.end()) throw std::runtime_error("no candidate " + filename);
  return *it;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

class PinSelection : public ::testing::Test {
 protected:
  PinRequest request(InterpreterInfo target, const std::string& source) const {
    PinRequest r;
    r.source = source;
    r.target = std::move(target);
    return r;
  }
  // A file:// site: SITE/simple/img2gray/index.{html,json} linking the
  // wheels in SITE/files/, each anchor with `requires_python`'s value.
  std::string file_index(const std::vector<std::pair<fs::path, std::string>>& wheels, bool json) {
    const fs::path page = site() / "simple" / "img2gray";
    fs::create_directories(page);
    nlohmann::json files = nlohmann::json::array();
    std::string html = "<!DOCTYPE html>\n<html><body>\n";
    for (const auto& [w, rp] : wheels) {
      const std::string fn = w.filename().string();
      files.push_back({{"filename", fn}, {"url", "../../files/" + fn}, {"hashes", {{"sha256", sha256sum(w)}}}, {"requires-python", rp}});
      std::string escaped = rp;
      for (size_t at = escaped.find('>'); at != std::string::npos; at = escaped.find('>', at)) escaped.replace(at, 1, "&gt;");
      html += "<a href=\"../../files/" + fn + "#sha256=" + sha256sum(w) + "\" data-requires-python=\"" + escaped + "\">" + fn + "</a>\n";
    }
    std::ofstream(site() / "simple" / "index.html") << "<a href=\"img2gray/\">img2gray</a>\n";
    if (json) std::ofstream(page / "index.json") << nlohmann::json{{"meta", {{"api-version", "1.1"}}}, {"name", "img2gray"}, {"files", files}}.dump();
    else std::ofstream(page / "index.html") << html + "</body></html>\n";
    return "file://" + (site() / "simple").string();
  }
  fs::path site() const { return dir_.path() / "site"; }
  fs::path dist() const { return dir_.path() / "dist"; }

 private:
  TempDir dir_{"unit"};
};

TEST_F(PinSelection, MetadataRequiresPythonPassesOverTheNewerVersionAndTheHeaderSaysWhy) {
  const fs::path v1 = write_wheel(dist(), wheel_name("img2gray", "1+torch2.7.cu126"), std::string(kMarker) + "Requires-Python: >=3.9\n");
  const fs::path v2 = write_wheel(dist(), wheel_name("img2gray", "2+torch2.7.cu126"), std::string(kMarker) + "Requires-Python: >=3.99\n");
  const PinResult r = pin(request(python3112(), dist().string()));
  EXPECT_EQ(r.requirement, "img2gray==1+torch2.7.cu126 --hash=sha256:" + sha256sum(v1));
  EXPECT_EQ(candidate(r, v2.filename().string()).problem, "requires Python >=3.99 by its METADATA, the target has 3.11.2");
  const auto lines = lines_of(r.text);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_TRUE(lines[0].starts_with("# kwheel pin: img2gray for ")) << r.text;
  EXPECT_EQ(lines[1], "# passed over: img2gray 2 (requires Python >=3.99 by its METADATA, the target has 3.11.2)") << r.text;
  EXPECT_EQ(r.notes, std::vector<std::string>{lines[1]});
  // The target's micro version counts, as in pip: 3.11.2 is not >=3.11.4.
  write_wheel(dist(), wheel_name("img2gray", "3+torch2.7.cu126"), std::string(kMarker) + "Requires-Python: >=3.11.4\n");
  EXPECT_EQ(pin(request(python3112(), dist().string())).version, "1+torch2.7.cu126");
}

TEST_F(PinSelection, TheIndexEntrysRequiresPythonIsHeldToInHtmlAndJson) {
  const fs::path v1 = write_wheel(site() / "files", wheel_name("img2gray", "1+torch2.7.cu126"), kMarker);
  const fs::path v2 = write_wheel(site() / "files", wheel_name("img2gray", "2+torch2.7.cu126"), kMarker);  // METADATA says nothing
  for (const bool json : {false, true}) {
    PinRequest req = request(python3112(), file_index({{v1, ">=3.9"}, {v2, ">=3.99"}}, json));
    const PinResult r = pin(req);
    EXPECT_EQ(r.page_format, json ? "json" : "html");
    EXPECT_EQ(r.requirement, "img2gray==1+torch2.7.cu126 --hash=sha256:" + sha256sum(v1)) << json;
    EXPECT_EQ(candidate(r, v2.filename().string()).problem, "requires Python >=3.99 by its index entry, the target has 3.11.2");
    EXPECT_NE(r.text.find("\n# passed over: img2gray 2 (requires Python >=3.99 by its index entry, the target has 3.11.2)\n"), std::string::npos) << r.text;
    fs::remove_all(site() / "simple");
  }
}

TEST_F(PinSelection, AnInvalidRequiresPythonIsAProblemNamedAndEscaped) {
  const fs::path v1 = write_wheel(site() / "files", wheel_name("img2gray", "1+torch2.7.cu126"), kMarker);
  const fs::path v2 = write_wheel(site() / "files", wheel_name("img2gray", "2+torch2.7.cu126"), kMarker);
  const PinResult r = pin(request(python3112(), file_index({{v1, ""}, {v2, ">=3.x\n-i http://evil.test/"}}, true)));
  EXPECT_EQ(r.version, "1+torch2.7.cu126");
  const auto& problem = candidate(r, v2.filename().string()).problem;
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("Requires-Python '>=3.x\\x0a-i http://evil.test/', which is not a PEP 440 specifier set"), std::string::npos) << *problem;
  // The header's line is one comment line: nothing the index wrote starts another.
  for (const auto& line : lines_of(r.text)) EXPECT_TRUE(line.starts_with("#") || line.starts_with("--index-url ") || line.starts_with("img2gray==")) << line;
}

TEST_F(PinSelection, ADescribedTargetIsNotCheckedAndTheHeaderSaysSo) {
  write_wheel(dist(), wheel_name("img2gray", "2+torch2.7.cu126"), std::string(kMarker) + "Requires-Python: >=3.99\n");
  const PinResult r = pin(request(described_target("2.7", std::string("12.6")), dist().string()));
  EXPECT_EQ(r.version, "2+torch2.7.cu126");
  EXPECT_EQ(lines_of(r.text).at(1), "# Requires-Python not checked: the target is described (--torch), not an interpreter; pin with --python PATH to check it");
}

TEST_F(PinSelection, WithoutANameOnlyKernelsArePinnedAndTheRestIsCounted) {
  const fs::path img = write_wheel(dist(), wheel_name("img2gray", "1+torch2.7.cu126"), kMarker);
  // A kwheel wheel from before the keyword: its Hub revision marks it.
  const fs::path relu = write_wheel(dist(), wheel_name("relu", "1+torch2.7.cu126"),
                                    "Project-URL: Hub revision, https://huggingface.co/kernels/org/relu/tree/" + std::string(40, 'a') + "\n");
  write_wheel(dist(), "einops-0.8.2-py3-none-any.whl", "Keywords: deep learning,einops\n");
  write_wheel(dist(), "acme_utils-1.0-py3-none-any.whl", "");
  const PinSetResult r = pin_all(request(python3112(), dist().string()));
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].project, "img2gray");
  EXPECT_EQ(r.kernels[1].project, "relu");
  EXPECT_EQ(r.left_out, (std::vector<std::string>{"acme-utils", "einops"}));
  EXPECT_TRUE(r.text.starts_with("# kwheel pin: 2 kernels for ")) << r.text;
  EXPECT_NE(r.text.find("\n# left out: 2 projects of the source that are not kernels (acme-utils, einops): no kernel marker in METADATA (Keywords: hf-kernel)\n"),
            std::string::npos)
      << r.text;
  EXPECT_TRUE(r.text.ends_with("img2gray==1+torch2.7.cu126 --hash=sha256:" + sha256sum(img) + "\nrelu==1+torch2.7.cu126 --hash=sha256:" + sha256sum(relu) + "\n"))
      << r.text;
  EXPECT_EQ(to_json(r)["left_out"], nlohmann::json({"acme-utils", "einops"}));
}

TEST_F(PinSelection, OneKernelAmongOtherProjectsIsPinnedAsPinPinsItWithTheCount) {
  write_wheel(dist(), wheel_name("img2gray", "1+torch2.7.cu126"), kMarker);
  write_wheel(dist(), "einops-0.8.2-py3-none-any.whl", "");
  PinRequest req = request(python3112(), dist().string());
  const PinSetResult all = pin_all(req);
  req.name = "img2gray";
  const std::vector<std::string> alone = lines_of(pin(req).text);
  std::vector<std::string> expected = alone;
  expected.insert(expected.begin() + 1, "# left out: 1 project of the source that is not a kernel (einops): no kernel marker in METADATA (Keywords: hf-kernel)");
  EXPECT_EQ(lines_of(all.text), expected) << all.text;
  EXPECT_EQ(to_json(all)["project"], "img2gray");
}

TEST_F(PinSelection, NoKernelAtAllNamesTheProjectsAndTheFix) {
  write_wheel(dist(), "einops-0.8.2-py3-none-any.whl", "");
  write_wheel(dist(), "acme_utils-1.0-py3-none-any.whl", "");
  const std::string e = error_of([&] { pin_all(request(python3112(), dist().string())); }, ErrorKind::not_found);
  EXPECT_NE(e.find("acme-utils, einops"), std::string::npos) << e;
  EXPECT_NE(e.find("Keywords: hf-kernel"), std::string::npos) << e;
  EXPECT_NE(e.find("--name"), std::string::npos) << e;
}

// Over HTTP the verdict comes from a project's PEP 658 metadata, held to the
// page's sha256: no wheel is fetched for it.
TEST_F(PinSelection, OverHttpTheVerdictReadsPep658MetadataOnly) {
  auto index = std::make_shared<kwheel::testing::FakeTransport>();
  const std::string kernel_md = "Metadata-Version: 2.1\nName: img2gray\nVersion: 1+torch2.7.cu126\nKeywords: hf-kernel\n";
  const std::string other_md = "Metadata-Version: 2.1\nName: acme-utils\nVersion: 1.0\n";
  const fs::path kernel_file = dist() / "k.metadata", other_file = dist() / "o.metadata";
  fs::create_directories(dist());
  std::ofstream(kernel_file, std::ios::binary) << kernel_md;
  std::ofstream(other_file, std::ios::binary) << other_md;
  auto html = [](const std::string& body) { return kwheel::testing::FakeAnswer{200, "<!DOCTYPE html>\n<html><body>\n" + body + "</body></html>\n", {{"content-type", "text/html"}}, "OK"}; };
  index->on("http://index.test/simple/", {html("<a href=\"acme-utils/\">acme-utils</a>\n<a href=\"img2gray/\">img2gray</a>\n")});
  const std::string kernel = "img2gray-1%2Btorch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl";
  auto anchor = [](const std::string& href, const std::string& text, const std::string& md_sha) {
    return "<a href=\"../../files/" + href + "#sha256=" + std::string(64, 'a') + "\" data-core-metadata=\"sha256=" + md_sha + "\">" + text + "</a>\n";
  };
  index->on("http://index.test/simple/img2gray/", {html(anchor(kernel, "img2gray-1+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", sha256sum(kernel_file)))});
  index->on("http://index.test/simple/acme-utils/", {html(anchor("acme_utils-1.0-py3-none-any.whl", "acme_utils-1.0-py3-none-any.whl", sha256sum(other_file)))});
  index->on("http://index.test/files/" + kernel + ".metadata", {kwheel::testing::ok(kernel_md)});
  index->on("http://index.test/files/acme_utils-1.0-py3-none-any.whl.metadata", {kwheel::testing::ok(other_md)});
  PinRequest req = request(python3112(), "http://index.test/simple");
  req.transport = index;
  const PinSetResult r = pin_all(req);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].requirement, "img2gray==1+torch2.7.cu126 --hash=sha256:" + std::string(64, 'a'));
  EXPECT_EQ(r.left_out, std::vector<std::string>{"acme-utils"});
  EXPECT_TRUE(index->sent_to("http://index.test/files/acme_utils-1.0-py3-none-any.whl").empty());
  EXPECT_TRUE(index->sent_to("http://index.test/files/" + kernel).empty());
}

}  // namespace pin_selection_test
}  // namespace kwheel
