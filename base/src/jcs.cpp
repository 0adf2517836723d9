// Canonical JSON writers: parsed values (json::Value) and built trees
// (jcs::Node), under the three profiles of docs/spec/jcs.md. The leaf writers for
// numbers and strings are in jcs_text.cpp.
#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "dot/base/error_kinds.h"
#include "dot/base/jcs.h"
#include "jcs_internal.h"
#include "json_internal.h"

namespace dot::jcs {

std::string_view profile_name(Profile p) noexcept {
  switch (p) {
    case Profile::Rfc8785:
      return "rfc8785";
    case Profile::Hello:
      return "hello";
    case Profile::Metewand:
      return "metewand";
  }
  return "rfc8785";
}

std::optional<Profile> profile_from_name(std::string_view name) noexcept {
  if (name == "rfc8785") return Profile::Rfc8785;
  if (name == "hello") return Profile::Hello;
  if (name == "metewand") return Profile::Metewand;
  return std::nullopt;
}

namespace {

constexpr double kMaxSafeInteger = 9007199254740991.0;  // 2^53 - 1

Error violation(base::ErrorKind kind, std::optional<std::uint64_t> offset, std::string detail) {
  Error e = make_error(kind, std::move(detail));
  e.offset = offset;
  return e;
}

Status check_hello_string(std::string_view s, std::optional<std::uint64_t> offset) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7E)
      return violation(
          base::ErrorKind::NotPrintableAscii, offset,
          fmt::format("hello profile: string {} has a character outside 32..126", json::detail::quote_for_detail(s)));
  }
  return {};
}

Status check_utf8(std::string_view s) {
  if (json::detail::utf8_valid_prefix(s) != s.size())
    return violation(base::ErrorKind::Utf8, std::nullopt, "string is not valid UTF-8");
  return {};
}

// Metewand: an integral value must be a safe integer.
Status check_metewand_number(double d, std::optional<std::uint64_t> offset, std::string_view spelled) {
  if (std::trunc(d) == d && std::fabs(d) > kMaxSafeInteger)
    return violation(base::ErrorKind::UnsafeInteger, offset,
                     fmt::format("metewand profile: integral number {} is outside +-(2^53-1)", spelled));
  return {};
}

std::string spelled_double(double d) {
  std::string s;
  append_number(s, d);
  return s;
}

// The canonical output as it is written: a buffer filled through a pointer,
// after asking for a value's worst case once. With a sink, the buffer is
// handed over and reused whenever it holds `chunk` bytes, so a large output
// is written from one buffer of `chunk` bytes, however long it is.
class Output {
 public:
  Output(const ChunkSink* sink, std::size_t chunk, std::size_t expected)
      : sink_(sink), chunk_(sink != nullptr ? std::max<std::size_t>(chunk, 1) : SIZE_MAX) {
    grow(sink_ != nullptr ? chunk + 4096 : expected + 64);
  }

  char* room(std::size_t n) {
    if (cap_ - used_ < n) grow(std::max(used_ + n, cap_ * 2));
    return buf_.get() + used_;
  }
  void wrote(char* end) { used_ = static_cast<std::size_t>(end - buf_.get()); }
  void put(char c) { *room(1) = c, ++used_; }
  void put(std::string_view s) {
    std::memcpy(room(s.size()), s.data(), s.size());
    used_ += s.size();
  }
  // Whether a sink is waiting for the `chunk` bytes the buffer holds.
  bool full() const { return used_ >= chunk_ && sink_ != nullptr; }
  // Hands what the buffer holds to the sink.
  Status flush() {
    if (used_ == 0 || sink_ == nullptr) return {};
    DOT_TRY((*sink_)(bytes()));
    used_ = 0;
    return {};
  }
  std::string_view bytes() const { return std::string_view(buf_.get(), used_); }

 private:
  void grow(std::size_t cap) {
    json::detail::grow_block_array(buf_, used_, cap);
    cap_ = cap;
  }
  const ChunkSink* sink_;
  std::size_t chunk_;
  json::detail::BlockArray<char> buf_;
  std::size_t cap_ = 0;
  std::size_t used_ = 0;
};

// Canonical writer for parsed documents, straight from the Document's node
// array: iterative, so nesting depth is bounded by the reader's limit and
// never by the call stack. Its steps return bool and keep the error aside:
// the loop runs once per value, and a Status per step costs more than the
// step itself on small values.
class ValueWriter {
 public:
  ValueWriter(const json::Document& doc, Profile profile, Output& out)
      : doc_(doc), impl_(doc.impl()), nodes_(impl_.nodes.data()), profile_(profile), out_(out) {}

