#pragma once
// The one JSON writer of the command line: every document a command prints
// with --json (and the frames decoders' lines) is built with it. Strings take
// any bytes (dot/base/utf8.h append_json_string: invalid UTF-8 as U+FFFD), so
// the output is JSON whatever a plugin, a provider or a stored row holds.
// Commas are placed by the writer; keys are written in the order given (the
// engine's documents give them sorted, as docs/engine.md shows them).

#include <concepts>
#include <string>
#include <string_view>
#include <vector>

namespace dot::cli {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& string(std::string_view bytes);
  JsonWriter& string_or_null(std::string_view bytes);  // "" is null
  JsonWriter& boolean(bool value);
  JsonWriter& null();
  // An array of strings (a command line, a list of folders).
  JsonWriter& string_array(const std::vector<std::string>& items);
  // An array of records, each written by `write` (a record's writer).
  template <typename Items, typename Write>
  JsonWriter& array_of(const Items& items, Write&& write) {
    begin_array();
    for (const auto& item : items) write(*this, item);
    return end_array();
  }
  template <std::integral T>
  JsonWriter& number(T value) {
    return raw(std::to_string(value));
  }
  // A value that is JSON already (a canonical plan, an encoded jcs::Node, a
  // protobuf message printed as JSON).
  JsonWriter& raw(std::string_view json);
  // Members that are JSON already ("k":v,... or nothing), added to the open
  // object (a metewand FrameError's payload).
  JsonWriter& raw_members(std::string_view members);

  // The document so far.
  const std::string& text() const { return out_; }
  // The document and a newline: one line of output.
  std::string line() &&;

 private:
  void before_value();
  JsonWriter& open(char bracket);   // '{' or '['
  JsonWriter& close(char bracket);  // '}' or ']'
  std::string out_;
  bool comma_ = false;  // a value was written at this level: the next one needs a comma
};

}  // namespace dot::cli
