#pragma once
// The one JSON writer of the command line: every document a command prints
// with --json (and the frames decoders' lines) is built with it. Strings take
// any bytes (dot/base/utf8.h append_json_string: invalid UTF-8 as U+FFFD), so
// the output is JSON whatever a plugin, a provider or a stored row holds.
// Commas are placed by the writer; keys are written in the order given (the
// engine's documents give them sorted, as docs/engine.md shows them).

#include <concepts>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace dot::cli {

class JsonWriter {
 public:
  // Where a long document goes as it is written (write_stdout): the text is
  // handed over whenever a value begins with at least kSpillBytes held, so
  // that a plan of 100,000 paths is never held whole as its JSON. false: the
  // output failed; nothing more is handed over.
  using Spill = std::function<bool(std::string_view)>;
  static constexpr std::size_t kSpillBytes = 64 * 1024;

  JsonWriter() = default;
  explicit JsonWriter(Spill spill) : spill_(std::move(spill)) {}

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

  // The document so far (of a writer that spills: what it has not handed over).
  const std::string& text() const { return out_; }
  // The document and a newline: one line of output (of a writer that
  // spills: the rest of it).
  std::string line() &&;
  // False once a spill failed.
  bool spilled_ok() const { return spill_ok_; }

 private:
  void before_value();
  JsonWriter& open(char bracket);   // '{' or '['
  JsonWriter& close(char bracket);  // '}' or ']'
  void spill_if_long();

  std::string out_;
  Spill spill_;
  bool spill_ok_ = true;
  bool comma_ = false;  // a value was written at this level: the next one needs a comma
};

}  // namespace dot::cli
