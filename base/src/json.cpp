// json::parse and json::validate: simdjson's DOM parser decides the common
// case at full speed; whatever it declines (any error, integers beyond 64
// bits) and whatever it accepts but we must not (duplicate keys, depth) goes
// to the precise reader in json_strict.cpp, which alone writes error details.
//
// The fast path reads simdjson's tape and stage-1 structural indexes directly
// to recover source offsets, which the DOM API does not expose. Both layouts
// are those of simdjson 3.x (documented in its doc/tape.md); the differential
// fuzz target fuzz_json_paths checks the two paths build identical trees.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <simdjson.h>

#include "dot/base/jcs.h"
#include "json_internal.h"

static_assert(simdjson::SIMDJSON_VERSION_MAJOR == 3,
              "the fast path reads simdjson 3.x tape and structural-index layouts");

namespace dot::json {
namespace {

using detail::Node;

// Tape entry types of simdjson 3.x.
constexpr char kTapeRoot = 'r';
constexpr char kTapeStartArray = '[';
constexpr char kTapeEndArray = ']';
constexpr char kTapeStartObject = '{';
constexpr char kTapeEndObject = '}';
constexpr char kTapeString = '"';
constexpr char kTapeInt64 = 'l';
constexpr char kTapeUint64 = 'u';
constexpr char kTapeDouble = 'd';
constexpr char kTapeTrue = 't';
constexpr char kTapeFalse = 'f';
constexpr char kTapeNull = 'n';
constexpr std::uint64_t kPayloadMask = (std::uint64_t{1} << 56) - 1;

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

std::uint32_t payload32(std::uint64_t word) { return static_cast<std::uint32_t>(word); }
char tape_type(std::uint64_t word) { return static_cast<char>(word >> 56); }

// A key as the duplicate check sees it: its bytes and a fingerprint (length
// and first 8 bytes) so that most pairs differ on one integer comparison.
struct KeyRef {
  std::uint64_t print;
  std::uint32_t size;
  const char* data;
  bool operator==(const KeyRef& o) const {
    return print == o.print && size == o.size && (size <= 8 || std::memcmp(data, o.data, size) == 0);
  }
  bool operator<(const KeyRef& o) const {
    return std::string_view(data, size) < std::string_view(o.data, o.size);
  }
};

KeyRef key_ref(const std::uint8_t* strings, std::uint64_t word) {
  const std::uint8_t* p = strings + (word & kPayloadMask);
  KeyRef k;
  std::memcpy(&k.size, p, sizeof k.size);
  k.data = reinterpret_cast<const char*>(p + sizeof k.size);
  // simdjson's string buffer always has room past a string (its NUL, later
  // strings, then SIMDJSON_PADDING), so 8 bytes can be loaded whatever the
  // size; bytes past the key are masked off.
  std::uint64_t head;
  std::memcpy(&head, k.data, sizeof head);
  if (k.size < 8) head &= (std::uint64_t{1} << (8 * k.size)) - 1;
  k.print = head ^ (std::uint64_t{k.size} * 0x9E3779B97F4A7C15ull);
  return k;
}

// True when the object starting at tape[start] has no repeated key. Keys are
// reached by jumping over member values, so each object is checked where it
// starts and nested objects are left to their own start entries.
bool keys_unique(const std::uint64_t* tape, const std::uint8_t* strings, std::size_t start,
                 std::vector<KeyRef>& scratch) {
  std::uint64_t open = tape[start];
  std::uint32_t count = static_cast<std::uint32_t>((open >> 32) & 0xFFFFFF);
  if (count == 1 || count == 0) return true;  // 0xFFFFFF saturates: counted below
  std::size_t end = payload32(open) - 1;  // the '}' entry
  constexpr std::size_t kPairwise = 16;
  KeyRef small[kPairwise];
  std::size_t n = 0;
  scratch.clear();
  for (std::size_t k = start + 1; k < end;) {
    KeyRef key = key_ref(strings, tape[k]);
    if (n < kPairwise) {
      for (std::size_t j = 0; j < n; ++j)
        if (small[j] == key) return false;
      small[n] = key;
    } else {
      if (n == kPairwise) scratch.assign(small, small + kPairwise);
      scratch.push_back(key);
    }
    ++n;
    std::size_t v = k + 1;
    char vt = tape_type(tape[v]);
    if (vt == kTapeStartArray || vt == kTapeStartObject) k = payload32(tape[v]);
    else if (vt == kTapeInt64 || vt == kTapeUint64 || vt == kTapeDouble) k = v + 2;
    else k = v + 1;
  }
  if (n <= kPairwise) return true;
  std::sort(scratch.begin(), scratch.end());
  return std::adjacent_find(scratch.begin(), scratch.end()) == scratch.end();
}

// Runs simdjson on a padded buffer and walks its tape once. Returns false when
// the precise reader must decide. With `impl` it also builds the tree.
class FastPath {
 public:
  explicit FastPath(simdjson::dom::parser& parser) : parser_(parser) {}

