// Canonical JSON writers: parsed values (json::Value) and built trees
// (jcs::Node), under the three profiles of spec/jcs.md. The leaf writers for
// numbers and strings are in jcs_text.cpp.
#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "dot/base/jcs.h"
#include "json_internal.h"

namespace dot::jcs {

std::string_view profile_name(Profile p) noexcept {
  switch (p) {
    case Profile::Rfc8785: return "rfc8785";
    case Profile::Hello: return "hello";
    case Profile::Metewand: return "metewand";
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

Error violation(std::string kind, std::optional<std::uint64_t> offset, std::string detail) {
  return Error{Code::Validation, std::move(kind), std::move(detail), offset};
}

Status check_hello_string(std::string_view s, std::optional<std::uint64_t> offset) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7E)
      return violation("not_printable_ascii", offset,
                       fmt::format("hello profile: string {} has a character outside 32..126",
                                   json::detail::quote_for_detail(s)));
  }
  return {};
}

Status check_utf8(std::string_view s) {
  if (json::detail::utf8_valid_prefix(s) != s.size())
    return violation("utf8", std::nullopt, "string is not valid UTF-8");
  return {};
}

// Metewand: an integral value must be a safe integer.
Status check_metewand_number(double d, std::optional<std::uint64_t> offset, std::string_view spelled) {
  if (std::trunc(d) == d && std::fabs(d) > kMaxSafeInteger)
    return violation("unsafe_integer", offset,
                     fmt::format("metewand profile: integral number {} is outside +-(2^53-1)", spelled));
  return {};
}

std::string spelled_double(double d) {
  std::string s;
  append_number(s, d);
  return s;
}

// Canonical writer for parsed documents: iterative, so nesting depth is
// bounded by the reader's limit and never by the call stack.
class ValueWriter {
 public:
  ValueWriter(Profile profile, std::string& out) : profile_(profile), out_(out) {}

  Status run(json::Value root) {
    DOT_TRY(emit(root));
    while (!stack_.empty()) {
      Frame& f = stack_.back();
      if (f.pos == f.count) {
        out_ += f.object ? '}' : ']';
        if (f.object) members_.resize(f.base);
        stack_.pop_back();
        continue;
      }
      if (f.pos > 0) out_ += ',';
      json::Value next;
      if (f.object) {
        const MemberRef& m = members_[f.base + f.pos];
        DOT_TRY(string(m.key, m.key_offset));
        out_ += ':';
        next = m.value;
      } else {
        next = *f.it;
        ++f.it;
      }
      ++f.pos;
      DOT_TRY(emit(next));  // may push and invalidate f
    }
    return {};
  }

 private:
  struct MemberRef {
    std::string_view key;
    std::uint64_t key_offset;
    json::Value value;
  };
  struct Frame {
    bool object;
    std::size_t base, pos, count;
    json::Value::ElementIterator it;
  };

  Status emit(json::Value v) {
    switch (v.type()) {
      case json::Type::Null: out_ += "null"; return {};
      case json::Type::Bool: out_ += v.as_bool() ? "true" : "false"; return {};
      case json::Type::Number: return number(v);
      case json::Type::String: return string(v.as_string(), v.offset());
      case json::Type::Array:
        out_ += '[';
        stack_.push_back(Frame{false, 0, 0, v.size(), v.elements().begin()});
        return {};
      case json::Type::Object: {
        out_ += '{';
        std::size_t base = members_.size();
        for (json::Member m : v.members()) members_.push_back(MemberRef{m.key, m.key_offset, m.value});
        auto first = members_.begin() + static_cast<std::ptrdiff_t>(base);
        std::sort(first, members_.end(), [](const MemberRef& x, const MemberRef& y) { return json::detail::utf16_less(x.key, y.key); });
        stack_.push_back(Frame{true, base, 0, members_.size() - base, {}});
        return {};
      }
    }
    return violation("malformed", v.offset(), "unknown value type");
  }

  Status string(std::string_view s, std::uint64_t offset) {
    if (profile_ == Profile::Hello) DOT_TRY(check_hello_string(s, offset));
    append_string(out_, s);
    return {};
  }

  Status number(json::Value v) {
    double d = v.as_double();
    std::string_view text = v.number_text();
    if (!std::isfinite(d))  // the reader never produces these; guard the writer's contract anyway
      return violation("invalid_number", v.offset(), "number is not finite");
    if (profile_ == Profile::Hello) {
      std::string_view shown = text.substr(0, 40);
      if (!text.empty() && text[0] == '-')
        return violation("negative", v.offset(), fmt::format("hello profile: negative number {}", shown));
      if (!v.is_integer_spelling())
        return violation("fraction", v.offset(),
                         fmt::format("hello profile: number {} is not spelled as a plain integer", shown));
      if (d > kMaxSafeInteger)
        return violation("unsafe_integer", v.offset(),
                         fmt::format("hello profile: integer {} is above 2^53-1", shown));
    } else if (profile_ == Profile::Metewand) {
      DOT_TRY(check_metewand_number(d, v.offset(), text.substr(0, 40)));
    }
    append_number(out_, d);
    return {};
  }

