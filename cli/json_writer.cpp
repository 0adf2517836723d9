#include "json_writer.h"

#include <utility>

#include "dot/base/utf8.h"

namespace dot::cli {

void JsonWriter::before_value() {
  if (comma_) out_ += ',';
  comma_ = true;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  out_ += '}';
  comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  out_ += ']';
  comma_ = true;
  return *this;
}

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
