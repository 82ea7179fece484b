#include "kwheel/index/matrix_page.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <tuple>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/index/simple_index.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/validate/compat.hpp"

namespace kwheel {

namespace {

constexpr const char* kAnyTorch = "any torch";

std::string row_of(const LocalLabel& l) {
  if (!l.framework_version) return kAnyTorch;
  const std::string v = l.framework_version->str();
  if (l.framework == "torchstableabi") return "torch >= " + v + " (stable ABI)";
  if (l.framework == "tvmffi") return "tvm-ffi " + v;
  return l.framework + " " + v;
}

std::string column_of(const LocalLabel& l) {
  if (l.universal()) return "noarch";
  if (l.noarch) return "noarch-" + l.backend;
  const std::string backend = l.backend.empty() ? "other" : l.backend;
  return l.cxx98 ? backend + "-cxx98" : backend;
}

// Rows: torch, then the stable ABI, then tvm-ffi, newest first; "any torch"
// (universal and noarch builds) last.
std::tuple<int, int, int> row_rank(const std::string& version) {
  const LocalLabel l = read_label(version);
  if (!l.framework_version) return {3, 0, 0};
  const int kind = l.framework == "torch" ? 0 : l.framework == "torchstableabi" ? 1 : 2;
  return {kind, -l.framework_version->major, -l.framework_version->minor};
}

int column_kind(const std::string& c) {
  if (c == "noarch") return 8;
  if (c.starts_with("noarch-")) return 7;
  if (c == "other") return 6;
  if (c.starts_with("metal")) return 5;
  if (c.starts_with("cpu")) return 4;
  if (c.starts_with("cu") && c != "cuda") return 0;
  if (c.starts_with("rocm")) return 1;
  if (c.starts_with("xpu")) return 2;
  return 3;  // other accelerators: cann, npu, neuron, tpu
}

// "cu126" < "cu128" < "cu130", and "cu92" < "cu126": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else if (a[i] != b[j]) {
      return a[i] < b[j];
    } else {
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

bool column_less(const std::string& a, const std::string& b) {
  const int ka = column_kind(a), kb = column_kind(b);
  return ka != kb ? ka < kb : natural_less(a, b);
}

// Newest version first; then by filename, so the builds of one version for
// several platforms keep one order from run to run.
bool wheel_less(const MatrixWheel& a, const MatrixWheel& b) {
  const auto va = Version::try_parse(a.version), vb = Version::try_parse(b.version);
  if (va && vb && *va != *vb) return *va > *vb;
  return a.filename < b.filename;
}

size_t index_of(const std::vector<std::string>& items, const std::string& item) {
  return static_cast<size_t>(std::find(items.begin(), items.end(), item) - items.begin());
}

}  // namespace

MatrixPlace matrix_place(const std::string& version) {
  const LocalLabel l = read_label(version);
  return {row_of(l), column_of(l)};
}

Matrix build_matrix(std::vector<MatrixWheel> wheels) {
  std::sort(wheels.begin(), wheels.end(), wheel_less);
  Matrix m;
  std::map<std::string, std::tuple<int, int, int>> row_ranks;
  for (const auto& w : wheels) {
    const MatrixPlace p = matrix_place(w.version);
    row_ranks.emplace(p.row, row_rank(w.version));
    if (std::find(m.columns.begin(), m.columns.end(), p.column) == m.columns.end()) m.columns.push_back(p.column);
  }
  for (const auto& [row, _] : row_ranks) m.rows.push_back(row);
  std::sort(m.rows.begin(), m.rows.end(), [&](const std::string& a, const std::string& b) { return row_ranks.at(a) < row_ranks.at(b); });
  std::sort(m.columns.begin(), m.columns.end(), column_less);
  for (auto& w : wheels) {
    const MatrixPlace p = matrix_place(w.version);
    m.cells[{index_of(m.rows, p.row), index_of(m.columns, p.column)}].push_back(std::move(w));
  }
  return m;
}

std::string human_size(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024;
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

void check_page_title(const std::string& title) {
  if (trim(title).empty()) throw Error(ErrorKind::usage, "--title is empty; give the page a name, e.g. --title 'Acme kernels'");
  if (title.size() > 200) throw Error(ErrorKind::usage, "--title is " + std::to_string(title.size()) + " bytes; keep it to 200");
  for (unsigned char c : title)
    if (c < 0x20 || c == 0x7f)
      throw Error(ErrorKind::usage, "--title contains a control character (byte " + std::to_string(c) + "); give one line of plain text");
}

namespace {

constexpr const char* kStyle = R"(    <style>
      body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem; color: #1b1f24; background: #fff; }
      h1 { font-size: 1.6rem; margin: 0 0 1rem; }
      h2 { font-size: 1.25rem; margin: 2rem 0 .5rem; }
      table.matrix { border-collapse: collapse; font-size: .85rem; }
      table.matrix th, table.matrix td { border: 1px solid #d0d7de; padding: .4rem .55rem; vertical-align: top; text-align: left; }
      table.matrix thead th { background: #f0f3f6; }
      table.matrix tbody th { background: #f6f8fa; white-space: nowrap; }
      td.cell { background: #eaf5ea; }
      td.empty { color: #8c959f; text-align: center; }
      ul.wheels { list-style: none; margin: 0; padding: 0; }
      ul.wheels li + li { margin-top: .45rem; padding-top: .45rem; border-top: 1px dashed #b7d7b7; }
      ul.wheels a { font-weight: 600; color: #0b5cad; }
      .tag, .gpu, .size, .signer { display: block; font-family: ui-monospace, monospace; font-size: .75rem; }
      .signer { color: #1a7f37; overflow-wrap: anywhere; }
      .gpu { color: #6a3d9a; }
      .size { color: #57606a; }
      p.note { color: #57606a; font-size: .85rem; }
    </style>
)";

std::string cell_html(const std::vector<MatrixWheel>& wheels, const std::string& files_base) {
  std::string s = "<td class=\"cell\"><ul class=\"wheels\">";
  for (const auto& w : wheels) {
    std::string tag;
    try {
      tag = join(parse_wheel_filename(w.filename).platform, ".");
    } catch (const Error&) {
      tag = "?";
    }
    const std::string shown = w.version.substr(0, w.version.find('+'));
    s += "<li><a href=\"" + html_escape(files_base + encode_component(w.filename)) + "\" title=\"" + html_escape(w.filename) + "\">" +
         html_escape(w.project + " " + shown) + "</a>";
    s += "<span class=\"tag\">" + html_escape(tag) + "</span>";
    s += "<span class=\"gpu\">" + html_escape(w.gpu_code.empty() ? "no GPU code" : join(w.gpu_code, " ")) + "</span>";
    s += "<span class=\"size\">" + html_escape(human_size(w.size)) + "</span>";
    if (!w.signature.empty()) s += "<span class=\"signer\">" + html_escape(w.signature) + "</span>";
    s += "</li>";
  }
  return s + "</ul></td>";
}

std::string table_html(const Matrix& m, const std::string& files_base) {
  std::string s = "    <table class=\"matrix\">\n      <thead><tr><th scope=\"col\">torch \\ backend</th>";
  for (const auto& c : m.columns) s += "<th scope=\"col\">" + html_escape(c) + "</th>";
  s += "</tr></thead>\n      <tbody>\n";
  for (size_t r = 0; r < m.rows.size(); ++r) {
    s += "        <tr><th scope=\"row\">" + html_escape(m.rows[r]) + "</th>";
    for (size_t c = 0; c < m.columns.size(); ++c) {
      auto it = m.cells.find({r, c});
      s += it == m.cells.end() ? "<td class=\"empty\">&ndash;</td>" : cell_html(it->second, files_base);
    }
    s += "</tr>\n";
  }
  return s + "      </tbody>\n    </table>\n";
}

std::string sub_index_list(const MatrixPageSpec& spec) {
  std::string s = "    <h2>Indexes for pip and uv</h2>\n    <p>Every build: <a href=\"" + html_escape(spec.to_root) + "simple/\">simple/</a></p>\n";
  if (spec.sub_indexes.empty()) return s;
  s += "    <p>One index per torch/compute combination (use as pip's --index-url):</p>\n    <ul>\n";
  for (const auto& sub : spec.sub_indexes)
    s += "      <li><a href=\"" + html_escape(spec.to_root + sub.name) + "/simple/\">" + html_escape(sub.name) + "/simple/</a>: " +
         html_escape(sub.description) + "</li>\n";
  return s + "    </ul>\n";
}

}  // namespace

std::string render_matrix_page(const MatrixPageSpec& spec) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n  <head>\n    <meta charset=\"utf-8\">\n";
  s += "    <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  s += "    <title>" + html_escape(spec.title) + "</title>\n" + kStyle + "  </head>\n  <body>\n";
  s += "    <h1>" + html_escape(spec.title) + "</h1>\n";
  if (!spec.link_kernel_pages) s += "    <p><a href=\"" + html_escape(spec.to_root) + "index.html\">All kernels</a></p>\n";
  s += "    <p class=\"note\">Rows: torch versions. Columns: backends. Each entry links its wheel and shows its platform tag, "
       "the GPU code its binaries carry, and its size.</p>\n";
  for (const auto& [project, wheels] : spec.kernels) {
    const std::string name = html_escape(project);
    s += "    <h2 id=\"" + name + "\">";
    s += spec.link_kernel_pages ? "<a href=\"kernels/" + html_escape(encode_component(project)) + ".html\">" + name + "</a>" : name;
    s += "</h2>\n" + table_html(build_matrix(wheels), spec.files_base);
  }
  if (spec.link_kernel_pages) s += sub_index_list(spec);
  return s + "  </body>\n</html>\n";
}

}  // namespace kwheel
