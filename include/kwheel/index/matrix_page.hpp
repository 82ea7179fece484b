#pragma once
// The pages of a kwheel site written for people: SITE/index.html and
// SITE/kernels/<project>.html show, per kernel, which builds exist as a
// matrix, rows torch versions and columns backends, each cell linking its
// wheels with their GPU code, platform tag and size. Plain HTML and CSS.
// The PEP 503/691 pages under simple/ are simple_index's, not these.
//
// Rows and columns come from the wheel's local label, read by read_label
// (validate/compat), the same reading that names the site's sub-indexes.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kwheel {

// The index pip's install lines take torch and other dependencies from.
inline constexpr const char* kDefaultDepsIndex = "https://pypi.org/simple/";

// What a wheel's signature means to the people reading the site, decided
// from the chain kwheel verified (never from the text shown): signed by a
// trusted signer (green); unsigned, or signed by a signer not trusted, which
// kwheel counts as unsigned (neutral); a chain that does not hold or cannot
// be read (red: a failure); no kernel metadata.json to sign (nothing shown
// as a verdict).
enum class SignatureStanding { none, trusted, unsigned_, invalid };

// One wheel of the site, as a matrix cell shows it.
struct MatrixWheel {
  std::string project;                // normalized name
  std::string filename;
  std::string version;                // the wheel's version, local label included
  std::vector<std::string> gpu_code;  // read from its objects: "sm_90", "compute_90", "gfx90a"
  uint64_t size = 0;
  std::string signature;              // who signed its metadata.json: "signed by ...", "unsigned", ...
  SignatureStanding signature_standing = SignatureStanding::none;  // the cell's colour for it
  std::string hub_repo;               // the Hub repo and commit it was built from ("" when not from the Hub)
  std::string hub_commit;
  std::string hub_url;                // its "Hub revision" Project-URL
};

// Where a wheel's version puts it: a row ("torch 2.7", "any torch") and a
// column ("cu126", "cpu", "noarch" for torch-universal, "noarch-cuda" for
// a pure-Python torch-cuda build).
struct MatrixPlace {
  std::string row;
  std::string column;
};
MatrixPlace matrix_place(const std::string& version);

// One kernel's matrix: rows newest torch first ("any torch" last), columns
// CUDA, ROCm, XPU, other accelerators, CPU, Metal, then the noarch ones,
// versions ascending within a kind; each cell's wheels by version, newest
// first, then filename.
struct Matrix {
  std::vector<std::string> rows;
  std::vector<std::string> columns;
  std::map<std::pair<size_t, size_t>, std::vector<MatrixWheel>> cells;  // (row, column) index
};
Matrix build_matrix(std::vector<MatrixWheel> wheels);

// A sub-index the root page lists ("torch2.7-cu126", "torch 2.7, CUDA 12.6").
struct SubIndexLink {
  std::string name;
  std::string description;
};

struct MatrixPageSpec {
  std::string title;
  std::string files_base;    // prefix of wheel links: "files/", "../files/" or "BASE/files/"
  std::string to_root;       // "" on SITE/index.html, "../" on a kernel page
  bool link_kernel_pages = false;  // headings link kernels/<project>.html (the root page)
  std::vector<std::pair<std::string, std::vector<MatrixWheel>>> kernels;  // project -> its wheels
  std::vector<SubIndexLink> sub_indexes;  // listed under the matrices (the root page)
  // Kernel pages: each cell shows its index and a pip line that installs
  // its newest build and cannot replace the installed torch (a constraint
  // on it); docs/publishing.md says why.
  bool install_lines = false;
  std::string index_root;   // the site's URL as the index URLs start: BASE/, or to_root (made absolute in the browser)
  std::string deps_index = kDefaultDepsIndex;  // where torch and the kernels' Python dependencies come from
  // Kernel pages: rows ("torch 2.11") whose builds are in a variant index
  // (index/variant_index.hpp), with its URL: the row shows one uv line.
  std::map<std::string, std::string> variant_indexes;
};
std::string render_matrix_page(const MatrixPageSpec& spec);

// One kernel's section of a page: its project and its wheels.
using MatrixKernel = std::pair<std::string, std::vector<MatrixWheel>>;
// The same page in pieces, for a site too large to hold as one string (the
// home page of 20,000 wheels is megabytes): the kernels come from
// `kernel_at(0 .. kernel_count-1)`, one at a time and in order, instead of
// spec.kernels, and `emit` takes each piece as it is rendered. The pieces
// joined are render_matrix_page's bytes.
// `kept(i)`, where given and not empty, is kernel i's section as an earlier
// page has it (matrix_page_sections), emitted instead of rendering it.
using KeptSection = std::function<std::optional<std::string_view>(size_t)>;
void stream_matrix_page(const MatrixPageSpec& spec, size_t kernel_count, const std::function<MatrixKernel(size_t)>& kernel_at,
                        const std::function<void(std::string_view)>& emit, const KeptSection& kept = {});

// The kernels' sections of a page stream_matrix_page wrote with
// link_kernel_pages (the home page), by the kernel's name as the page shows
// it (HTML-escaped), each the bytes it was rendered as: a later run gives a
// section back through `kept` for a kernel whose wheels and settings are the
// same, instead of rendering it again (most nights one kernel of a site
// gains a version, and rendering the others was a fifth of the run). Only
// kwheel's own markup starts a line with "    <h2" (page text is escaped).
std::map<std::string, std::string_view, std::less<>> matrix_page_sections(std::string_view page);

// The pip command a cell shows for one wheel: the torch installed in the
// environment is pinned by a constraint file written from `pip list`, the
// cell's index (`index_url`; empty for a torch-universal wheel, which is
// installed by `file_url`) gives the kernel, `deps_index` the rest.
std::string install_line(const MatrixWheel& wheel, const std::string& index_url, const std::string& file_url, const std::string& deps_index);

// The uv command a row shows for the variant index of its torch: uv picks
// the build for the machine's driver and GPU (PEP 825, uv's preview). The
// variant index is an extra index, which uv asks first, so the kernel comes
// from it alone; torch is held by the same constraint as in pip's line.
std::string variant_install_line(const std::string& project, const std::string& variant_index_url, const std::string& deps_index);

// The page title kwheel writes when none was ever given.
inline constexpr const char* kDefaultPageTitle = "Package index";
// Throws Error(usage) naming --title for an empty title, one with control
// characters, or one over 200 bytes.
void check_page_title(const std::string& title);

// "512 B", "12.3 KiB", "4.0 MiB": what a cell shows.
std::string human_size(uint64_t bytes);

}  // namespace kwheel
