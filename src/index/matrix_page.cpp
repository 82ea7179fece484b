#include "kwheel/index/matrix_page.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <optional>
#include <tuple>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/index/simple_api.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/validate/compat.hpp"

namespace kwheel {

namespace {

constexpr const char* kAnyTorch = "any torch";

// One shell word: single-quoted (POSIX: nothing is special inside but the
// closing quote, written '\''), so a URL's ', &, ;, $( or ` is not the shell's.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}


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
// several platforms keep one order from run to run. Each version parsed
// once, not once per comparison: a site's kernel has hundreds of builds.
void sort_wheels(std::vector<MatrixWheel>& wheels) {
  std::vector<std::pair<std::optional<Version>, size_t>> keys;
  keys.reserve(wheels.size());
  for (size_t i = 0; i < wheels.size(); ++i) keys.emplace_back(Version::try_parse(wheels[i].version), i);
  std::sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) {
    if (a.first && b.first && *a.first != *b.first) return *a.first > *b.first;
    return wheels[a.second].filename < wheels[b.second].filename;
  });
  std::vector<MatrixWheel> sorted;
  sorted.reserve(wheels.size());
  for (const auto& k : keys) sorted.push_back(std::move(wheels[k.second]));
  wheels = std::move(sorted);
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
  sort_wheels(wheels);
  Matrix m;
  std::map<std::string, std::tuple<int, int, int>> row_ranks;
  std::vector<MatrixPlace> places;
  places.reserve(wheels.size());
  for (const auto& w : wheels) {
    const MatrixPlace& p = places.emplace_back(matrix_place(w.version));
    if (!row_ranks.count(p.row)) row_ranks.emplace(p.row, row_rank(w.version));
    if (std::find(m.columns.begin(), m.columns.end(), p.column) == m.columns.end()) m.columns.push_back(p.column);
  }
  for (const auto& [row, _] : row_ranks) m.rows.push_back(row);
  std::sort(m.rows.begin(), m.rows.end(), [&](const std::string& a, const std::string& b) { return row_ranks.at(a) < row_ranks.at(b); });
  std::sort(m.columns.begin(), m.columns.end(), column_less);
  for (size_t i = 0; i < wheels.size(); ++i)
    m.cells[{index_of(m.rows, places[i].row), index_of(m.columns, places[i].column)}].push_back(std::move(wheels[i]));
  return m;
}

namespace {

// The line from its words, each already one shell word (quoted text, or the
// HTML that shows it); `literal` writes the fixed text between them.
// `index_word` is empty for a torch-universal wheel, installed by `file_word`.
template <class Literal>
std::string line_of(const std::string& index_word, const std::string& file_word, const std::string& deps_word,
                    const std::string& requirement_word, Literal literal) {
  std::string s = literal("python -m pip list --format=freeze | grep -i '^torch==' > torch-pin.txt; python -m pip install -c torch-pin.txt ");
  if (index_word.empty()) return s + literal("--index-url ") + deps_word + literal(" ") + file_word;
  return s + literal("--index-url ") + index_word + literal(" --extra-index-url ") + deps_word + literal(" ") + requirement_word;
}

}  // namespace

std::string install_line(const MatrixWheel& w, const std::string& index_url, const std::string& file_url, const std::string& deps_index) {
  return line_of(index_url.empty() ? "" : shell_quote(index_url), shell_quote(w.project + " @ " + file_url), shell_quote(deps_index),
                 shell_quote(w.project + "==" + w.version), [](const std::string& t) { return t; });
}

namespace {

std::string variant_line_of(const std::string& index_word, const std::string& deps_word, const std::string& requirement_word,
                            const std::function<std::string(const std::string&)>& literal) {
  return literal("uv pip freeze | grep -i '^torch==' > torch-pin.txt; uv pip install --preview-features wheel-variants -c torch-pin.txt --index-url ") +
         deps_word + literal(" --extra-index-url ") + index_word + literal(" ") + requirement_word;
}

}  // namespace

