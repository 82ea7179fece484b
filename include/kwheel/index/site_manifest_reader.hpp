#pragma once
// Reading SITE/kwheel-index.json (index/site_manifest.hpp writes it): the
// site's settings and each file as recorded, handed on as the parser
// reaches it. The parser's events fill the entry's fields directly: no
// document is built, not even one file's (building each file as a json
// value was a fifth of a run that adds 8 wheels to a site of 2,000).
#include <filesystem>
#include <functional>

#include "kwheel/index/site_manifest.hpp"

namespace kwheel::site {

// One file as the manifest records it, and what the record lacks (a site
// written by an older kwheel): read from the served wheel on this run.
struct RecordedFile {
  Entry e;
  bool gpu = false, hub = false, signature = false;
};

// The manifest's settings into `kept`, each file to `on_file` (its source
// is SITE/files/<filename>). The manifest is on disk, where anyone may edit
// it: a field of the wrong type counts as absent, a file without a usable
// name or project, nesting deeper than kwheel writes, more than a million
// files, or anything but a kwheel-index 1 manifest is Error(input).
void read_manifest(const std::filesystem::path& manifest, const std::filesystem::path& site, KeptSettings& kept,
                   const std::function<void(RecordedFile&&)>& on_file);

}  // namespace kwheel::site
