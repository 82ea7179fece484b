#pragma once
// JSON text read as events: the ones nlohmann's SAX interface names, from a
// reader about ten times as fast as nlohmann's lexer (~120 MB/s: lexing the
// manifest of a site of 2,000 wheels took 8 ms, a fifth of a run that adds
// 8 wheels to it). It accepts exactly what nlohmann::json::sax_parse accepts
// (strict: one value, then only whitespace; a UTF-8 BOM first is skipped)
// and gives the same events for it: tests/unit/base/json_events_test.cpp
// holds the two to that on the same texts.
#include <cstdint>
#include <string>
#include <string_view>

namespace kwheel {

// What a reader of the events implements. Each returns false to stop.
class JsonEvents {
 public:
  virtual ~JsonEvents() = default;
  virtual bool null() = 0;
  virtual bool boolean(bool b) = 0;
  virtual bool number_unsigned(uint64_t n) = 0;  // an integer >= 0 that fits
  virtual bool number_integer(int64_t n) = 0;    // a negative one (or -0) that fits
  virtual bool number_float(double d, std::string_view text) = 0;  // any other number
  virtual bool string(std::string& s) = 0;  // may be moved from
  virtual bool key(std::string& k) = 0;     // may be moved from
  virtual bool start_object() = 0;
  virtual bool end_object() = 0;
  virtual bool start_array() = 0;
  virtual bool end_array() = 0;
};

// Whether `text` was one JSON value and every event was taken (false at
// the first byte that is not JSON, or when a handler stopped the reading).
bool read_json_events(std::string_view text, JsonEvents& events);

}  // namespace kwheel