  Status run(std::uint32_t root) {
    stack_.clear();
    members_.clear();
    if (!emit(root)) return std::move(*error_);
    while (!stack_.empty()) {
      Frame& f = stack_.back();
      if (f.pos == f.count) {
        out_.put(f.object ? '}' : ']');
        if (f.object) members_.resize(f.base);
        stack_.pop_back();
        continue;
      }
      if (f.pos > 0) out_.put(',');
      std::uint32_t next;
      if (f.object) {
        const MemberRef& m = members_[f.base + f.pos];
        if (!string(m.key, nodes_[m.key_node].offset)) return std::move(*error_);
        out_.put(':');
        next = m.key_node + 1;
      } else {
        next = f.next;
        f.next = json::detail::next_of(nodes_, next);
      }
      ++f.pos;
      if (!emit(next)) return std::move(*error_);  // may push and invalidate f
      if (out_.full()) DOT_TRY(out_.flush());
    }
    return {};
  }

 private:
  struct MemberRef {
    std::uint64_t order;  // json::detail::utf16_order_prefix(key)
    std::string_view key;
    std::uint32_t key_node;  // the value is the node after it
  };
  struct Frame {
    bool object;
    std::uint32_t pos, count;
    std::uint32_t next;  // arrays: the next element's node
    std::size_t base;    // objects: members_[base, base + count)
  };

  bool fail(Error e) {
    error_ = std::move(e);
    return false;
  }

  bool emit(std::uint32_t i) {
    const json::detail::Node& n = nodes_[i];
    switch (n.type) {
      case json::Type::Null:
        out_.put("null");
        return true;
      case json::Type::Bool:
        out_.put(n.flag ? std::string_view("true") : std::string_view("false"));
        return true;
      case json::Type::Number:
        return number(i);
      case json::Type::String:
        return string(impl_.string_of(n), n.offset);
      case json::Type::Array:
        out_.put('[');
        stack_.push_back(Frame{false, 0, n.lo(), i + 1, 0});
        return true;
      case json::Type::Object: {
        out_.put('{');
        std::size_t base = members_.size();
        std::uint32_t key = i + 1;
        // Wide objects sort by an integer prefix first; in small ones most
        // keys differ in their first byte and the prefix would cost more
        // than it saves (an order of 0 leaves every comparison to utf16_less).
        bool wide = n.lo() > 8;
        for (std::uint32_t m = 0; m < n.lo(); ++m, key = json::detail::next_of(nodes_, key + 1)) {
          std::string_view k = impl_.string_of(nodes_[key]);
          members_.push_back(MemberRef{wide ? json::detail::utf16_order_prefix(k) : 0, k, key});
        }
        auto first = members_.begin() + static_cast<std::ptrdiff_t>(base);
        std::sort(first, members_.end(), [](const MemberRef& x, const MemberRef& y) {
          return x.order != y.order ? x.order < y.order : json::detail::utf16_less(x.key, y.key);
        });
        stack_.push_back(Frame{true, 0, n.lo(), 0, base});
        return true;
      }
    }
    return fail(violation(base::ErrorKind::Malformed, n.offset, "unknown value type"));
  }

  bool string(std::string_view s, std::uint64_t offset) {
    if (profile_ == Profile::Hello) {
      Status st = check_hello_string(s, offset);
      if (!st.ok()) return fail(std::move(st).error());
    }
    out_.wrote(detail::put_string(out_.room(detail::string_room(s.size())), s));
    return true;
  }

  bool number(std::uint32_t i) {
    const json::detail::Node& n = nodes_[i];
    double d = n.number();
    if (!std::isfinite(d))  // the reader never produces these; guard the writer's contract anyway
      return fail(violation(base::ErrorKind::InvalidNumber, n.offset, "number is not finite"));
    if (profile_ != Profile::Rfc8785) {
      std::string_view text = json::Value(&doc_, i).number_text();
      if (profile_ == Profile::Hello) {
        std::string_view shown = text.substr(0, 40);
        if (!text.empty() && text[0] == '-')
          return fail(
              violation(base::ErrorKind::Negative, n.offset, fmt::format("hello profile: negative number {}", shown)));
        if (!n.flag)
          return fail(violation(base::ErrorKind::Fraction, n.offset,
                                fmt::format("hello profile: number {} is not spelled as a plain integer", shown)));
        if (d > kMaxSafeInteger)
          return fail(violation(base::ErrorKind::UnsafeInteger, n.offset,
                                fmt::format("hello profile: integer {} is above 2^53-1", shown)));
      } else {
        Status st = check_metewand_number(d, n.offset, text.substr(0, 40));
        if (!st.ok()) return fail(std::move(st).error());
      }
    }
    out_.wrote(detail::put_number(out_.room(detail::kMaxNumberBytes), d));
    return true;
  }