  bool run(const char* padded, std::size_t size, const ReadLimits& limits, Document::Impl* impl) {
    src_ = padded;
    size_ = size;
    max_depth_ = limits.max_depth;
    // simdjson's own depth rule differs from ours (empty containers are not
    // counted), so give it room and check ours on the tape.
    std::size_t depth_cap = std::min(limits.max_depth, size) + 2;
    if (parser_.capacity() < std::max<std::size_t>(size, 1) || parser_.max_depth() < depth_cap) {
      if (parser_.allocate(std::max<std::size_t>(size, 1), std::max(depth_cap, parser_.max_depth())) !=
          simdjson::SUCCESS)
        return false;
    }
    auto doc = parser_.parse(reinterpret_cast<const std::uint8_t*>(src_), size_, false);
    if (doc.error() != simdjson::SUCCESS) return false;
    return impl ? walk<true>(impl) : walk<false>(nullptr);
  }

  // simdjson's parse alone (for the tape canonicalizer).
  bool parse_only(const char* padded, std::size_t size, const ReadLimits& limits) {
    src_ = padded;
    size_ = size;
    std::size_t depth_cap = std::min(limits.max_depth, size) + 2;
    if (parser_.capacity() < std::max<std::size_t>(size, 1) || parser_.max_depth() < depth_cap) {
      if (parser_.allocate(std::max<std::size_t>(size, 1), std::max(depth_cap, parser_.max_depth())) !=
          simdjson::SUCCESS)
        return false;
    }
    return parser_.parse(reinterpret_cast<const std::uint8_t*>(src_), size_, false).error() == simdjson::SUCCESS;
  }

