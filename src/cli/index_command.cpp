#include <iostream>

#include "cli.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/index/simple_index.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

namespace {

// At most kListed lines of a kind: a nightly site's run names 2,000
// unchanged wheels and hundreds of pages, which --json lists in full;
// people get the first few and a count.
constexpr size_t kListed = 10;

void list_lines(const char* label, const std::vector<std::string>& items) {
  for (size_t i = 0; i < items.size() && i < kListed; ++i) std::cout << label << items[i] << "\n";
  if (items.size() > kListed) std::cout << label << "... and " << items.size() - kListed << " more (--json lists them all)\n";
}

// A failed signature is a warning of its own, with -q too: that wheel is
// not what its signer published.
void warn_invalid_signatures(const SiteReport& r, const Output& out) {
  for (const auto& w : r.signature_warnings)
    if (w.standing == SignatureStanding::invalid) out.warn(w.filename + ": invalid signature: " + w.reason);
}

// Unsigned is neutral (so is a signer not trusted, which counts as
// unsigned): the pages show it grey, and a site of 2,000 unsigned wheels
// would otherwise print 2,000 warnings on every run, for the wheels already
// in it too. One line counts them, --verbose lists them (neither with -q),
// --json has each.
void note_unsigned(const SiteReport& r, const Output& out) {
  std::size_t n = 0;
  for (const auto& w : r.signature_warnings) {
    if (w.standing == SignatureStanding::invalid) continue;
    ++n;
    if (out.verbose) out.info("unsigned: " + w.filename + ": " + w.reason);
  }
  if (n == 0) return;
  const std::size_t wheels = r.added.size() + r.unchanged.size() + r.kept.size();
  out.info("unsigned: " + std::to_string(n) + " of the site's " + std::to_string(wheels) + (wheels == 1 ? " wheel " : " wheels ") +
           (n == 1 ? "has" : "have") + " no Sigstore signature by a trusted signer" + (out.verbose ? "" : "; --verbose lists them"));
}

nlohmann::json signature_warnings_json(const SiteReport& r) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& w : r.signature_warnings)
    list.push_back({{"filename", w.filename}, {"signature", w.standing == SignatureStanding::invalid ? "invalid" : "unsigned"}, {"reason", w.reason}});
  return list;
}

struct IndexArgs {
  std::vector<std::string> inputs;
  std::string out;
  std::string base_url;
  std::optional<std::string> title;
  std::string deps_index;
  bool variants = false, no_variants = false;
  unsigned jobs = 0;
  bool copy = false, link = false, no_wait = false;
  SignatureArgs signatures;
};

nlohmann::json variant_index_json(const SiteReport& r) {
  nlohmann::json wheels = nlohmann::json::array(), left_out = nlohmann::json::array();
  for (const auto& w : r.variant_index.wheels)
    wheels.push_back({{"source", w.source},
                      {"filename", w.filename},
                      {"index", w.index},
                      {"version", w.version},
                      {"label", w.label},
                      {"properties", w.properties},
                      {"cuda_evidence", w.evidence},
                      {"unclaimed", w.unclaimed},
                      {"sha256", w.sha256}});
  for (const auto& l : r.variant_index.left_out) left_out.push_back({{"filename", l.filename}, {"reason", l.reason}});
  return {{"on", r.variant_index_on}, {"indexes", r.variant_index.indexes}, {"wheels", wheels}, {"left_out", left_out}};
}

void print_variant_index(const SiteReport& r, const Output& out) {
  for (const auto& v : r.variant_index.indexes) std::cout << "index     " << (r.site / v / "simple").string() << "/   (PEP 825 variants: uv --preview-features wheel-variants)\n";
  for (const auto& w : r.variant_index.wheels) out.info("variant " + w.label + ": " + w.filename);
  for (const auto& l : r.variant_index.left_out) out.info("not in the variant index: " + l.filename + ": " + l.reason);
}

}  // namespace