  Profile profile_;
  std::string& out_;
  std::vector<Frame> stack_;
  std::vector<MemberRef> members_;
};

Status encode_node(const Node& node, Profile profile, std::string& out) {
  const Node::Storage& s = node.storage();
  switch (s.index()) {
    case 0: out += "null"; return {};
    case 1: out += std::get<bool>(s) ? "true" : "false"; return {};
    case 2: {
      std::int64_t i = std::get<Node::Int>(s).v;
      double d = static_cast<double>(i);
      if (profile == Profile::Hello) {
        if (i < 0) return violation("negative", std::nullopt, fmt::format("hello profile: negative number {}", i));
        if (d > kMaxSafeInteger)
          return violation("unsafe_integer", std::nullopt, fmt::format("hello profile: integer {} is above 2^53-1", i));
      } else if (profile == Profile::Metewand) {
        DOT_TRY(check_metewand_number(d, std::nullopt, std::to_string(i)));
      }
      append_number(out, d);
      return {};
    }
    case 3: {
      double d = std::get<double>(s);
      if (!std::isfinite(d)) return violation("invalid_number", std::nullopt, "number is not finite");
      if (profile == Profile::Hello) {
        if (std::signbit(d))
          return violation("negative", std::nullopt, fmt::format("hello profile: negative number {}", spelled_double(d)));
        if (std::trunc(d) != d)
          return violation("fraction", std::nullopt,
                           fmt::format("hello profile: number {} is not an integer", spelled_double(d)));
        if (d > kMaxSafeInteger)
          return violation("unsafe_integer", std::nullopt,
                           fmt::format("hello profile: integer {} is above 2^53-1", spelled_double(d)));
      } else if (profile == Profile::Metewand) {
        DOT_TRY(check_metewand_number(d, std::nullopt, spelled_double(d)));
      }
      append_number(out, d);
      return {};
    }
    case 4: {
      const std::string& str = std::get<std::string>(s);
      DOT_TRY(check_utf8(str));
      if (profile == Profile::Hello) DOT_TRY(check_hello_string(str, std::nullopt));
      append_string(out, str);
      return {};
    }
    case 5: {
      out += '[';
      bool first = true;
      for (const Node& e : std::get<Node::Array>(s)) {
        if (!first) out += ',';
        first = false;
        DOT_TRY(encode_node(e, profile, out));
      }
      out += ']';
      return {};
    }
    case 6: {
      const Node::Object& obj = std::get<Node::Object>(s);
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
            return violation("duplicate_key", std::nullopt,
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
  }
  return violation("malformed", std::nullopt, "unknown node type");
}

}  // namespace

Result<std::string> canonicalize(json::Value value, Profile profile) {
  std::string out;
  if (value.document()) out.reserve(value.document()->source().size());
  ValueWriter writer(profile, out);
  DOT_TRY(writer.run(value));
  return out;
}

Result<std::string> canonicalize_text(std::string_view json_text, Profile profile, const json::ReadLimits& limits) {
  json::Parser parser;
  // The hello profile needs number spellings (-0, 1.0), which only the
  // Document keeps; the others are written from the tape when all is well.
  if (profile != Profile::Hello) {
    std::string out;
    if (parser.canonical_fast(json_text, limits, profile == Profile::Metewand, out)) return out;
  }
  DOT_ASSIGN_OR_RETURN(json::Document doc, parser.parse(json_text, limits));
  return canonicalize(doc.root(), profile);
}

Status canonicalize_text_to(std::string_view json_text, Profile profile, const ChunkSink& sink,
                            const json::ReadLimits& limits, bool input_padded, std::size_t chunk) {
  chunk = std::max<std::size_t>(chunk, 1);
  if (input_padded && profile != Profile::Hello) {
    json::Parser parser;
    std::string buffer;
    Status sink_status;
    bool written = parser.canonical_fast_padded(json_text, limits, profile == Profile::Metewand, chunk, buffer,
                                                [&](std::string& out) {
                                                  sink_status = sink(out);
                                                  return sink_status.ok();
                                                });
    if (written) return sink_status;
  }
  // The exact error path (or unpadded input): the whole output first.
  DOT_ASSIGN_OR_RETURN(std::string out, canonicalize_text(json_text, profile, limits));
  std::string_view rest = out;
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
    case json::Type::Null: return null();
    case json::Type::Bool: return boolean(value.as_bool());
    case json::Type::Number: {
      std::string_view text = value.number_text();
      if (value.is_integer_spelling() && text != "-0") {
        std::int64_t i = 0;
        auto res = std::from_chars(text.data(), text.data() + text.size(), i);
        if (res.ec == std::errc() && res.ptr == text.data() + text.size()) return integer(i);
      }
      return number(value.as_double());
    }
    case json::Type::String: return string(std::string(value.as_string()));
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

}  // namespace dot::jcs
