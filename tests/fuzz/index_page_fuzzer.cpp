// Package index pages, as `kwheel pin` reads them from any index URL (PEP
// 503 HTML or PEP 691 JSON, root and project pages), then what pin decides
// from each listed file (filename, version, local label, fit); and an
// index's error page, as publish turns it into a one-line message.
#include "../unit/test_support.hpp"
#include "fuzz_support.hpp"
#include "kwheel/validate/compat.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/index/publish.hpp"
#include "kwheel/index/simple_api.hpp"
#include "kwheel/validate/validate.hpp"
#include "kwheel/packaging/wheel_filename.hpp"

using namespace kwheel;

namespace {

void decide(const IndexFile& f) {  // pin(): per candidate file
  WheelFilename w;
  try {
    w = parse_wheel_filename(f.filename);
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);
    return;
  }
  (void)read_label(w.version);
  (void)Version::try_parse(w.version);
  InterpreterInfo described;  // described_target("2.7", "12.6"): Python and platform not checked
  described.torch = "2.7.0";
  described.cuda = "12.6";
  (void)filename_incompatibility(w, described, "auto");
  // probe_interpreter(): every tag checked
  (void)filename_incompatibility(w, kwheel::testing::linux_cpython311("2.7.0", "12.6"), "auto");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string body = fuzz_string(data, size);
  for (bool json : {false, true}) {
    try {
      (void)parse_root_page(body, json, "fuzz");
    } catch (const Error& e) {
      FUZZ_CHECK(e.kind() == ErrorKind::input);
    }
    try {
      for (const IndexFile& f : json ? parse_project_json(body, "fuzz") : parse_project_html(body, "fuzz")) {
        if (!json) FUZZ_CHECK(f.url.find('#') == std::string::npos);  // the #sha256= fragment is split off
        decide(f);
      }
    } catch (const Error& e) {
      FUZZ_CHECK(e.kind() == ErrorKind::input);
    }
  }
  const std::string line = server_message("Conflict", body);
  FUZZ_CHECK(line.size() <= 300);
  FUZZ_CHECK(line.find('\n') == std::string::npos);
  return 0;
}
