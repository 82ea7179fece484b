#pragma once
// JSON written by hand where a document is large and its shape fixed: the
// site's manifest is thousands of small objects, and building each one as
// an nlohmann::json only to dump it cost more than the rest of a run that
// adds 8 wheels to a site of 2,000. The bytes are those of nlohmann's
// dump() of the same values (compact, strings escaped as it escapes them),
// so a manifest written either way is the same file; keys go out in the
// order given, which callers keep sorted, as nlohmann's objects are.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

// `s` as a JSON string, quotes included. A byte that is not part of
// well-formed UTF-8 becomes U+FFFD (nlohmann's dump() would throw: one bad
// byte in a wheel's METADATA must not make the manifest unwritable).
void append_json_string(std::string& out, std::string_view s);

// Compact JSON into a string, commas placed for the caller.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(uint64_t n);
  JsonWriter& value(int64_t n);
  JsonWriter& value(bool b);
  JsonWriter& strings(const std::vector<std::string>& items);  // an array of strings
  // key(k).value(v), the common case.
  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    return key(k).value(v);
  }

 private:
  void separate();
  std::string& out_;
  // One per open object or array: whether a member was written yet; a key
  // was just written (the value that follows takes no comma).
  std::vector<bool> started_;
  bool after_key_ = false;
};

}  // namespace kwheel
