#pragma once
// The strict JSON reader every decoder of the project stands on (simdjson
// underneath). It accepts exactly one RFC 8259 JSON text and refuses, each with
// its own kind and the byte offset that proves it:
//
//   kind             when
//   too_large        input longer than ReadLimits::max_bytes (offset = max_bytes)
//   bom              input starts with EF BB BF
//   utf8             invalid UTF-8 (offset of the first bad byte)
//   depth            nesting deeper than ReadLimits::max_depth (offset of the opening bracket)
//   duplicate_key    a key repeated in one object, compared after unescaping (offset of the repeat)
//   invalid_unicode  a lone surrogate escape such as "\ud800" (offset of the escape)
//   invalid_number   a number that overflows binary64, e.g. 1e400 (offset of the number)
//   malformed        anything else the JSON grammar rejects, empty input included
//   trailing         anything but whitespace after the one value
//
// All of them carry Code::Validation; a protocol layer re-labels the code
// (e.g. DPP uses Code::Protocol) and keeps kind and offset.
// Among errors, the one with the smallest offset is reported, except that
// too_large, bom and utf8 are checked over the whole input first.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"

namespace dot::json {

enum class Type : std::uint8_t { Null, Bool, Number, String, Array, Object };

struct ReadLimits {
  std::size_t max_bytes = 64 * 1024 * 1024;
  // Depth counts open '[' and '{' from the outermost: max_depth = 16 accepts
  // 16 levels and rejects 17. Scalars at the top level have depth 0.
  std::size_t max_depth = 128;
};

class Document;
class Value;

struct Member;

// A cheap handle to one value inside a Document; valid while the Document lives.
class Value {
 public:
  Type type() const noexcept;
  bool is_null() const noexcept { return type() == Type::Null; }
  bool is_bool() const noexcept { return type() == Type::Bool; }
  bool is_number() const noexcept { return type() == Type::Number; }
  bool is_string() const noexcept { return type() == Type::String; }
  bool is_array() const noexcept { return type() == Type::Array; }
  bool is_object() const noexcept { return type() == Type::Object; }

  // Byte offset in the source where this value starts.
  std::uint64_t offset() const noexcept;

  bool as_bool() const noexcept;  // Bool only
  // The number's IEEE-754 binary64 value (integers beyond 2^53 or 2^64 rounded
  // to nearest; underflow gives +-0).
  double as_double() const noexcept;  // Number only
  // The number exactly as spelled in the source ("-0", "1.0", "1e3").
  std::string_view number_text() const noexcept;  // Number only
  // True when number_text() is an integer spelling: optional '-', digits, no
  // fraction, no exponent.
  bool is_integer_spelling() const noexcept;  // Number only
  // The unescaped string (valid UTF-8).
  std::string_view as_string() const noexcept;  // String only

  // Arrays: element count; objects: member count; 0 otherwise.
  std::size_t size() const noexcept;

  class ElementIterator;
  class MemberIterator;
  struct ElementRange {
    ElementIterator begin() const;
    ElementIterator end() const;
    const Document* doc;
    std::uint32_t first, count;
  };
  struct MemberRange {
    MemberIterator begin() const;
    MemberIterator end() const;
    const Document* doc;
    std::uint32_t first, count;
  };
  // Elements of an array in order (empty range for other types).
  ElementRange elements() const noexcept;
  // Members of an object in source order (empty range for other types).
  MemberRange members() const noexcept;
  // The member value with exactly this (unescaped) key, if present.
  std::optional<Value> find(std::string_view key) const noexcept;

  Value() = default;
  Value(const Document* doc, std::uint32_t index) : doc_(doc), index_(index) {}
  const Document* document() const noexcept { return doc_; }
  std::uint32_t index() const noexcept { return index_; }

 private:
  const Document* doc_ = nullptr;
  std::uint32_t index_ = 0;
};

struct Member {
  std::string_view key;      // unescaped
  std::uint64_t key_offset;  // where the key's opening quote is
  Value value;
};

class Value::ElementIterator {
 public:
  using difference_type = std::ptrdiff_t;
  using value_type = Value;
  ElementIterator() = default;
  ElementIterator(const Document* doc, std::uint32_t node, std::uint32_t remaining)
      : doc_(doc), node_(node), remaining_(remaining) {}
  Value operator*() const { return Value(doc_, node_); }
  ElementIterator& operator++();
  ElementIterator operator++(int) {
    auto c = *this;
    ++*this;
    return c;
  }
  bool operator==(const ElementIterator& o) const { return remaining_ == o.remaining_; }