 private:
  template <bool kBuild>
  bool walk(Document::Impl* impl) {
    const std::uint64_t* tape = parser_.doc.tape.get();
    const std::uint8_t* strings = parser_.doc.string_buf.get();
    const std::uint32_t* structurals = parser_.implementation->structural_indexes.get();
    std::uint32_t n_structurals = parser_.implementation->n_structural_indexes;
    std::uint32_t si = 0;
    // The next structural that is not ',' or ':' is where the tape entry starts.
    auto next_offset = [&]() -> std::uint32_t {
      while (si < n_structurals) {
        std::uint32_t pos = structurals[si++];
        char c = src_[pos];
        if (c != ',' && c != ':') return pos;
      }
      return static_cast<std::uint32_t>(size_);
    };

    std::optional<detail::TreeBuilder> build;
    if constexpr (kBuild) {
      impl->nodes.clear();
      impl->strings.clear();
      impl->strings.reserve(size_);
      // Every node but a container's end has its own structural.
      impl->nodes.reserve(n_structurals / 2 + 1);
      build.emplace(impl->nodes, impl->strings);
      open_.clear();
    }

    std::size_t depth = 0;
    std::size_t t = 1;  // tape[0] is the root
    for (;;) {
      std::uint64_t word = tape[t];
      switch (tape_type(word)) {
        case kTapeRoot:
          return true;
        case kTapeStartObject:
          if (!keys_unique(tape, strings, t, scratch_)) return false;
          [[fallthrough]];
        case kTapeStartArray:
          if (++depth > max_depth_) return false;
          if constexpr (kBuild)
            open_.push_back(build->open(tape_type(word) == kTapeStartObject ? Type::Object : Type::Array,
                                        next_offset()));
          ++t;
          break;
        case kTapeEndArray:
        case kTapeEndObject:
          --depth;
          if constexpr (kBuild) {
            next_offset();
            std::uint32_t node = open_.back();
            open_.pop_back();
            auto count = static_cast<std::uint32_t>((tape[payload32(word)] >> 32) & 0xFFFFFF);
            if (count == 0xFFFFFF) count = count_children(impl->nodes, node);
            build->close(node, count);
          }
          ++t;
          break;
        case kTapeString:
          if constexpr (kBuild) {
            const std::uint8_t* p = strings + (word & kPayloadMask);
            std::uint32_t len;
            std::memcpy(&len, p, sizeof len);
            std::uint32_t offset = next_offset();
            // Escapes make a string's spelling longer than its bytes. So when
            // the byte after `len` source bytes is a quote followed only by
            // whitespace up to the next structural, that quote closes the
            // string, nothing was escaped, and the source bytes are the value.
            std::size_t close = offset + 1 + std::size_t{len};
            std::size_t next = si < n_structurals ? structurals[si] : size_;
            bool plain = close < next && src_[close] == '"';
            for (std::size_t j = close + 1; plain && j < next; ++j) plain = is_ws(src_[j]);
            if (plain)
              build->string_in_source(offset, offset + 1, len);
            else
              build->string_copy(offset, std::string_view(reinterpret_cast<const char*>(p + sizeof len), len));
          }
          ++t;
          break;
        case kTapeInt64:
        case kTapeUint64:
        case kTapeDouble:
          if constexpr (kBuild) number(*build, tape_type(word), tape[t + 1], next_offset());
          t += 2;
          break;
        case kTapeTrue:
        case kTapeFalse:
        case kTapeNull:
          if constexpr (kBuild)
            build->scalar(tape_type(word) == kTapeNull ? Type::Null : Type::Bool, next_offset(),
                          tape_type(word) == kTapeTrue);
          ++t;
          break;
        default:
          return false;  // a tape we do not understand: let the precise reader decide
      }
    }
  }

  void number(detail::TreeBuilder& build, char type, std::uint64_t bits, std::uint32_t offset) {
    std::size_t end = offset;
    bool integer = true;
    while (end < size_ && is_number_char(src_[end])) {
      char c = src_[end++];
      if (c == '.' || c == 'e' || c == 'E') integer = false;
    }
    double value;
    if (type == kTapeDouble) {
      std::memcpy(&value, &bits, sizeof value);
    } else if (type == kTapeUint64) {
      value = static_cast<double>(bits);
    } else {
      std::int64_t i;
      std::memcpy(&i, &bits, sizeof i);
      value = static_cast<double>(i);
      if (i == 0 && src_[offset] == '-') value = -0.0;  // "-0": simdjson keeps no sign
    }
    build.number(offset, value, static_cast<std::uint32_t>(end - offset), integer);
  }

  // Members (objects) or elements (arrays) of a closed container, for the
  // rare container whose tape count saturated.
  static std::uint32_t count_children(const std::vector<Node>& nodes, std::uint32_t node) {
    std::uint32_t n = 0;
    bool object = nodes[node].type == Type::Object;
    for (std::size_t j = node + 1; j < nodes.size(); ++n) j = object ? nodes[j + 1].next : nodes[j].next;
    return n;
  }

