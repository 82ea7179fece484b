// The text files of a wheel's .dist-info that kwheel reads from wheels it
// did not write (validate, publish, index): RECORD (CSV) and METADATA
// (email headers). The archive around them is the wheel target's.
#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/packaging/record.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

using namespace kwheel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz_string(data, size);

  try {  // WheelArchive::verify_record
    const auto rows = parse_record(text, "fuzz.whl");
    // What kwheel writes, Python's csv module reads back; so must we.
    FUZZ_CHECK(parse_record(format_record(rows), "again") == rows);
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::input);
  }

  // WheelArchive's constructor (Name, Version, Requires-Python, Requires-Dist
  // for index, publish and validate).
  const MetadataFields fields = parse_metadata_fields(text);
  for (const auto& [key, value] : fields) {
    FUZZ_CHECK(!key.empty());
    FUZZ_CHECK(key == "Description" || (key.find(':') == std::string::npos && key.find('\n') == std::string::npos));
  }
  return 0;
}