 private:
  const Document* doc_ = nullptr;
  std::uint32_t node_ = 0;
  std::uint32_t remaining_ = 0;
};

class Value::MemberIterator {
 public:
  using difference_type = std::ptrdiff_t;
  using value_type = Member;
  MemberIterator() = default;
  MemberIterator(const Document* doc, std::uint32_t node, std::uint32_t remaining)
      : doc_(doc), node_(node), remaining_(remaining) {}
  Member operator*() const;
  MemberIterator& operator++();
  MemberIterator operator++(int) {
    auto c = *this;
    ++*this;
    return c;
  }
  bool operator==(const MemberIterator& o) const { return remaining_ == o.remaining_; }

 private:
  const Document* doc_ = nullptr;
  std::uint32_t node_ = 0;
  std::uint32_t remaining_ = 0;
};

// A parsed JSON text. Owns a copy of the source bytes, a flat pre-order node
// array and an arena of unescaped strings; movable, not copyable. A
// default-constructed Document holds no value (do not call root() on it).
class Document {
 public:
  Document();
  ~Document();
  Document(Document&&) noexcept;
  Document& operator=(Document&&) noexcept;
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  Value root() const noexcept { return Value(this, 0); }
  std::string_view source() const noexcept;

  struct Impl;
  const Impl& impl() const noexcept { return *impl_; }

 private:
  friend class Parser;
  std::unique_ptr<Impl> impl_;
};

// Parse one strict JSON text. Errors are Code::Validation with the kinds above.
Result<Document> parse(std::string_view bytes, const ReadLimits& limits = {});

// The same checks and the same errors as parse(), without building a tree:
// the fast path for framers that only need to know a text is acceptable.
Status validate(std::string_view bytes, const ReadLimits& limits = {});

// Readable bytes the *_padded functions need after the end of their input.
// Their values do not matter (a line buffer's next bytes, zeros past the end
// of a json::PaddedText): they are read by simdjson's wide loads, never parsed.
inline constexpr std::size_t kPadding = 64;

// A reusable reader with the same rules and errors as parse() and validate().
// It keeps simdjson's buffers between calls, so a loop over many texts (a
// frame reader) or over large ones (megabytes: no fresh page faults per call)
// runs at simdjson's speed. One per thread; not thread-safe.
class Parser {
 public:
  Parser();
  ~Parser();
  Parser(Parser&&) noexcept;
  Parser& operator=(Parser&&) noexcept;
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  Result<Document> parse(std::string_view bytes, const ReadLimits& limits = {});
  Status validate(std::string_view bytes, const ReadLimits& limits = {});

  // parse() into an existing Document, reusing its buffers (source copy, node
  // array, string arena): a loop that parses into the same Document touches
  // no fresh memory once the buffers have grown. On error `doc` holds no value.
  Status parse_into(std::string_view bytes, Document& doc, const ReadLimits& limits = {});

  // validate() of bytes followed by at least kPadding readable bytes (any
  // values): no copy of the input is made unless the text is refused.
  Status validate_padded(std::string_view bytes, const ReadLimits& limits = {});

  // parse_into() of bytes followed by at least kPadding readable bytes that
  // outlive `doc` and stay unchanged. When those bytes are zeros (a
  // json::PaddedText), the Document points into the input instead of
  // copying it (jcs canonicalize of a file); otherwise it copies.
  Status parse_borrowed(std::string_view bytes, Document& doc, const ReadLimits& limits = {});

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Typed object reading: fields by exact, case-sensitive name; unknown and
// missing fields rejected. Usage:
//   ObjectReader r(value, "initialize result");      // kind "malformed" if not an object
//   auto id = r.required("id");                      // missing -> "missing_field"
//   auto sdk = r.optional("sdk");
//   DOT_TRY(r.finish());                             // unknown -> "unknown_field"
// Errors are Code::Validation with the field's offset; callers re-label the code.
class ObjectReader {
 public:
  ObjectReader(Value object, std::string_view what);
  Result<Value> required(std::string_view name);
  std::optional<Value> optional(std::string_view name);
  // Fails on the first member (by source order) that was never asked for.
  Status finish() const;

  Result<std::string_view> required_string(std::string_view name);
  Result<bool> required_bool(std::string_view name);
  // A non-negative integer spelled as plain digits, at most max.
  Result<std::uint64_t> required_uint(std::string_view name, std::uint64_t max);
  Result<Value> required_array(std::string_view name);
  Result<Value> required_object(std::string_view name);

 private:
  Value object_;
  std::string what_;
  std::vector<std::string_view> asked_;
  std::optional<Error> not_object_;
};

}  // namespace dot::json