  simdjson::dom::parser& parser_;
  const char* src_ = nullptr;
  std::size_t size_ = 0;
  std::size_t max_depth_ = 0;
  std::vector<std::uint32_t> open_;
  std::vector<KeyRef> scratch_;
};

// ---- canonical output straight from the tape ----
//
// RFC 8785 and Metewand output needs no source offsets or number spellings
// unless something is wrong, so it is written from simdjson's tape without
// building a Document. Anything unusual (an error of any kind, big integers,
// a Metewand unsafe integer) returns false and the caller takes the
// Document path, which produces the exact error.
class TapeCanonicalizer {
 public:
  explicit TapeCanonicalizer(simdjson::dom::parser& parser) : parser_(parser) {}

  bool run(std::size_t max_depth, bool metewand, std::string& out) {
    tape_ = parser_.doc.tape.get();
    strings_ = parser_.doc.string_buf.get();
    metewand_ = metewand;
    stack_.clear();
    members_.clear();
    std::size_t depth = 0;
    if (!emit(1, depth, max_depth, out)) return false;
    while (!stack_.empty()) {
      Frame& f = stack_.back();
      std::size_t value;
      if (f.object) {
        if (f.pos == f.count) {
          out += '}';
          members_.resize(f.base);
          stack_.pop_back();
          --depth;
          continue;
        }
        if (f.pos > 0) out += ',';
        const MemberRef& m = members_[f.base + f.pos];
        jcs::append_string(out, m.key);
        out += ':';
        value = m.value;
        ++f.pos;
      } else {
        if (f.next >= f.end) {
          out += ']';
          stack_.pop_back();
          --depth;
          continue;
        }
        if (f.pos > 0) out += ',';
        value = f.next;
        f.next = skip(value);
        ++f.pos;
      }
      if (!emit(value, depth, max_depth, out)) return false;  // may push: f is stale now
    }
    return true;
  }

 private:
  struct MemberRef {
    std::string_view key;
    std::size_t value;
  };
  struct Frame {
    bool object;
    std::size_t base, pos, count;  // objects: members_[base, base + count)
    std::size_t next, end;         // arrays: next element's tape index, the ']' entry
  };

  std::string_view string_at(std::size_t t) const {
    const std::uint8_t* p = strings_ + (tape_[t] & kPayloadMask);
    std::uint32_t len;
    std::memcpy(&len, p, sizeof len);
    return std::string_view(reinterpret_cast<const char*>(p + sizeof len), len);
  }

  std::size_t skip(std::size_t v) const {
    char vt = tape_type(tape_[v]);
    if (vt == kTapeStartArray || vt == kTapeStartObject) return payload32(tape_[v]);
    if (vt == kTapeInt64 || vt == kTapeUint64 || vt == kTapeDouble) return v + 2;
    return v + 1;
  }

  bool emit(std::size_t t, std::size_t& depth, std::size_t max_depth, std::string& out) {
    std::uint64_t word = tape_[t];
    switch (tape_type(word)) {
      case kTapeStartObject: {
        if (++depth > max_depth) return false;
        std::size_t base = members_.size();
        std::size_t end = payload32(word) - 1;
        for (std::size_t k = t + 1; k < end; k = skip(k + 1)) members_.push_back(MemberRef{string_at(k), k + 1});
        auto first = members_.begin() + static_cast<std::ptrdiff_t>(base);
        std::sort(first, members_.end(),
                  [](const MemberRef& x, const MemberRef& y) { return detail::utf16_less(x.key, y.key); });
        for (std::size_t j = base + 1; j < members_.size(); ++j)
          if (members_[j - 1].key == members_[j].key) return false;  // duplicate: the precise reader reports it
        out += '{';
        stack_.push_back(Frame{true, base, 0, members_.size() - base, 0, 0});
        return true;
      }
      case kTapeStartArray:
        if (++depth > max_depth) return false;
        out += '[';
        stack_.push_back(Frame{false, 0, 0, 0, t + 1, payload32(word) - 1});
        return true;
      case kTapeString:
        jcs::append_string(out, string_at(t));
        return true;
      case kTapeInt64:
      case kTapeUint64:
      case kTapeDouble: {
        std::uint64_t bits = tape_[t + 1];
        double d;
        if (tape_type(word) == kTapeDouble) {
          std::memcpy(&d, &bits, sizeof d);
        } else if (tape_type(word) == kTapeUint64) {
          d = static_cast<double>(bits);
        } else {
          std::int64_t i;
          std::memcpy(&i, &bits, sizeof i);
          d = static_cast<double>(i);
        }
        if (metewand_ && std::trunc(d) == d && std::fabs(d) > 9007199254740991.0) return false;
        jcs::append_number(out, d);
        return true;
      }
      case kTapeTrue: out += "true"; return true;
      case kTapeFalse: out += "false"; return true;
      case kTapeNull: out += "null"; return true;
      default: return false;
    }
  }