  const json::Document& doc_;
  const json::Document::Impl& impl_;
  const json::detail::Node* nodes_;
  Profile profile_;
  Output& out_;
  std::vector<Frame> stack_;
  std::vector<MemberRef> members_;
  std::optional<Error> error_;
};

// Writes the canonical bytes of doc's value at `root` to `out`.
Status write_value(const json::Document& doc, std::uint32_t root, Profile profile, Output& out) {
  ValueWriter writer(doc, profile, out);
  return writer.run(root);
}

Status encode_node(const Node& node, Profile profile, std::string& out);

// An integer node: the hello profile's and Metewand's number rules, then its
// shortest spelling.
Status encode_integer(std::int64_t i, Profile profile, std::string& out) {
  double d = static_cast<double>(i);
  if (profile == Profile::Hello) {
    if (i < 0)
      return violation(base::ErrorKind::Negative, std::nullopt, fmt::format("hello profile: negative number {}", i));
    if (d > kMaxSafeInteger)
      return violation(base::ErrorKind::UnsafeInteger, std::nullopt,
                       fmt::format("hello profile: integer {} is above 2^53-1", i));
  } else if (profile == Profile::Metewand) {
    DOT_TRY(check_metewand_number(d, std::nullopt, std::to_string(i)));
  }
  append_number(out, d);
  return {};
}

// A double node: finite, then the same rules (the hello profile wants a
// non-negative integer value), then its shortest spelling.
Status encode_double(double d, Profile profile, std::string& out) {
  if (!std::isfinite(d)) return violation(base::ErrorKind::InvalidNumber, std::nullopt, "number is not finite");
  if (profile == Profile::Hello) {
    if (std::signbit(d))
      return violation(base::ErrorKind::Negative, std::nullopt,
                       fmt::format("hello profile: negative number {}", spelled_double(d)));
    if (std::trunc(d) != d)
      return violation(base::ErrorKind::Fraction, std::nullopt,
                       fmt::format("hello profile: number {} is not an integer", spelled_double(d)));
    if (d > kMaxSafeInteger)
      return violation(base::ErrorKind::UnsafeInteger, std::nullopt,
                       fmt::format("hello profile: integer {} is above 2^53-1", spelled_double(d)));
  } else if (profile == Profile::Metewand) {
    DOT_TRY(check_metewand_number(d, std::nullopt, spelled_double(d)));
  }
  append_number(out, d);
  return {};
}

Status encode_array(const Node::Array& array, Profile profile, std::string& out) {
  out += '[';
  bool first = true;
  for (const Node& e : array) {
    if (!first) out += ',';
    first = false;
    DOT_TRY(encode_node(e, profile, out));
  }
  out += ']';
  return {};
}

// An object's members in the order of their keys' UTF-16 code units; a key
// given twice is refused.
Status encode_object(const Node::Object& obj, Profile profile, std::string& out) {
  std::vector<const std::pair<std::string, Node>*> order;
  order.reserve(obj.size());
  for (const auto& kv : obj) {
    DOT_TRY(check_utf8(kv.first));
    order.push_back(&kv);
  }
  std::sort(order.begin(), order.end(), [](auto* x, auto* y) { return json::detail::utf16_less(x->first, y->first); });
  out += '{';
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i > 0) {
      if (order[i - 1]->first == order[i]->first)
        return violation(base::ErrorKind::DuplicateKey, std::nullopt,
                         fmt::format("key {} appears twice", json::detail::quote_for_detail(order[i]->first)));
      out += ',';
    }
    if (profile == Profile::Hello) DOT_TRY(check_hello_string(order[i]->first, std::nullopt));
    append_string(out, order[i]->first);
    out += ':';
    DOT_TRY(encode_node(order[i]->second, profile, out));
  }
  out += '}';
  return {};
}

// Text written ahead of the tree (Encoded, Written) carries the checks of
// the profile it was written under, and only of that one.
Status check_piece_profile(Profile piece, Profile profile, std::string_view how) {
  if (piece == profile) return {};
  return violation(
      base::ErrorKind::Malformed, std::nullopt,
      fmt::format("a piece {} under profile {} inside a {} document", how, profile_name(piece), profile_name(profile)));
}

Status encode_node(const Node& node, Profile profile, std::string& out) {
  const Node::Storage& s = node.storage();
  switch (s.index()) {
    case 0:
      out += "null";
      return {};
    case 1:
      out += std::get<bool>(s) ? "true" : "false";
      return {};
    case 2:
      return encode_integer(std::get<Node::Int>(s).v, profile, out);
    case 3:
      return encode_double(std::get<double>(s), profile, out);
    case 4:
      return encode_string_to(out, std::get<std::string>(s), profile);
    case 5:
      return encode_array(std::get<Node::Array>(s), profile, out);
    case 6:
      return encode_object(std::get<Node::Object>(s), profile, out);
    case 7: {
      const Node::Encoded& piece = std::get<Node::Encoded>(s);
      DOT_TRY(check_piece_profile(piece.profile, profile, "encoded"));
      out += piece.text;
      return {};
    }
    case 8: {
      const Node::Written& piece = std::get<Node::Written>(s);
      DOT_TRY(check_piece_profile(piece.profile, profile, "written"));
      return piece.write(out);
    }
  }
  return violation(base::ErrorKind::Malformed, std::nullopt, "unknown node type");
}

}  // namespace

