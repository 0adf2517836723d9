// ObjectReader: typed reading of one JSON object by exact field names.
#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "dot/base/error_kinds.h"
#include "json_internal.h"

namespace dot::json {
namespace {

std::string_view type_name(Type t) {
  switch (t) {
    case Type::Null:
      return "null";
    case Type::Bool:
      return "a boolean";
    case Type::Number:
      return "a number";
    case Type::String:
      return "a string";
    case Type::Array:
      return "an array";
    case Type::Object:
      return "an object";
  }
  return "a value";
}

}  // namespace

ObjectReader::ObjectReader(Value object, std::string_view what) : object_(object), what_(what) {
  if (!object.is_object()) {
    not_object_ = make_parse_error(base::ErrorKind::Malformed, object.offset(),
                                   fmt::format("{} must be an object, found {}", what_, type_name(object.type())));
  }
}

Result<Value> ObjectReader::required(std::string_view name) {
  if (not_object_) return *not_object_;
  asked_.push_back(name);
  if (auto v = object_.find(name)) return *v;
  return make_parse_error(base::ErrorKind::MissingField, object_.offset(),
                          fmt::format("{} lacks the required field {}", what_, detail::quote_for_detail(name)));
}

std::optional<Value> ObjectReader::optional(std::string_view name) {
  if (not_object_) return std::nullopt;
  asked_.push_back(name);
  return object_.find(name);
}

Status ObjectReader::finish() const {
  if (not_object_) return *not_object_;
  for (Member m : object_.members()) {
    if (std::find(asked_.begin(), asked_.end(), m.key) == asked_.end())
      return make_parse_error(base::ErrorKind::UnknownField, m.key_offset,
                              fmt::format("{} has the unknown field {}", what_, detail::quote_for_detail(m.key)));
  }
  return {};
}

namespace {
Error wrong_type(const std::string& what, std::string_view name, Value v, std::string_view expected) {
  return make_parse_error(base::ErrorKind::WrongType, v.offset(),
                          fmt::format("{}: field {} must be {}, found {}", what, detail::quote_for_detail(name),
                                      expected, type_name(v.type())));
}
}  // namespace

Result<std::string_view> ObjectReader::required_string(std::string_view name) {
  DOT_ASSIGN_OR_RETURN(Value v, required(name));
  if (!v.is_string()) return wrong_type(what_, name, v, "a string");
  return v.as_string();
}

Result<bool> ObjectReader::required_bool(std::string_view name) {
  DOT_ASSIGN_OR_RETURN(Value v, required(name));
  if (!v.is_bool()) return wrong_type(what_, name, v, "a boolean");
  return v.as_bool();
}

Result<std::uint64_t> ObjectReader::required_uint(std::string_view name, std::uint64_t max) {
  DOT_ASSIGN_OR_RETURN(Value v, required(name));
  if (!v.is_number() || !v.is_integer_spelling()) return wrong_type(what_, name, v, "an integer");
  std::string_view text = v.number_text();
  std::uint64_t n = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text[0] == '-' || res.ec != std::errc() || res.ptr != text.data() + text.size() || n > max)
    return make_parse_error(base::ErrorKind::OutOfRange, v.offset(),
                            fmt::format("{}: field {} must be an integer from 0 to {}, found {}", what_,
                                        detail::quote_for_detail(name), max, text.substr(0, 40)));
  return n;
}

Result<Value> ObjectReader::required_array(std::string_view name) {
  DOT_ASSIGN_OR_RETURN(Value v, required(name));
  if (!v.is_array()) return wrong_type(what_, name, v, "an array");
  return v;
}

Result<Value> ObjectReader::required_object(std::string_view name) {
  DOT_ASSIGN_OR_RETURN(Value v, required(name));
  if (!v.is_object()) return wrong_type(what_, name, v, "an object");
  return v;
}

}  // namespace dot::json
