// Wheels kwheel did not write, read as validate, publish and index read
// them: the zip (central directory, local headers, deflate streams), the
// .dist-info lookup, METADATA, the RECORD check, then what each command
// takes from the archive. Input: the wheel's filename, '\n', the zip bytes.
#include <regex>
#include <string_view>

#include "../unit/test_support.hpp"
#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/index/publish.hpp"
#include "kwheel/packaging/record.hpp"
#include "kwheel/kernel/repo_layout.hpp"
#include "kwheel/validate/validate.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

using namespace kwheel;

namespace {

bool safe(std::string path) {
  if (path.ends_with("/")) path.pop_back();  // a directory member
  return unsafe_path_reason(path).empty();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nl = input.find('\n');
  if (nl == std::string_view::npos) return 0;
  const std::string filename(input.substr(0, nl));

  std::unique_ptr<WheelArchive> wheel;
  try {
    wheel = std::make_unique<WheelArchive>(filename, std::string(input.substr(nl + 1)));
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);
    return 0;
  }
  const WheelArchive& w = *wheel;
  FUZZ_CHECK(w.dist_info().ends_with(".dist-info"));
  FUZZ_CHECK(normalize_name(w.field("Name")) == normalize_name(w.filename().name));
  // What index and publish list a wheel under is its filename's version:
  // METADATA must not say otherwise (issue 14: a cu126 sub-index entry).
  const auto said = Version::try_parse(w.field("Version"));
  const auto named = Version::try_parse(w.filename().version);
  FUZZ_CHECK(said && named && *said == *named);

  // validate, publish and index refuse a wheel whose RECORD check fails;
  // one that passes must be safe to unpack: every member is listed, hashed,
  // and at a path an installer may write.
  const std::vector<std::string> problems = w.verify_record();
  if (problems.empty()) {
    for (const auto& m : w.members()) FUZZ_CHECK(safe(m));
    for (const auto& row : parse_record(w.read(w.dist_info() + "/RECORD", 64 << 20), "fuzz")) FUZZ_CHECK(safe(row.path));
  }

  try {  // index: the .metadata file beside the wheel is METADATA byte for byte
    FUZZ_CHECK(w.read(w.dist_info() + "/METADATA") == w.metadata_text());
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);
  }
  (void)Version::try_parse(w.field("Version"));

  try {  // publish: the upload form's fields
    const std::vector<FormPart> form = upload_form(w, std::string(64, '0'));
    FUZZ_CHECK(!form.empty() && form.back().name == "content");
    // The name is twine's re.sub('[^A-Za-z0-9.]+', '-', name.strip()),
    // checked against std::regex where it is safe to run.
    const std::string name = w.field("Name");
    if (name.size() <= 512)
      for (const auto& part : form)
        if (part.name == "name") {
          static const std::regex unsafe("[^A-Za-z0-9.]+");
          const size_t a = name.find_first_not_of(" \t\r\n");
          const std::string stripped = a == std::string::npos ? "" : name.substr(a, name.find_last_not_of(" \t\r\n") - a + 1);
          FUZZ_CHECK(part.value == std::regex_replace(stripped, unsafe, "-"));
        }
  } catch (const Error& e) {
  }

  try {  // validate: does it fit this interpreter (tags, label, Requires-Dist torch)
    (void)incompatibility(w, kwheel::testing::linux_cpython311("2.7.1+cu126", "12.6"), "auto");
  } catch (const Error& e) {
  }
  return 0;
}