void register_index(CLI::App& app, Output& out, int& exit_code) {
  auto a = std::make_shared<IndexArgs>();
  auto* sub = app.add_subcommand("index", "Write (or update) a static package index: PEP 503/691 pages, PEP 658 metadata, one sub-index per torch/compute variant");
  sub->add_option("wheels", a->inputs, "Wheel files or directories of wheels to add")->type_name("WHEEL|DIR")->required();
  sub->add_option("-o,--out", a->out, "The site directory (created, or updated in place atomically); a symlink is kept and the site written at its target")->type_name("DIR")->required();
  url_option(sub->add_option("--base-url", a->base_url, "Absolute URL the site is served at (links become BASE/files/...); default: relative links")->type_name("URL"));
  sub->add_option("--title", a->title, "Title of the matrix pages (SITE/index.html, SITE/kernels/<project>.html); kept for later runs");
  url_option(sub->add_option("--deps-index-url", a->deps_index,
                             "The index the kernel pages' install lines take torch and Python dependencies from (a PyPI mirror); kept for later runs; "
                             "default: https://pypi.org/simple/"));
  sub->add_flag("--variants", a->variants,
                "Also write a PEP 825 variant index per torch version (SITE/variants/torchX.Y/simple/), where uv's preview picks the build for the GPU; kept for later runs");
  sub->add_flag("--no-variants", a->no_variants, "Stop writing the variant index");
  sub->add_option("-j,--jobs", a->jobs, "Threads reading new wheels (hash, RECORD, GPU code, signature); default: one per CPU")->type_name("N");
  sub->add_flag("--link", a->link,
                "The default, kept for scripts that pass it: new wheels are a reflink of the wheel in DIST, else a hard link of it (no bytes written; "
                "DIST's file and the site's are then one file: docs/publishing.md says what that means), else, across filesystems, a copy");
  sub->add_flag("--copy", a->copy, "New wheels: always a copy, never a reflink or a hard link of DIST's file");
  sub->add_flag("--no-wait", a->no_wait, "Fail at once (exit 7) when another kwheel index is updating the site, instead of waiting for it");
  add_signature_flags(sub, a->signatures, false);
  add_output_flags(sub, out);
  add_verbose_flag(sub, out, "List each unsigned wheel of the site on stderr (by default one line counts them)");
  add_examples(sub, {"kwheel index dist -o site                      # then serve site/, or pip install --index-url file://$PWD/site/simple",
                     "kwheel index dist -o site --title \"Acme kernels\" --base-url https://kernels.example.org/",
                     "kwheel index dist -o site --no-wait             # nightly: adds tonight's wheels, reads none it holds; fails if another run holds it"});
  sub->callback([a, &out, &exit_code] {
    check_output_dir("-o", a->out, "the site");
    SiteOptions o;
    o.signatures = signature_options(a->signatures);
    o.out = a->out;
    o.title = a->title;
    if (a->variants && a->no_variants) throw Error(ErrorKind::usage, "--variants and --no-variants contradict each other; pass one");
    if (a->variants || a->no_variants) o.variants = a->variants;
    o.jobs = a->jobs;
    if (a->copy && a->link) throw Error(ErrorKind::usage, "--copy and --link contradict each other; pass one");
    o.placement = a->copy ? Placement::copy : Placement::link;
    o.wait = !a->no_wait;
    o.progress = [&out](const std::string& line) { out.info(line); };
    // Their user:password@ is refused by build_site, which also checks the
    // one a site keeps from an earlier run.
    if (!a->deps_index.empty()) o.deps_index = checked_index_url("--deps-index-url", a->deps_index, "URL");
    if (!a->base_url.empty()) o.base_url = checked_index_url("--base-url", a->base_url, "URL");
    SiteReport r = build_site(wheel_file_names(a->inputs), o);
    exit_code = 0;
    warn_invalid_signatures(r, out);
    std::vector<std::string> pages;
    for (const auto& p : r.pages) pages.push_back((r.site / p).string());
    if (out.json) {
      out.emit_json({{"ok", true},
                     {"site", r.site.string()},
                     {"added", r.added},
                     {"unchanged", r.unchanged},
                     {"kept", r.kept},
                     {"projects", r.projects},
                     {"variants", r.variants},
                     {"title", r.title},
                     {"deps_index", r.deps_index},
                     {"signature_warnings", signature_warnings_json(r)},
                     {"variant_index", variant_index_json(r)},
                     {"pages", pages},
                     {"placed", r.placed},
                     {"rewritten", r.rewritten}});
      return;
    }
    if (out.quiet) return;
    list_lines("added     ", r.added);
    list_lines("unchanged ", r.unchanged);
    std::cout << "index     " << (r.site / "simple").string() << "/\n";
    for (const auto& v : r.variants) std::cout << "index     " << (r.site / v / "simple").string() << "/\n";
    print_variant_index(r, out);
    list_lines("page      ", pages);
    std::cout.flush();
    out.info("site " + r.site.string() + ": " + std::to_string(r.added.size()) + " added, " + std::to_string(r.unchanged.size()) + " unchanged, " +
             std::to_string(r.kept.size()) + " kept from before; " + std::to_string(r.projects.size()) + " project(s), " +
             std::to_string(r.variants.size()) + " variant sub-index(es)" + (r.rewritten ? "" : "; nothing changed, the site was left as it was"));
    note_unsigned(r, out);
  });
}

}  // namespace kwheel::cli
