#pragma once
// Static package indexes: the simple repository API's pages
// (index/simple_api.hpp) written as plain files any web server, or file://,
// can serve. The site's directory and manifest are index/site_directory.hpp
// and index/site_manifest.hpp.
//
// Site layout (docs/publishing.md):
//   SITE/files/<wheel>                          the wheels
//   SITE/files/<wheel>.metadata                 its METADATA, byte for byte
//   SITE/simple/index.html, index.json          every project
//   SITE/simple/<project>/index.html, index.json  every file of the project
//   SITE/<variant>/simple/...                   the same for one torch/compute
//                                               combination ("torch2.7-cu126"),
//                                               universal wheels in every one
//   SITE/variants/...                           with --variants: one PEP 825 variant index
//                                               per torch version (index/variant_index.hpp)
//   SITE/index.html                             every kernel's build matrix, and the sub-indexes
//   SITE/kernels/<project>.html                 one kernel's build matrix (index/matrix_page)
//   SITE/kwheel-index.json                      what kwheel indexed (sha256s)
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/index/matrix_page.hpp"
#include "kwheel/index/simple_api.hpp"
#include "kwheel/index/variant_index.hpp"
#include "kwheel/kernel/kernel_signature.hpp"

namespace kwheel {

// How a new wheel gets into SITE/files/ (site_directory.hpp's place_file).
enum class Placement {
  link,  // the default: a reflink of DIST's file, else a hard link of it, else (another filesystem) a copy
  copy,  // --copy: always a copy, so that DIST's file and the site's never share an inode
};

struct SiteOptions {
  std::filesystem::path out;   // SITE
  std::string base_url;        // absolute wheel URLs under BASE/files/; "" = relative links
  // The matrix pages' title, kept in the manifest for later runs; nullopt
  // keeps the site's (kDefaultPageTitle if it never had one).
  std::optional<std::string> title;
  // Whose signatures count, for the signer each matrix cell shows (the
  // signature a wheel carries, checked when it joins the site).
  SignatureOptions signatures;
  // The index the kernel pages' install lines take torch and the kernels'
  // Python dependencies from (a PyPI mirror), kept in the manifest for later
  // runs as the title is; "" keeps the site's (PyPI if it never had one).
  std::string deps_index;
  // Write the variant index (index/variant_index.hpp) too; kept in the
  // manifest as the title is, so nullopt keeps the site's choice.
  std::optional<bool> variants;
  unsigned jobs = 0;   // threads reading wheels (--jobs); 0: one per CPU
  // New wheels: a reflink of DIST's file, else a hard link of it, else a
  // copy (the default), or always a copy (--copy): site_directory.hpp. The
  // site's own files are never touched again (updated in place).
  Placement placement = Placement::link;
  bool wait = true;    // another run holds the site: wait for it (false: --no-wait fails)
  // One line for people while waiting for another run (stderr); may be empty.
  std::function<void(const std::string&)> progress;
};

// A wheel the pages show as unsigned or with a signature that failed: one
// console warning each, and in --json.
struct SignatureWarning {
  std::string filename;
  SignatureStanding standing;  // unsigned_ or invalid
  std::string reason;          // "it has no metadata.json.sigstore", "digest: ...", ...
};

struct SiteReport {
  std::filesystem::path site;
  std::vector<std::string> added;      // wheel filenames new in this run
  std::vector<std::string> unchanged;  // given again, same bytes as in the site
  std::vector<std::string> kept;       // already in the site, not given this time
  std::vector<std::string> projects;   // normalized names
  std::vector<std::string> variants;   // sub-index names
  std::string title;                   // the matrix pages' title
  std::vector<std::string> pages;      // the matrix pages, relative to the site: "index.html", "kernels/<project>.html"
  std::string deps_index;              // the index the install lines name for dependencies
  std::vector<SignatureWarning> signature_warnings;  // every wheel of the site shown unsigned or invalid, by filename
  bool variant_index_on = false;                     // the site has a variant index
  VariantIndexReport variant_index;
  // How new wheels got into files/: "reflink", "hard link" or "copy" (the
  // last one placed; "" when none was new).
  std::string placed;
  bool rewritten = true;  // false: nothing had changed, the site was left as it was
};

// Adds `wheels` to SITE. A new site is written in a temporary directory
// beside it and renamed into place; an existing one is updated in place
// (site_directory.hpp's commit_in_place): tonight's files and the pages
// whose bytes changed are written beside it and moved in, files before the
// pages that name them, each page replaced whole. Wheels the site already
// holds are not read again (their manifest records are trusted while the
// files' identities hold), its files are never touched again, and a page
// whose bytes did not change keeps its file (same mtime). A run that brings
// nothing new, with the same settings, writes nothing. Refuses a wheel whose filename
// is already in the site with other bytes, a site file whose bytes changed
// since it was indexed, and a non-empty SITE that kwheel did not write.
SiteReport build_site(const std::vector<std::string>& wheels, const SiteOptions& options);

// Refuses (Error(usage), naming `option` and the fix) a URL the kernel
// pages cannot put into a pasted install line as one shell word: a control
// character (C0, DEL, C1) or bytes that are not UTF-8 -- a newline ends the
// pasted command half-way, and ESC or a C1 byte starts a terminal sequence
// (one ends bracketed paste), so no quoting protects them -- and spaces,
// which no URL holds (RFC 3986) and pip would take as two. Everything else
// ('"$`;&|) is quoted, in the page and in the page's script alike. And a
// URL with user:password@ (in any of base/url_userinfo's readings): the
// pages, kwheel-index.json and --json are read by everyone the site serves.
void check_page_url(const std::string& option, const std::string& url);

}  // namespace kwheel
