#include "kwheel/index/matrix_page.hpp"

#include <gtest/gtest.h>

#include "kwheel/base/error.hpp"

using namespace kwheel;

namespace {

MatrixWheel wheel(const std::string& filename, const std::string& version, std::vector<std::string> gpu = {}, uint64_t size = 2048) {
  return MatrixWheel{"img2gray", filename, version, std::move(gpu), size};
}

// The cell (row, column) by their names, as a list of filenames.
std::vector<std::string> cell(const Matrix& m, const std::string& row, const std::string& column) {
  size_t r = std::find(m.rows.begin(), m.rows.end(), row) - m.rows.begin();
  size_t c = std::find(m.columns.begin(), m.columns.end(), column) - m.columns.begin();
  std::vector<std::string> out;
  if (auto it = m.cells.find({r, c}); it != m.cells.end())
    for (const auto& w : it->second) out.push_back(w.filename);
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

}  // namespace

TEST(MatrixPlace, RowsAreTorchVersionsColumnsAreBackends) {
  EXPECT_EQ(matrix_place("0.1.0+torch2.7.cu126").row, "torch 2.7");
  EXPECT_EQ(matrix_place("0.1.0+torch2.7.cu126").column, "cu126");
  EXPECT_EQ(matrix_place("1.2+torch2.10.rocm63").column, "rocm63");
  EXPECT_EQ(matrix_place("1.2+torch2.7.cu126.cxx98").column, "cu126-cxx98");
  EXPECT_EQ(matrix_place("1.2+torchstableabi2.9.cu130").row, "torch >= 2.9 (stable ABI)");
  EXPECT_EQ(matrix_place("1.2+tvmffi0.1.cpu").row, "tvm-ffi 0.1");
  EXPECT_EQ(matrix_place("1.2+torch2.9.metal").column, "metal");
  EXPECT_EQ(matrix_place("1.2").row, "any torch");
  EXPECT_EQ(matrix_place("1.2").column, "noarch");
  EXPECT_EQ(matrix_place("1.2+torch.cuda").row, "any torch");
  EXPECT_EQ(matrix_place("1.2+torch.cuda").column, "noarch-cuda");
}

TEST(Matrix, OrdersRowsNewestTorchFirstAndColumnsByKindThenVersion) {
  Matrix m = build_matrix({
      wheel("k-1+torch2.9.cpu-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torch2.9.cpu"),
      wheel("k-1-py3-none-any.whl", "1"),
      wheel("k-1+torch2.10.cu130-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torch2.10.cu130"),
      wheel("k-1+torch2.9.cu92-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torch2.9.cu92"),
      wheel("k-1+torch2.9.rocm63-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torch2.9.rocm63"),
      wheel("k-1+torch.cuda-py3-none-any.whl", "1+torch.cuda"),
      wheel("k-1+torchstableabi2.8.cu128-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torchstableabi2.8.cu128"),
      wheel("k-1+torch2.9.metal-cp39-abi3-macosx_26_0_arm64.whl", "1+torch2.9.metal"),
      wheel("k-1+torch2.9.xpu-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torch2.9.xpu"),
  });
  EXPECT_EQ(m.rows, (std::vector<std::string>{"torch 2.10", "torch 2.9", "torch >= 2.8 (stable ABI)", "any torch"}));
  EXPECT_EQ(m.columns, (std::vector<std::string>{"cu92", "cu128", "cu130", "rocm63", "xpu", "cpu", "metal", "noarch-cuda", "noarch"}));
  EXPECT_EQ(m.cells.size(), 9u);
  EXPECT_EQ(cell(m, "torch 2.9", "cu92"), (std::vector<std::string>{"k-1+torch2.9.cu92-cp39-abi3-manylinux_2_28_x86_64.whl"}));
  EXPECT_EQ(cell(m, "any torch", "noarch"), (std::vector<std::string>{"k-1-py3-none-any.whl"}));
  EXPECT_TRUE(cell(m, "torch 2.10", "cpu").empty());
}

TEST(Matrix, WheelsSharingACellAreListedNewestFirstThenByFilename) {
  Matrix m = build_matrix({
      wheel("k-1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "1.0+torch2.7.cu126"),
      wheel("k-1.10+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "1.10+torch2.7.cu126"),
      wheel("k-1.10+torch2.7.cu126-cp39-abi3-manylinux_2_28_aarch64.whl", "1.10+torch2.7.cu126"),
      wheel("k-1.9+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "1.9+torch2.7.cu126"),
  });
  EXPECT_EQ(m.rows, std::vector<std::string>{"torch 2.7"});
  EXPECT_EQ(m.columns, std::vector<std::string>{"cu126"});
  EXPECT_EQ(cell(m, "torch 2.7", "cu126"), (std::vector<std::string>{
                                                "k-1.10+torch2.7.cu126-cp39-abi3-manylinux_2_28_aarch64.whl",
                                                "k-1.10+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl",
                                                "k-1.9+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl",
                                                "k-1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl",
                                            }));
}

TEST(MatrixPage, CellsLinkEachWheelWithTagGpuCodeAndSize) {
  MatrixPageSpec spec;
  spec.title = "Acme kernels";
  spec.files_base = "../files/";
  spec.to_root = "../";
  spec.kernels = {{"img2gray",
                   {wheel("img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "0.1.0+torch2.7.cu126", {"sm_80", "sm_90", "compute_90"},
                          1536),
                    wheel("img2gray-0.1.0+torch2.7.cpu-cp39-abi3-manylinux_2_28_x86_64.whl", "0.1.0+torch2.7.cpu", {}, 3u << 20)}}};
  const std::string html = render_matrix_page(spec);
  EXPECT_NE(html.find("<title>Acme kernels</title>"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"../files/img2gray-0.1.0%2Btorch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl\" "
                      "title=\"img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl\">img2gray 0.1.0</a>"
                      "<span class=\"tag\">manylinux_2_28_x86_64</span><span class=\"gpu\">sm_80 sm_90 compute_90</span>"
                      "<span class=\"size\">1.5 KiB</span>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<span class=\"gpu\">no GPU code</span><span class=\"size\">3.0 MiB</span>"), std::string::npos);
  EXPECT_NE(html.find("<thead><tr><th scope=\"col\">torch \\ backend</th><th scope=\"col\">cu126</th><th scope=\"col\">cpu</th></tr></thead>"),
            std::string::npos);
  EXPECT_NE(html.find("<a href=\"../index.html\">All kernels</a>"), std::string::npos);
  EXPECT_EQ(count(html, "<script"), 0u);
  EXPECT_EQ(count(html, "<td class=\"cell\">"), 2u);
  EXPECT_EQ(count(html, "<td class=\"empty\">"), 0u);
}

TEST(MatrixPage, EmptyCellsAreMarkedAndRootLinksKernelPagesAndSubIndexes) {
  MatrixPageSpec spec;
  spec.title = "Index";
  spec.files_base = "files/";
  spec.link_kernel_pages = true;
  spec.kernels = {{"img2gray",
                   {wheel("img2gray-1+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torch2.7.cu126"),
                    wheel("img2gray-1+torch2.9.cpu-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torch2.9.cpu")}}};
  spec.sub_indexes = {{"torch2.7-cu126", "torch 2.7, CUDA 12.6"}};
  const std::string html = render_matrix_page(spec);
  EXPECT_EQ(count(html, "<td class=\"empty\">&ndash;</td>"), 2u);
  EXPECT_NE(html.find("<h2 id=\"img2gray\"><a href=\"kernels/img2gray.html\">img2gray</a></h2>"), std::string::npos);
  EXPECT_NE(html.find("<li><a href=\"torch2.7-cu126/simple/\">torch2.7-cu126/simple/</a>: torch 2.7, CUDA 12.6</li>"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"simple/\">simple/</a>"), std::string::npos);
  EXPECT_EQ(html.find("All kernels"), std::string::npos);
}

TEST(MatrixPage, EscapesTitleProjectAndGpuCode) {
  MatrixPageSpec spec;
  spec.title = "<b>Tom & Jerry's \"kernels\"</b>";
  spec.files_base = "files/";
  spec.kernels = {{"a<b", {MatrixWheel{"a<b", "a-1-py3-none-any.whl", "1", {"<sm_90>"}, 10}}}};
  const std::string html = render_matrix_page(spec);
  EXPECT_NE(html.find("<title>&lt;b&gt;Tom &amp; Jerry&#x27;s &quot;kernels&quot;&lt;/b&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("<h2 id=\"a&lt;b\">a&lt;b</h2>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"gpu\">&lt;sm_90&gt;</span><span class=\"size\">10 B</span>"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
}

TEST(MatrixPage, KernelPageCellsShowTheirIndexAnInstallLineAndTheHubCommit) {
  MatrixPageSpec spec;
  spec.title = "Acme";
  spec.files_base = "../files/";
  spec.to_root = "../";
  spec.index_root = "../";
  spec.install_lines = true;
  spec.deps_index = "https://mirror.example/simple/";
  MatrixWheel cu = wheel("img2gray-2.3+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "2.3+torch2.7.cu126");
  cu.hub_repo = "acme/img2gray";
  cu.hub_commit = std::string(40, 'a');
  cu.hub_url = "https://huggingface.co/kernels/acme/img2gray/tree/" + cu.hub_commit;
  MatrixWheel older = wheel("img2gray-1.1+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "1.1+torch2.7.cu126");
  spec.kernels = {{"img2gray", {older, cu, wheel("img2gray-2.3-py3-none-any.whl", "2.3")}}};
  const std::string html = render_matrix_page(spec);
  EXPECT_NE(html.find("<span class=\"hub\" title=\"" + cu.hub_url + "\">Hub: acme/img2gray @ aaaaaaaaaaaa</span>"), std::string::npos) << html;
  EXPECT_EQ(count(html, "<span class=\"hub\""), 1u);  // a wheel not built from the Hub says nothing
  // The newest build of the cell, from the cell's index, PyPI (here a mirror) for the rest, torch held by a constraint.
  EXPECT_NE(html.find("Index: <code class=\"index-url\"><span data-href=\"../torch2.7-cu126/simple/\">../torch2.7-cu126/simple/</span></code>"),
            std::string::npos) << html;
  EXPECT_NE(html.find("python -m pip list --format=freeze | grep -i &#x27;^torch==&#x27; &gt; torch-pin.txt; python -m pip install -c torch-pin.txt "
                      "--index-url <span data-href=\"../torch2.7-cu126/simple/\" data-shell-prefix=\"\">&#x27;../torch2.7-cu126/simple/&#x27;</span> "
                      "--extra-index-url &#x27;https://mirror.example/simple/&#x27; &#x27;img2gray==2.3+torch2.7.cu126&#x27;</code>"),
            std::string::npos) << html;
  // torch-universal: the file itself.
  // Each URL word is quoted whole, by the page's script once the URL is absolute (it may hold a quote).
  EXPECT_NE(html.find("--index-url &#x27;https://mirror.example/simple/&#x27; <span data-href=\"../files/img2gray-2.3-py3-none-any.whl\" "
                      "data-shell-prefix=\"img2gray @ \">&#x27;img2gray @ ../files/img2gray-2.3-py3-none-any.whl&#x27;</span>"),
            std::string::npos) << html;
  EXPECT_EQ(count(html, "<script>"), 1u);
}

// Issue #37, 7: every signature was shown in the trusted signer's green.
// The class follows the standing kwheel decided, never the text.
TEST(MatrixPage, SignatureClassFollowsItsStanding) {
  MatrixPageSpec spec;
  spec.title = "Acme";
  spec.files_base = "files/";
  auto signed_as = [](const std::string& name, const std::string& text, SignatureStanding standing) {
    MatrixWheel w = wheel(name + "-1+torch.cpu-py3-none-any.whl", "1+torch.cpu");
    w.project = name;
    w.signature = text;
    w.signature_standing = standing;
    return w;
  };
  spec.kernels = {{"a", {signed_as("a", "signed by someone", SignatureStanding::trusted)}},
                  {"b", {signed_as("b", "invalid: digest: b/x.py is not in metadata.json", SignatureStanding::invalid)}},
                  {"c", {signed_as("c", "unsigned", SignatureStanding::unsigned_)}},
                  {"d", {signed_as("d", "signed by an untrusted signer: someone", SignatureStanding::unsigned_)}}};
  const std::string html = render_matrix_page(spec);
  EXPECT_NE(html.find("<span class=\"signer sig-trusted\">signed by someone</span>"), std::string::npos) << html;
  EXPECT_NE(html.find("<span class=\"signer sig-invalid\">invalid: digest: b/x.py is not in metadata.json</span>"), std::string::npos) << html;
  EXPECT_NE(html.find("<span class=\"signer sig-unsigned\">unsigned</span>"), std::string::npos) << html;
  EXPECT_NE(html.find("<span class=\"signer sig-unsigned\">signed by an untrusted signer: someone</span>"), std::string::npos) << html;
  EXPECT_EQ(count(html, "<script"), 0u);  // classes and the stylesheet, no script
}

// The home page names the index the install lines take dependencies from:
// PyPI unless --deps-index-url named another.
TEST(MatrixPage, HomePageNamesTheDepsIndex) {
  MatrixPageSpec spec;
  spec.title = "Acme";
  spec.files_base = "files/";
  spec.link_kernel_pages = true;
  spec.kernels = {{"img2gray", {wheel("img2gray-1+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torch2.7.cu126")}}};
  const auto howto = [&] {
    const std::string html = render_matrix_page(spec);
    const size_t at = html.find("<div class=\"howto\">");
    return at == std::string::npos ? std::string() : html.substr(at, html.find("</div>", at) - at);
  };
  EXPECT_NE(howto().find("with PyPI as the extra index"), std::string::npos) << howto();
  spec.deps_index = "https://mirror.example/a&b/simple/";
  EXPECT_NE(howto().find("with <code class=\"deps-index\">https://mirror.example/a&amp;b/simple/</code> as the extra index"), std::string::npos)
      << howto();
  EXPECT_EQ(howto().find("PyPI"), std::string::npos) << howto();
}

TEST(MatrixPage, InstallLinesQuoteWhatTheShellWouldRead) {
  const MatrixWheel w{"k", "k-1+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torch2.7.cu126", {}, 1};
  EXPECT_EQ(install_line(w, "https://h/a'b;rm -rf x/simple/", "", "https://pypi.org/simple/"),
            "python -m pip list --format=freeze | grep -i '^torch==' > torch-pin.txt; python -m pip install -c torch-pin.txt "
            "--index-url 'https://h/a'\\''b;rm -rf x/simple/' --extra-index-url 'https://pypi.org/simple/' 'k==1+torch2.7.cu126'");
}

TEST(MatrixPage, HumanSizes) {
  EXPECT_EQ(human_size(0), "0 B");
  EXPECT_EQ(human_size(1023), "1023 B");
  EXPECT_EQ(human_size(1024), "1.0 KiB");
  EXPECT_EQ(human_size(12 * 1024 + 307), "12.3 KiB");
  EXPECT_EQ(human_size(5ull << 30), "5.0 GiB");
}

TEST(MatrixPage, BadTitlesAreUsageErrors) {
  for (const std::string bad : {std::string(""), std::string("  "), std::string("two\nlines"), std::string("tab\there"), std::string(201, 'x')}) {
    try {
      check_page_title(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_NE(std::string(e.what()).find("--title"), std::string::npos);
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
  EXPECT_NO_THROW(check_page_title("Acme GPU kernels \xE2\x80\x94 nightly"));
}

// The home page of a large site is written in pieces (write_matrix_pages):
// joined, they are the page render_matrix_page gives, kernel by kernel as
// kernel_at hands them over.
TEST(MatrixPage, StreamedPiecesAreTheRenderedPage) {
  MatrixPageSpec spec;
  spec.title = "Acme kernels";
  spec.files_base = "files/";
  spec.link_kernel_pages = true;
  spec.sub_indexes = {{"torch2.7-cu126", "torch 2.7, CUDA 12.6"}};
  spec.kernels = {{"a", {MatrixWheel{"a", "a-1+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torch2.7.cu126", {"sm_90"}, 10}}},
                  {"b", {MatrixWheel{"b", "b-2-py3-none-any.whl", "2", {}, 20}}}};
  std::vector<size_t> asked;
  std::string joined;
  size_t pieces = 0;
  stream_matrix_page(
      spec, spec.kernels.size(),
      [&](size_t i) {
        asked.push_back(i);
        return spec.kernels[i];
      },
      [&](std::string_view piece) {
        joined += piece;
        ++pieces;
      });
  EXPECT_EQ(joined, render_matrix_page(spec));
  EXPECT_EQ(asked, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(pieces, 4u);  // head, one per kernel, tail
}

// Last night's home page, split into its kernels' sections: a section given
// back for an unchanged kernel makes the same page as rendering it again,
// and only the changed kernel is rendered.
TEST(MatrixPage, KeptSectionsOfAnEarlierPageMakeTheSamePage) {
  MatrixPageSpec spec;
  spec.title = "Acme kernels";
  spec.files_base = "files/";
  spec.link_kernel_pages = true;
  spec.sub_indexes = {{"torch2.7-cu126", "torch 2.7, CUDA 12.6"}};
  spec.kernels = {{"a<b", {MatrixWheel{"a<b", "a-1+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "1+torch2.7.cu126", {"sm_90"}, 10}}},
                  {"gelu", {MatrixWheel{"gelu", "gelu-2-py3-none-any.whl", "2", {}, 20}}},
                  {"relu", {MatrixWheel{"relu", "relu-1-py3-none-any.whl", "1", {}, 30}}}};
  const std::string last_night = render_matrix_page(spec);
  const auto sections = matrix_page_sections(last_night);
  ASSERT_EQ(sections.size(), 3u);
  EXPECT_TRUE(sections.count("a&lt;b") && sections.count("gelu") && sections.count("relu"));
  EXPECT_TRUE(sections.at("gelu").starts_with("    <h2 id=\"gelu\">"));
  EXPECT_TRUE(sections.at("gelu").ends_with("    </table>\n"));

  // Tonight gelu gains a version; a<b and relu come from last night's page.
  spec.kernels[1].second.push_back(MatrixWheel{"gelu", "gelu-3-py3-none-any.whl", "3", {}, 40});
  std::vector<size_t> rendered;
  std::string tonight;
  stream_matrix_page(
      spec, spec.kernels.size(),
      [&](size_t i) {
        rendered.push_back(i);
        return spec.kernels[i];
      },
      [&](std::string_view piece) { tonight += piece; },
      [&](size_t i) -> std::optional<std::string_view> {
        if (i == 1) return std::nullopt;
        return sections.at(i == 0 ? "a&lt;b" : "relu");
      });
  EXPECT_EQ(rendered, (std::vector<size_t>{1}));
  EXPECT_EQ(tonight, render_matrix_page(spec));
  EXPECT_NE(tonight, last_night);
}

TEST(MatrixPage, APageCutShortOrNotKwheelsHasNoSections) {
  MatrixPageSpec spec;
  spec.files_base = "files/";
  spec.link_kernel_pages = true;
  spec.kernels = {{"relu", {MatrixWheel{"relu", "relu-1-py3-none-any.whl", "1", {}, 30}}}};
  const std::string page = render_matrix_page(spec);
  EXPECT_EQ(matrix_page_sections(page).size(), 1u);
  // Cut inside the last section: what follows it is gone, so is the section.
  EXPECT_TRUE(matrix_page_sections(page.substr(0, page.find("</table>"))).empty());
  EXPECT_TRUE(matrix_page_sections("").empty());
  EXPECT_TRUE(matrix_page_sections("<h2 id=\"relu\">x</h2>\n    <h2>").empty());  // not at a line's start as kwheel writes it
}
