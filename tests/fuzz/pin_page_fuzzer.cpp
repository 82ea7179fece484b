// `kwheel pin` against a hostile index: the input is a project page, which
// a fake index (the unit tests' FakeTransport) serves as PEP 691 JSON and
// as PEP 503 HTML; pin() reads it as it reads any index, for one project
// and, through a root page that lists two, for every project (pin_all),
// up to the requirements text it hands out. Whatever the page says, that
// text holds only
//   - comments: '#' and printable ASCII (pip splits lines as Python's
//     str.splitlines() does, so no other byte may appear),
//   - the one index line kwheel chose: "--index-url http://fuzz.invalid/simple/",
//   - name==version --hash=sha256:<64 lowercase hex> (repeated for the
//     fitting files of the one version),
// as the review asked; and the pylock.toml of the same pin is TOML (toml++
// reads it), has no raw control byte, and holds exactly the pinned files.
// The rule is restated here, not taken from index_values.hpp. A page may be
// refused (any kwheel::Error); a text that breaks the rule is the bug.
//
// A variant index is reached too: "@VARIANTS_SHA256@" in the input becomes
// the sha256 of the variants.json this index serves at
// http://fuzz.invalid/files/img2gray-1-variants.json (see the seeds).
#include <memory>
#include <string>
#include <string_view>

#include "../unit/fake_transport.hpp"
#include "fuzz_support.hpp"
#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/index/pin.hpp"
#include "kwheel/index/pin_dependencies.hpp"
#include "kwheel/packaging/wheel_variant.hpp"

#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

using namespace kwheel;

namespace {

constexpr std::string_view kIndexLine = "--index-url http://fuzz.invalid/simple/";
constexpr const char* kRoot = "http://fuzz.invalid/simple/";
constexpr const char* kVariantsUrl = "http://fuzz.invalid/files/img2gray-1-variants.json";

bool alnum(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// name==version( --hash=sha256:<64 lowercase hex>)+, by hand: PEP 508's
// name, the bytes a PEP 440 version is written with.
bool pinned_line(std::string_view line) {
  const size_t eq = line.find("==");
  if (eq == std::string_view::npos || eq == 0) return false;
  const std::string_view name = line.substr(0, eq);
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name)
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  size_t i = eq + 2;
  const size_t version_start = i;
  while (i < line.size() && (alnum(line[i]) || std::string_view("._-+!").find(line[i]) != std::string_view::npos)) ++i;
  if (i == version_start) return false;
  constexpr std::string_view kHash = " --hash=sha256:";
  int hashes = 0;
  while (i < line.size()) {
    if (line.substr(i, kHash.size()) != kHash || line.size() < i + kHash.size() + 64) return false;
    i += kHash.size();
    for (size_t k = 0; k < 64; ++k)
      if (!lower_hex(line[i + k])) return false;
    i += 64;
    ++hashes;
  }
  return hashes > 0;
}

void check_requirements(const std::string& text) {
  FUZZ_CHECK(!text.empty() && text.back() == '\n');
  size_t start = 0;
  int requirements = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string_view line(text.data() + start, end - start);
    if (line.starts_with("#")) {
      for (char c : line) FUZZ_CHECK(c >= 0x20 && c < 0x7f);
    } else if (line != kIndexLine) {
      FUZZ_CHECK(pinned_line(line));
      ++requirements;
    }
    start = end + 1;
  }
  FUZZ_CHECK(requirements > 0);
}

// The lock of the same pin: TOML, no raw control byte (a TOML comment or
// basic string holds none), and the pinned files, value for value.
void check_pylock(const PinResult& r) {
  std::string lock;
  try {
    lock = pylock_with_dependencies({r}, {}, kRoot, "fuzz");
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);  // a URL with a login is refused
    return;
  }
  for (char c : lock) FUZZ_CHECK(c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f));
  toml::parse_result parsed = toml::parse(lock);
  FUZZ_CHECK(static_cast<bool>(parsed));
  const toml::array* wheels = parsed.table()["packages"][0]["wheels"].as_array();
  FUZZ_CHECK(wheels && wheels->size() == r.files.size());
  for (size_t i = 0; i < r.files.size(); ++i) {
    const toml::table* w = (*wheels)[i].as_table();
    FUZZ_CHECK(w != nullptr);
    FUZZ_CHECK((*w)["name"].value_or(std::string()) == r.files[i].filename);
    FUZZ_CHECK((*w)["url"].value_or(std::string()) == r.files[i].url);
    FUZZ_CHECK((*w)["hashes"]["sha256"].value_or(std::string()) == r.files[i].sha256);
  }
}

struct Index {
  std::string variants_json;
  std::string variants_sha256;
  Index() {
    VariantsJson v;
    v.namespace_priorities = {"nvidia"};
    v.providers["nvidia"] = nvidia_variant_provider();
    v.variants = {{"cu126", {{"nvidia", {{"cuda_version_lower_bound", {"12.6"}}}}}}, {"null", {}}};
    variants_json = render_variants_json(v);
    variants_sha256 = sha256_hex(variants_json);
  }
};

const Index& served() {
  static const Index index;
  return index;
}

PinRequest request(const std::shared_ptr<testing::FakeTransport>& transport) {
  PinRequest req;
  req.source = kRoot;
  req.target = described_target("2.7", "12.6");  // Python and platform unknown: more builds fit
  req.cuda_driver = "12.8";                       // for a variant index, instead of asking nvidia-smi
  req.sm_arch = "9.0";
  req.transport = transport;
  return req;
}

void pin_page(const std::string& page, bool json) {
  auto index = std::make_shared<testing::FakeTransport>();
  const std::string type = json ? "application/vnd.pypi.simple.v1+json" : "text/html";
  for (const char* project : {"img2gray", "acme"})
    index->on(std::string(kRoot) + project + "/", {{200, page, {{"content-type", type}}, "OK"}});
  index->on(kRoot, {{200, R"({"meta":{"api-version":"1.1"},"projects":[{"name":"img2gray"},{"name":"acme"}]})",
                     {{"content-type", "application/vnd.pypi.simple.v1+json"}}, "OK"}});
  index->on(kVariantsUrl, {testing::ok(served().variants_json)});
  PinRequest req = request(index);
  req.name = "img2gray";
  try {
    const PinResult r = pin(req);
    check_requirements(r.text);
    (void)to_json(r).dump();  // --json: nothing in it may be invalid UTF-8
    if (r.variant_label.empty()) check_pylock(r);
  } catch (const Error& e) {
    FUZZ_CHECK(std::string_view(e.what()).find('\n') == std::string_view::npos);
  }
  req.name.reset();
  try {
    const PinSetResult all = pin_all(req);
    check_requirements(all.text);
    (void)to_json(all).dump();
  } catch (const Error& e) {
    FUZZ_CHECK(std::string_view(e.what()).find('\n') == std::string_view::npos);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // No netrc or keyring of this machine: credentials are no part of this.
  static const TempDir home("pin-page-fuzz");
  ::setenv("HOME", home.path().c_str(), 1);
  ::unsetenv("NETRC");
  ::setenv("PIP_KEYRING_PROVIDER", "disabled", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string page = fuzz_string(data, size);
  for (size_t at; (at = page.find("@VARIANTS_SHA256@")) != std::string::npos;) page.replace(at, 17, served().variants_sha256);
  pin_page(page, true);
  pin_page(page, false);
  return 0;
}
