// The one JSON writer of the command line (json_writer.h): commas, nesting and
// string escaping in one place.
#include "json_writer.h"

#include <utility>

#include "dot/base/utf8.h"

namespace dot::cli {

void JsonWriter::before_value() {
  spill_if_long();
  if (comma_) out_ += ',';
  comma_ = true;
}

// At the start of a value: a prefix of the document goes, and nothing of
// the writer's state (comma_, the nesting its caller keeps) depends on it.
void JsonWriter::spill_if_long() {
  if (!spill_ || out_.size() < kSpillBytes) return;
  if (spill_ok_) spill_ok_ = spill_(out_);
  out_.clear();
}

JsonWriter& JsonWriter::open(char bracket) {
  before_value();
  out_ += bracket;
  comma_ = false;  // the first value inside needs no comma
  return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
  out_ += bracket;
  comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() { return open('{'); }
JsonWriter& JsonWriter::end_object() { return close('}'); }
JsonWriter& JsonWriter::begin_array() { return open('['); }
JsonWriter& JsonWriter::end_array() { return close(']'); }

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  append_json_string(out_, name);
  out_ += ':';
  comma_ = false;  // the value that follows belongs to this key
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view bytes) {
  before_value();
  append_json_string(out_, bytes);
  return *this;
}

JsonWriter& JsonWriter::string_or_null(std::string_view bytes) { return bytes.empty() ? null() : string(bytes); }

JsonWriter& JsonWriter::string_array(const std::vector<std::string>& items) {
  begin_array();
  for (const auto& item : items) string(item);
  return end_array();
}

JsonWriter& JsonWriter::boolean(bool value) { return raw(value ? "true" : "false"); }

JsonWriter& JsonWriter::null() { return raw("null"); }

JsonWriter& JsonWriter::raw(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

JsonWriter& JsonWriter::raw_members(std::string_view members) { return members.empty() ? *this : raw(members); }

std::string JsonWriter::line() && {
  out_ += '\n';
  return std::move(out_);
}

}  // namespace dot::cli
