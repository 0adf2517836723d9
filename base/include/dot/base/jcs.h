#pragma once
// Canonical JSON: RFC 8785 (JCS) and the two subset profiles of
// docs/spec/jcs.md ("hello" for plan hashing, "metewand" for Metewand
// messages). Output never contains whitespace; keys sort by UTF-16 code units.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "dot/base/json.h"
#include "dot/base/result.h"

namespace dot::jcs {

enum class Profile : std::uint8_t { Rfc8785, Hello, Metewand };

std::string_view profile_name(Profile p) noexcept;  // "rfc8785", "hello", "metewand"
std::optional<Profile> profile_from_name(std::string_view name) noexcept;

// Canonical bytes of a parsed value. Profile violations are Code::Validation
// with kind not_printable_ascii, fraction, negative, unsafe_integer or
// invalid_number and the offending value's offset.
Result<std::string> canonicalize(json::Value value, Profile profile);

// Strict parse (json::parse with `limits`) then canonicalize.
Result<std::string> canonicalize_text(std::string_view json_text, Profile profile, const json::ReadLimits& limits = {});

// Where canonicalize_text_to hands its output, piece by piece; an error it
// returns ends the writing and is returned as is.
using ChunkSink = std::function<Status(std::string_view)>;

// canonicalize_text with the output handed to `sink` in pieces of about
// `chunk` bytes instead of one string. Nothing reaches the sink unless the
// whole text is valid for the profile (a refused text leaves it untouched).
// With `input_padded`, json_text is followed by json::kPadding readable
// bytes, and when those are zeros (a json::PaddedText) the
// text is not copied (json::Parser::parse_borrowed).
Status canonicalize_text_to(std::string_view json_text, Profile profile, const ChunkSink& sink,
                            const json::ReadLimits& limits = {}, bool input_padded = false,
                            std::size_t chunk = 1024 * 1024);

// ECMAScript Number.prototype.toString of a finite binary64 value (-0 -> "0").
void append_number(std::string& out, double value);
// A JSON string literal with RFC 8785 escaping; `utf8` must be valid UTF-8.
void append_string(std::string& out, std::string_view utf8);

// An owning JSON tree for values built in code (messages, plans), encoded
// canonically. Object keys are unique (set() replaces).
class Node {
 public:
  using Array = std::vector<Node>;
  using Object = std::vector<std::pair<std::string, Node>>;

  static Node null() { return Node(std::monostate{}); }
  static Node boolean(bool b) { return Node(b); }
  static Node integer(std::int64_t i) { return Node(Int{i}); }
  static Node number(double d) { return Node(d); }
  static Node string(std::string s) { return Node(std::move(s)); }
  static Node array() { return Node(Array{}); }
  static Node object() { return Node(Object{}); }
  // Deep copy of a parsed value.
  static Node from(json::Value value);

  Node& push(Node element);                     // array only
  Node& set(std::string key, Node value);       // object only; returns *this
  const Node* get(std::string_view key) const;  // object only

  // Text encode() or encode_to() already wrote under `profile`, written
  // again verbatim: how a large document is encoded piece by piece (one
  // operation's small tree at a time) instead of as one tree of every value.
  // Encoding it under another profile is refused.
  static Node encoded(std::string canonical_text, Profile profile) {
    return Node(Encoded{std::move(canonical_text), profile});
  }
  // A value whose text `write` appends to the output in place, under
  // `profile`, when the tree is encoded: how a document too large to hold
  // twice (the operations of 100,000 paths) is written into its one buffer
  // instead of into a piece copied into it. `write` appends exactly one
  // canonical value; it runs once per encoding, and what it captures must
  // outlive that (a local tree encoded at once).
  using Writer = std::function<Status(std::string& out)>;
  static Node written(Writer write, Profile profile) { return Node(Written{std::move(write), profile}); }
  struct Int {
    std::int64_t v;
  };
  struct Encoded {
    std::string text;
    Profile profile;
  };
  struct Written {
    Writer write;
    Profile profile;
  };
  using Storage = std::variant<std::monostate, bool, Int, double, std::string, Array, Object, Encoded, Written>;
  const Storage& storage() const { return v_; }

 private:
  explicit Node(Storage v) : v_(std::move(v)) {}
  Storage v_;
};

// Canonical bytes of a built tree under a profile (same checks as canonicalize).
Result<std::string> encode(const Node& node, Profile profile);
// The same, appended to `out`; on an error `out` may hold part of the text.
Status encode_to(std::string& out, const Node& node, Profile profile);

// A string value as encode_to writes one under `profile` (valid UTF-8, the
// profile's own rules), appended to `out`: for a Node::written piece.
Status encode_string_to(std::string& out, std::string_view utf8, Profile profile);

// `items` as one array appended to `out`, each element's small tree made by
// `node_of` and encoded at once: how a list of 100,000 entries (a plan's
// operations, a dot.plan answer's) is encoded without a tree of every value.
template <class Range, class NodeOf>
Status encode_array_to(std::string& out, const Range& items, NodeOf node_of, Profile profile) {
  out += '[';
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += ',';
    first = false;
    DOT_TRY(encode_to(out, node_of(item), profile));
  }
  out += ']';
  return {};
}

}  // namespace dot::jcs