  simdjson::dom::parser& parser_;
  const std::uint64_t* tape_ = nullptr;
  const std::uint8_t* strings_ = nullptr;
  bool metewand_ = false;
  std::vector<Frame> stack_;
  std::vector<MemberRef> members_;
};

Status quick_envelope(std::string_view bytes, const ReadLimits& limits) {
  std::size_t max = std::min(limits.max_bytes, detail::kMaxIndexableBytes);
  if (bytes.size() > max || (bytes.size() >= 3 && bytes.substr(0, 3) == "\xEF\xBB\xBF"))
    return detail::check_envelope(bytes, limits);
  return {};
}

std::unique_ptr<char[]> padded_copy(std::string_view bytes) {
  auto buf = std::make_unique_for_overwrite<char[]>(bytes.size() + simdjson::SIMDJSON_PADDING);
  if (!bytes.empty()) std::memcpy(buf.get(), bytes.data(), bytes.size());
  std::memset(buf.get() + bytes.size(), 0, simdjson::SIMDJSON_PADDING);
  return buf;
}

}  // namespace

// ---- Parser ----

struct Parser::State {
  simdjson::dom::parser simdjson;
  FastPath fast{simdjson};
  TapeCanonicalizer canonical{simdjson};
  std::unique_ptr<char[]> padded;  // validate()'s copy of the input, reused
  std::size_t padded_capacity = 0;
};

Parser::Parser() : state_(std::make_unique<State>()) {}
Parser::~Parser() = default;
Parser::Parser(Parser&&) noexcept = default;
Parser& Parser::operator=(Parser&&) noexcept = default;

Result<Document> Parser::parse(std::string_view bytes, const ReadLimits& limits) {
  DOT_TRY(quick_envelope(bytes, limits));
  Document doc;
  Document::Impl& impl = *doc.impl_;
  impl.size = bytes.size();
  impl.source = padded_copy(bytes);
  if (state_->fast.run(impl.source.get(), impl.size, limits, &impl)) return doc;
  DOT_TRY(detail::parse_strict(impl, limits));
  return doc;
}

Status Parser::validate(std::string_view bytes, const ReadLimits& limits) {
  DOT_TRY(quick_envelope(bytes, limits));
  std::size_t need = bytes.size() + simdjson::SIMDJSON_PADDING;
  if (state_->padded_capacity < need) {
    state_->padded = std::make_unique_for_overwrite<char[]>(need);
    state_->padded_capacity = need;
  }
  if (!bytes.empty()) std::memcpy(state_->padded.get(), bytes.data(), bytes.size());
  std::memset(state_->padded.get() + bytes.size(), 0, simdjson::SIMDJSON_PADDING);
  if (state_->fast.run(state_->padded.get(), bytes.size(), limits, nullptr)) return {};
  Document::Impl impl;
  impl.size = bytes.size();
  impl.source = padded_copy(bytes);
  return detail::parse_strict(impl, limits);
}

bool Parser::canonical_fast(std::string_view bytes, const ReadLimits& limits, bool metewand, std::string& out) {
  std::size_t max = std::min(limits.max_bytes, detail::kMaxIndexableBytes);
  if (bytes.size() > max) return false;
  std::size_t need = bytes.size() + simdjson::SIMDJSON_PADDING;
  if (state_->padded_capacity < need) {
    state_->padded = std::make_unique_for_overwrite<char[]>(need);
    state_->padded_capacity = need;
  }
  if (!bytes.empty()) std::memcpy(state_->padded.get(), bytes.data(), bytes.size());
  std::memset(state_->padded.get() + bytes.size(), 0, simdjson::SIMDJSON_PADDING);
  if (!state_->fast.parse_only(state_->padded.get(), bytes.size(), limits)) return false;
  out.clear();
  out.reserve(bytes.size());
  return state_->canonical.run(limits.max_depth, metewand, out);
}

// ---- Document ----

Document::Document() : impl_(std::make_unique<Impl>()) {}
Document::~Document() = default;
Document::Document(Document&&) noexcept = default;
Document& Document::operator=(Document&&) noexcept = default;

std::string_view Document::source() const noexcept { return std::string_view(impl_->source.get(), impl_->size); }

Result<Document> parse(std::string_view bytes, const ReadLimits& limits) {
  Parser parser;
  return parser.parse(bytes, limits);
}

Status validate(std::string_view bytes, const ReadLimits& limits) {
  Parser parser;
  return parser.validate(bytes, limits);
}

// ---- Value ----

namespace {
const Node& node_of(const Document* doc, std::uint32_t index) { return doc->impl().nodes[index]; }
}  // namespace

Type Value::type() const noexcept { return node_of(doc_, index_).type; }
std::uint64_t Value::offset() const noexcept { return node_of(doc_, index_).offset; }
bool Value::as_bool() const noexcept { return node_of(doc_, index_).flag; }
double Value::as_double() const noexcept { return node_of(doc_, index_).number; }

std::string_view Value::number_text() const noexcept {
  const Node& n = node_of(doc_, index_);
  if (n.type != Type::Number) return {};
  return doc_->source().substr(n.offset, n.a);
}

bool Value::is_integer_spelling() const noexcept {
  const Node& n = node_of(doc_, index_);
  return n.type == Type::Number && n.flag;
}

std::string_view Value::as_string() const noexcept {
  const Node& n = node_of(doc_, index_);
  if (n.type != Type::String) return {};
  return doc_->impl().string_of(n);
}

std::size_t Value::size() const noexcept {
  const Node& n = node_of(doc_, index_);
  return n.type == Type::Array || n.type == Type::Object ? n.a : 0;
}

Value::ElementRange Value::elements() const noexcept {
  const Node& n = node_of(doc_, index_);
  if (n.type != Type::Array) return {doc_, index_ + 1, 0};
  return {doc_, index_ + 1, n.a};
}

Value::MemberRange Value::members() const noexcept {
  const Node& n = node_of(doc_, index_);
  if (n.type != Type::Object) return {doc_, index_ + 1, 0};
  return {doc_, index_ + 1, n.a};
}

std::optional<Value> Value::find(std::string_view key) const noexcept {
  for (Member m : members())
    if (m.key == key) return m.value;
  return std::nullopt;
}

Value::ElementIterator Value::ElementRange::begin() const { return ElementIterator(doc, first, count); }
Value::ElementIterator Value::ElementRange::end() const { return ElementIterator(doc, 0, 0); }
Value::MemberIterator Value::MemberRange::begin() const { return MemberIterator(doc, first, count); }
Value::MemberIterator Value::MemberRange::end() const { return MemberIterator(doc, 0, 0); }

Value::ElementIterator& Value::ElementIterator::operator++() {
  node_ = node_of(doc_, node_).next;
  --remaining_;
  return *this;
}

Member Value::MemberIterator::operator*() const {
  const Node& key = node_of(doc_, node_);
  return Member{doc_->impl().string_of(key), key.offset, Value(doc_, node_ + 1)};
}

Value::MemberIterator& Value::MemberIterator::operator++() {
  node_ = node_of(doc_, node_ + 1).next;
  --remaining_;
  return *this;
}

}  // namespace dot::json