std::string variant_install_line(const std::string& project, const std::string& variant_index_url, const std::string& deps_index) {
  return variant_line_of(shell_quote(variant_index_url), shell_quote(deps_index), shell_quote(project), [](const std::string& t) { return t; });
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
      .tag, .gpu, .size, .signer, .hub { display: block; font-family: ui-monospace, monospace; font-size: .75rem; }
      .signer { color: #57606a; overflow-wrap: anywhere; }
      .signer.sig-trusted { color: #1a7f37; }
      .signer.sig-invalid { color: #cf222e; font-weight: 600; }
      .hub { color: #57606a; overflow-wrap: anywhere; }
      div.install { margin-top: .5rem; padding-top: .45rem; border-top: 1px solid #b7d7b7; font-size: .75rem; max-width: 34rem; }
      div.install code { display: block; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
      code.install-line { background: #f6f8fa; border: 1px solid #d0d7de; padding: .3rem; margin-top: .25rem; user-select: all; }
      div.howto { background: #fff8e6; border: 1px solid #e3c77a; padding: .6rem .8rem; max-width: 60rem; font-size: .9rem; }
      .gpu { color: #6a3d9a; }
      .size { color: #57606a; }
      p.note { color: #57606a; font-size: .85rem; }
    </style>
)";

// A URL as the page shows it: relative ones are made absolute by the
// browser (the script at the end of the page), so the line can be pasted.
std::string url_html(const std::string& url) {
  const bool relative = url.find("://") == std::string::npos;
  return relative ? "<span data-href=\"" + html_escape(url) + "\">" + html_escape(url) + "</span>" : html_escape(url);
}

// One shell word of an install line holding a URL, `prefix` before it:
// quoted here when the URL is known (--base-url), else quoted by the page's
// script once the browser has made it absolute (data-shell-prefix), with the
// same POSIX rule, since the path the site is served from may hold a quote.
// The text before the script runs is the quoted relative word, as safe.
std::string url_word_html(const std::string& prefix, const std::string& url) {
  const bool relative = url.find("://") == std::string::npos;
  const std::string word = html_escape(shell_quote(prefix + url));
  if (!relative) return word;
  return "<span data-href=\"" + html_escape(url) + "\" data-shell-prefix=\"" + html_escape(prefix) + "\">" + word + "</span>";
}

// The index (or, for torch-universal, the file) and the install line of a
// cell's newest wheel.
std::string install_html(const MatrixWheel& newest, const MatrixPageSpec& spec) {
  const std::string sub = read_label(newest.version).index_name();
  const std::string index = sub.empty() ? "" : spec.index_root + encode_component(sub) + "/simple/";
  const std::string file = spec.files_base + encode_component(newest.filename);
  const std::string line = line_of(index.empty() ? "" : url_word_html("", index), url_word_html(newest.project + " @ ", file),
                                   html_escape(shell_quote(spec.deps_index)), html_escape(shell_quote(newest.project + "==" + newest.version)),
                                   [](const std::string& t) { return html_escape(t); });
  std::string s = "<div class=\"install\">";
  s += index.empty() ? "Index: none (any torch); pip installs the file"
                     : "Index: <code class=\"index-url\">" + url_html(index) + "</code>";
  s += "Install (keeps your torch):<code class=\"install-line\">" + line + "</code></div>";
  return s;
}

// A row's line for the variant index of its torch (kernel pages).
std::string variant_install_html(const std::string& project, const std::string& index, const MatrixPageSpec& spec) {
  const std::string line = variant_line_of(url_word_html("", index), html_escape(shell_quote(spec.deps_index)), html_escape(shell_quote(project)),
                                           [](const std::string& t) { return html_escape(t); });
  return "<div class=\"install variant-install\">Variant index (preview: uv picks the build for your GPU): <code class=\"index-url\">" +
         url_html(index) + "</code><code class=\"install-line\">" + line + "</code></div>";
}

// The signature's CSS class: green for a trusted signer, red for a failure,
// grey (the .signer default) for the rest.
const char* standing_class(SignatureStanding s) {
  switch (s) {
    case SignatureStanding::trusted: return "sig-trusted";
    case SignatureStanding::invalid: return "sig-invalid";
    case SignatureStanding::unsigned_: return "sig-unsigned";
    case SignatureStanding::none: break;
  }
  return "sig-none";
}

std::string cell_html(const std::vector<MatrixWheel>& wheels, const MatrixPageSpec& spec) {
  const std::string& files_base = spec.files_base;
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
    if (!w.signature.empty()) s += "<span class=\"signer " + std::string(standing_class(w.signature_standing)) + "\">" + html_escape(w.signature) + "</span>";
    if (!w.hub_repo.empty())
      s += "<span class=\"hub\" title=\"" + html_escape(w.hub_url) + "\">Hub: " + html_escape(w.hub_repo + " @ " + w.hub_commit.substr(0, 12)) + "</span>";
    s += "</li>";
  }
  s += "</ul>";
  if (spec.install_lines && !wheels.empty()) s += install_html(wheels.front(), spec);
  return s + "</td>";
}

// `only` names the page's kernel when the page shows one (a kernel page):
// its rows show the variant index's line.
std::string table_html(const Matrix& m, const MatrixPageSpec& spec, const std::string* only) {
  std::string s = "    <table class=\"matrix\">\n      <thead><tr><th scope=\"col\">torch \\ backend</th>";
  for (const auto& c : m.columns) s += "<th scope=\"col\">" + html_escape(c) + "</th>";
  s += "</tr></thead>\n      <tbody>\n";
  for (size_t r = 0; r < m.rows.size(); ++r) {
    s += "        <tr><th scope=\"row\">" + html_escape(m.rows[r]);
    if (auto v = spec.variant_indexes.find(m.rows[r]); spec.install_lines && v != spec.variant_indexes.end() && only)
      s += variant_install_html(*only, v->second, spec);
    s += "</th>";
    for (size_t c = 0; c < m.columns.size(); ++c) {
      auto it = m.cells.find({r, c});
      s += it == m.cells.end() ? "<td class=\"empty\">&ndash;</td>" : cell_html(it->second, spec);
    }
    s += "</tr>\n";
  }
  return s + "      </tbody>\n    </table>\n";
}

std::string sub_index_list(const MatrixPageSpec& spec) {
  std::string s = "    <h2>Indexes for pip and uv</h2>\n";
  s += "    <p>Every build, for <code>kwheel pin</code> (which picks the build that fits and pins it by hash): <a href=\"" +
       html_escape(spec.to_root) + "simple/\">simple/</a>. Not for pip or uv on their own: it lists every torch/CUDA build, and they take the "
       "highest, which can replace your torch.</p>\n";
  if (spec.sub_indexes.empty()) return s;
  s += "    <p>One index per torch/compute combination (use as pip's --index-url):</p>\n    <ul>\n";
  for (const auto& sub : spec.sub_indexes)
    s += "      <li><a href=\"" + html_escape(spec.to_root + sub.name) + "/simple/\">" + html_escape(sub.name) + "/simple/</a>: " +
         html_escape(sub.description) + "</li>\n";
  return s + "    </ul>\n";
}

// Where torch and the dependencies come from, as the home page names it:
// PyPI unless --deps-index-url named another index.
std::string deps_index_html(const std::string& deps_index) {
  return deps_index == kDefaultDepsIndex ? "PyPI" : "<code class=\"deps-index\">" + html_escape(deps_index) + "</code>";
}

// What comes before the kernels' matrices.
std::string page_head(const MatrixPageSpec& spec) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n  <head>\n    <meta charset=\"utf-8\">\n";
  s += "    <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  s += "    <title>" + html_escape(spec.title) + "</title>\n" + kStyle + "  </head>\n  <body>\n";
  s += "    <h1>" + html_escape(spec.title) + "</h1>\n";
  if (!spec.link_kernel_pages) s += "    <p><a href=\"" + html_escape(spec.to_root) + "index.html\">All kernels</a></p>\n";
  if (spec.link_kernel_pages)
    s += "    <div class=\"howto\"><strong>Installing:</strong> point pip at the index of your torch/CUDA combination "
         "(listed below as <code>torchX.Y-cuNNN/simple/</code>), with " + deps_index_html(spec.deps_index) +
         " as the extra index for torch's and the kernel's dependencies. "
         "Each kernel's page shows, per build, that index and an install line that keeps the torch you have. "
         "Do not point pip at <code>simple/</code>: it lists every torch/CUDA build, and pip takes the highest.</div>\n";
  s += "    <p class=\"note\">Rows: torch versions. Columns: backends. Each entry links its wheel and shows its platform tag, "
       "the GPU code its binaries carry, and its size.</p>\n";
  return s;
}

std::string kernel_section(const std::string& project, std::vector<MatrixWheel> wheels, const MatrixPageSpec& spec, bool only) {
  const std::string name = html_escape(project);
  std::string s = "    <h2 id=\"" + name + "\">";
  s += spec.link_kernel_pages ? "<a href=\"kernels/" + html_escape(encode_component(project)) + ".html\">" + name + "</a>" : name;
  return s + "</h2>\n" + table_html(build_matrix(std::move(wheels)), spec, only ? &project : nullptr);
}

// What comes after them.
std::string page_tail(const MatrixPageSpec& spec) {
  std::string s;
  if (spec.link_kernel_pages) s += sub_index_list(spec);
  // Relative index and file URLs, made absolute where the page is served.
  if (spec.install_lines)
    s += R"(    <script>for (const e of document.querySelectorAll('[data-href]')) { const u = new URL(e.dataset.href, document.baseURI).href; )"
         R"(e.textContent = 'shellPrefix' in e.dataset ? "'" + (e.dataset.shellPrefix + u).replaceAll("'", "'\\''") + "'" : u; }</script>)"
         "\n";
  return s + "  </body>\n</html>\n";
}

}  // namespace

void stream_matrix_page(const MatrixPageSpec& spec, size_t kernel_count, const std::function<MatrixKernel(size_t)>& kernel_at,
                        const std::function<void(std::string_view)>& emit, const KeptSection& kept) {
  emit(page_head(spec));
  for (size_t i = 0; i < kernel_count; ++i) {
    if (const auto section = kept ? kept(i) : std::nullopt) {
      emit(*section);
      continue;
    }
    MatrixKernel k = kernel_at(i);
    emit(kernel_section(k.first, std::move(k.second), spec, kernel_count == 1));
  }
  emit(page_tail(spec));
}

std::map<std::string, std::string_view, std::less<>> matrix_page_sections(std::string_view page) {
  // kernel_section's first line; the next "    <h2" (another kernel's, or
  // the list of indexes after the last) ends it.
  static constexpr std::string_view kStart = "    <h2 id=\"";
  std::map<std::string, std::string_view, std::less<>> sections;
  size_t at = page.find(kStart);
  while (at != std::string_view::npos && (at == 0 || page[at - 1] == '\n')) {
    const size_t id_end = page.find('"', at + kStart.size());
    const size_t next = id_end == std::string_view::npos ? id_end : page.find("\n    <h2", id_end);
    if (next == std::string_view::npos) break;
    sections.emplace(page.substr(at + kStart.size(), id_end - at - kStart.size()), page.substr(at, next + 1 - at));
    at = page.substr(next + 1).starts_with(kStart) ? next + 1 : std::string_view::npos;
  }
  return sections;
}

std::string render_matrix_page(const MatrixPageSpec& spec) {
  std::string s;
  stream_matrix_page(spec, spec.kernels.size(), [&](size_t i) { return spec.kernels[i]; }, [&](std::string_view piece) { s += piece; });
  return s;
}

}  // namespace kwheel