Status encode_string_to(std::string& out, std::string_view utf8, Profile profile) {
  DOT_TRY(check_utf8(utf8));
  if (profile == Profile::Hello) DOT_TRY(check_hello_string(utf8, std::nullopt));
  append_string(out, utf8);
  return {};
}

Result<std::string> canonicalize(json::Value value, Profile profile) {
  if (value.document() == nullptr) return violation(base::ErrorKind::Malformed, std::nullopt, "value of no document");
  Output out(nullptr, 0, value.document()->source().size());
  DOT_TRY(write_value(*value.document(), value.index(), profile, out));
  return std::string(out.bytes());
}

Result<std::string> canonicalize_text(std::string_view json_text, Profile profile, const json::ReadLimits& limits) {
  json::Parser parser;
  DOT_ASSIGN_OR_RETURN(json::Document doc, parser.parse(json_text, limits));
  return canonicalize(doc.root(), profile);
}

Status canonicalize_text_to(std::string_view json_text, Profile profile, const ChunkSink& sink,
                            const json::ReadLimits& limits, bool input_padded, std::size_t chunk) {
  chunk = std::max<std::size_t>(chunk, 1);
  json::Parser parser;
  json::Document doc;
  DOT_TRY(input_padded ? parser.parse_borrowed(json_text, doc, limits) : parser.parse_into(json_text, doc, limits));
  if (profile == Profile::Rfc8785) {
    // Once parsed, nothing can refuse the text under RFC 8785: the output
    // may leave as it is written.
    Output out(&sink, chunk, 0);
    DOT_TRY(write_value(doc, 0, profile, out));
    return out.flush();
  }
  // The subset profiles refuse values as they are written: the whole output first.
  Output out(nullptr, 0, json_text.size());
  DOT_TRY(write_value(doc, 0, profile, out));
  std::string_view rest = out.bytes();
  while (!rest.empty()) {
    std::size_t n = std::min(rest.size(), chunk);
    DOT_TRY(sink(rest.substr(0, n)));
    rest.remove_prefix(n);
  }
  return {};
}

// ---- Node ----

Node Node::from(json::Value value) {
  switch (value.type()) {
    case json::Type::Null:
      return null();
    case json::Type::Bool:
      return boolean(value.as_bool());
    case json::Type::Number: {
      std::string_view text = value.number_text();
      if (value.is_integer_spelling() && text != "-0") {
        std::int64_t i = 0;
        auto res = std::from_chars(text.data(), text.data() + text.size(), i);
        if (res.ec == std::errc() && res.ptr == text.data() + text.size()) return integer(i);
      }
      return number(value.as_double());
    }
    case json::Type::String:
      return string(std::string(value.as_string()));
    case json::Type::Array: {
      Node n = array();
      auto& a = std::get<Array>(n.v_);
      a.reserve(value.size());
      for (json::Value e : value.elements()) a.push_back(from(e));
      return n;
    }
    case json::Type::Object: {
      Node n = object();
      auto& o = std::get<Object>(n.v_);
      o.reserve(value.size());
      // Parsed objects have unique keys, so no replacement search is needed.
      for (json::Member m : value.members()) o.emplace_back(std::string(m.key), from(m.value));
      return n;
    }
  }
  return null();
}

Node& Node::push(Node element) {
  assert(std::holds_alternative<Array>(v_));
  if (auto* a = std::get_if<Array>(&v_)) a->push_back(std::move(element));
  return *this;
}

Node& Node::set(std::string key, Node value) {
  assert(std::holds_alternative<Object>(v_));
  if (auto* o = std::get_if<Object>(&v_)) {
    for (auto& kv : *o) {
      if (kv.first == key) {
        kv.second = std::move(value);
        return *this;
      }
    }
    o->emplace_back(std::move(key), std::move(value));
  }
  return *this;
}

const Node* Node::get(std::string_view key) const {
  if (const auto* o = std::get_if<Object>(&v_)) {
    for (const auto& kv : *o)
      if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

Result<std::string> encode(const Node& node, Profile profile) {
  std::string out;
  DOT_TRY(encode_node(node, profile, out));
  return out;
}

Status encode_to(std::string& out, const Node& node, Profile profile) { return encode_node(node, profile, out); }

}  // namespace dot::jcs
