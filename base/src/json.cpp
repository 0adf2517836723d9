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
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

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
constexpr char kTapeStartObject = '{';
constexpr char kTapeString = '"';
constexpr char kTapeInt64 = 'l';
constexpr char kTapeUint64 = 'u';
constexpr char kTapeDouble = 'd';
constexpr char kTapeTrue = 't';
constexpr char kTapeFalse = 'f';
constexpr char kTapeNull = 'n';
constexpr std::uint64_t kPayloadMask = (std::uint64_t{1} << 56) - 1;

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
  bool operator<(const KeyRef& o) const { return std::string_view(data, size) < std::string_view(o.data, o.size); }
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

// Objects of fewer than kPairwise keys are checked for a repeated key as each
// key arrives; larger ones are sorted once when they close.
constexpr std::size_t kPairwise = 16;

// One bit of an object's 64-bit bloom of key fingerprints: a key whose bit is
// not yet set is new without comparing it to any other.
inline std::uint64_t bloom_bit(const KeyRef& key) {
  return std::uint64_t{1} << ((key.print * 0x9E3779B97F4A7C15ull) >> 58);
}

using detail::advise_huge_pages;
using detail::prepare_foreign_buffer;

// Sizes simdjson's parser for `size` bytes when it is smaller, keeping room
// for our depth rule (simdjson's own differs: empty containers are not
// counted, so it gets two levels more and ours is checked on the tape).
// `with_document`: simdjson's DOM document (tape and strings) too; the tree
// builder runs stage 1 only and needs neither.
bool ensure_capacity(simdjson::dom::parser& parser, std::size_t size, std::size_t max_depth,
                     bool with_document = true) {
  std::size_t depth_cap = std::min(max_depth, size) + 2;
  // simdjson sizes everything for at least MINIMAL_DOCUMENT_CAPACITY bytes;
  // asking for less would reallocate on every call.
  std::size_t capacity = std::max<std::size_t>(size, simdjson::dom::MINIMAL_DOCUMENT_CAPACITY);
  bool document_ok = !with_document || parser.doc.capacity() >= capacity;
  if (parser.capacity() >= capacity && document_ok && parser.max_depth() >= depth_cap) return true;
  if (parser.capacity() < capacity || parser.max_depth() < depth_cap) {
    if (parser.allocate(std::max(capacity, parser.capacity()), std::max(depth_cap, parser.max_depth())) !=
        simdjson::SUCCESS)
      return false;
    if (capacity >= detail::kForeignBuffersFrom)
      prepare_foreign_buffer(parser.implementation->structural_indexes.get(), capacity * 4);
  }
  if (!with_document) return true;
  // The document's tape and strings too (simdjson would otherwise allocate
  // them inside parse(), after the advice below could be given).
  if (parser.doc.capacity() < capacity && parser.doc.allocate(capacity) != simdjson::SUCCESS) return false;
  // Lower bounds of simdjson 3.x's buffer sizes for this capacity: 4 bytes per
  // structural index, 8 per tape word, 5/3 bytes of strings per input byte.
  if (capacity < detail::kForeignBuffersFrom) return true;
  prepare_foreign_buffer(parser.doc.tape.get(), capacity * 8);
  advise_huge_pages(parser.doc.string_buf.get(), capacity / 3 * 5);
  return true;
}

// Runs simdjson on a padded buffer and walks its tape once, or with `impl`
// runs simdjson's stage 1 and builds the tree from its structural indexes
// (json_index.cpp). Returns false when the precise reader must decide.
class FastPath {
 public:
  explicit FastPath(simdjson::dom::parser& parser) : parser_(parser) {}

  bool run(const char* padded, std::size_t size, const ReadLimits& limits, Document::Impl* impl) {
    src_ = padded;
    size_ = size;
    max_depth_ = limits.max_depth;
    if (impl) {
      // impl->source is followed by kPadding zero bytes (Parser::parse_into).
      if (!ensure_capacity(parser_, size, limits.max_depth, false)) return false;
      // simdjson documents `parser.implementation` as private ("for
      // benchmarking access"): stage 1 alone has no public entry in 3.0.1.
      // Its public DOM parse is no substitute here: it refuses integers
      // beyond 64 bits (NUMBER_ERROR), so every document holding one would
      // go to the precise reader. An upgrade of simdjson must re-check this
      // call; fuzz_json_paths compares its trees with the precise reader's.
      simdjson::internal::dom_parser_implementation& stage1 = *parser_.implementation;
      if (stage1.stage1(reinterpret_cast<const std::uint8_t*>(src_), size_, simdjson::stage1_mode::regular) !=
          simdjson::SUCCESS)
        return false;
      return detail::build_from_index(*impl, stage1.structural_indexes.get(), stage1.n_structural_indexes, limits,
                                      index_scratch_);
    }
    if (!ensure_capacity(parser_, size, limits.max_depth)) return false;
    auto doc = parser_.parse(reinterpret_cast<const std::uint8_t*>(src_), size_, false);
    if (doc.error() != simdjson::SUCCESS) return false;
    return check_tape();
  }

 private:
  // Our rules simdjson does not apply (unique keys, depth), in one pass over
  // the tape that visits every entry once: members are read as key, value
  // pairs, so keys need no separate scan, and scalars are only stepped over.
  // While an object has fewer than kPairwise keys, each new key is tested
  // against the object's bloom of key fingerprints, and only a hit compares
  // it with the earlier keys (read again from the tape); larger objects are
  // sorted once when they close.
  bool check_tape() {
    const std::uint64_t* tape = parser_.doc.tape.get();
    const std::uint8_t* strings = parser_.doc.string_buf.get();
    frames_.clear();
    bool in_container = false, object = false;
    std::size_t end = 0, start = 0, depth = 0;
    std::uint32_t count = 0;  // keys so far (objects)
    std::uint64_t bloom = 0;
    std::size_t t = 1;  // tape[0] is the root
    for (;;) {
      if (in_container) {
        if (t == end) {
          if (object && count > kPairwise && !keys_unique_sorted(tape, strings, start)) return false;
          ++t;
          --depth;
          if (frames_.empty()) return tape_type(tape[t]) == kTapeRoot;
          const OpenFrame& parent = frames_.back();
          end = parent.end;
          start = parent.start;
          count = parent.count;
          object = parent.object;
          bloom = parent.bloom;
          frames_.pop_back();
          continue;
        }
        if (object) {
          // Keys are not stored: on a bloom hit (rare) the object's earlier
          // keys are read again from the tape.
          if (count < kPairwise) {
            KeyRef key = key_ref(strings, tape[t]);
            std::uint64_t bit = bloom_bit(key);
            if ((bloom & bit) != 0 && repeats_on_tape(tape, strings, start, t, key)) return false;
            bloom |= bit;
          }
          ++count;
          ++t;
        }
      }
      std::uint64_t word = tape[t];
      switch (tape_type(word)) {
        case kTapeStartObject:
        case kTapeStartArray:
          if (++depth > max_depth_) return false;
          if (in_container) frames_.push_back(OpenFrame{end, start, bloom, count, object});
          in_container = true;
          object = tape_type(word) == kTapeStartObject;
          end = payload32(word) - 1;
          start = t;
          count = 0;
          bloom = 0;
          ++t;
          continue;
        case kTapeInt64:
        case kTapeUint64:
        case kTapeDouble:
          t += 2;
          break;
        case kTapeString:
        case kTapeTrue:
        case kTapeFalse:
        case kTapeNull:
          ++t;
          break;
        default:
          return false;  // a tape we do not understand: let the precise reader decide
      }
      if (!in_container) return tape_type(tape[t]) == kTapeRoot;  // a scalar text
    }
  }

  // The tape index after the value at tape[v].
  static std::size_t skip_value(const std::uint64_t* tape, std::size_t v) {
    char vt = tape_type(tape[v]);
    if (vt == kTapeStartArray || vt == kTapeStartObject) return payload32(tape[v]);
    if (vt == kTapeInt64 || vt == kTapeUint64 || vt == kTapeDouble) return v + 2;
    return v + 1;
  }

  // True when `key` equals a key of the object opened at tape[start] that
  // comes before tape[at].
  static bool repeats_on_tape(const std::uint64_t* tape, const std::uint8_t* strings, std::size_t start, std::size_t at,
                              const KeyRef& key) {
    for (std::size_t k = start + 1; k < at; k = skip_value(tape, k + 1))
      if (key_ref(strings, tape[k]) == key) return true;
    return false;
  }

  // All keys of the (large) object opened at tape[start], sorted once.
  bool keys_unique_sorted(const std::uint64_t* tape, const std::uint8_t* strings, std::size_t start) {
    keys_.clear();
    std::size_t close = payload32(tape[start]) - 1;
    for (std::size_t k = start + 1; k < close; k = skip_value(tape, k + 1)) keys_.push_back(key_ref(strings, tape[k]));
    std::sort(keys_.begin(), keys_.end());
    return std::adjacent_find(keys_.begin(), keys_.end()) == keys_.end();
  }

  simdjson::dom::parser& parser_;
  const char* src_ = nullptr;
  std::size_t size_ = 0;
  std::size_t max_depth_ = 0;
  detail::IndexScratch index_scratch_;
  struct OpenFrame {
    std::size_t end, start;
    std::uint64_t bloom;
    std::uint32_t count;
    bool object;
  };
  std::vector<OpenFrame> frames_;
  std::vector<KeyRef> keys_;
};

Status quick_envelope(std::string_view bytes, const ReadLimits& limits) {
  std::size_t max = std::min(limits.max_bytes, detail::kMaxIndexableBytes);
  if (bytes.size() > max || (bytes.size() >= 3 && bytes.substr(0, 3) == "\xEF\xBB\xBF"))
    return detail::check_envelope(bytes, limits);
  return {};
}

detail::BlockArray<char> padded_copy(std::string_view bytes) {
  auto buf = detail::make_block_array<char>(bytes.size() + simdjson::SIMDJSON_PADDING);
  if (!bytes.empty()) std::memcpy(buf.get(), bytes.data(), bytes.size());
  std::memset(buf.get() + bytes.size(), 0, simdjson::SIMDJSON_PADDING);
  return buf;
}

}  // namespace

// ---- Parser ----

static_assert(kPadding >= simdjson::SIMDJSON_PADDING);

struct Parser::State {
  simdjson::dom::parser simdjson;
  FastPath fast{simdjson};
  std::unique_ptr<char[]> padded;  // validate()'s copy of the input, reused
  std::size_t padded_capacity = 0;

  // The input followed by zeroed padding in the reused buffer.
  const char* pad(std::string_view bytes) {
    std::size_t need = bytes.size() + kPadding;
    if (padded_capacity < need) {
      padded = std::make_unique_for_overwrite<char[]>(need);
      padded_capacity = need;
    }
    if (!bytes.empty()) std::memcpy(padded.get(), bytes.data(), bytes.size());
    std::memset(padded.get() + bytes.size(), 0, kPadding);
    return padded.get();
  }
};

namespace {

// The precise reader's verdict on a text the fast path declined.
Status strict_verdict(std::string_view bytes, const ReadLimits& limits) {
  Document::Impl impl;
  impl.size = bytes.size();
  impl.source = padded_copy(bytes);
  return detail::parse_strict(impl, limits);
}

}  // namespace

Parser::Parser() : state_(std::make_unique<State>()) {}
Parser::~Parser() = default;
Parser::Parser(Parser&&) noexcept = default;
Parser& Parser::operator=(Parser&&) noexcept = default;

Result<Document> Parser::parse(std::string_view bytes, const ReadLimits& limits) {
  Document doc;
  DOT_TRY(parse_into(bytes, doc, limits));
  return doc;
}

namespace {

// A Document that holds no value (and lends nothing).
void clear(Document::Impl& impl) {
  impl.nodes.clear();
  impl.strings.clear();
  impl.size = 0;
  impl.borrowed = nullptr;
}

// The nodes of impl's text (impl.text() and impl.size set): the stage-1 tree
// builder's, or the precise reader's with its verdict.
Status build_nodes(FastPath& fast, Document::Impl& impl, const ReadLimits& limits) {
  if (fast.run(impl.text(), impl.size, limits, &impl)) return {};
  Status st = detail::parse_strict(impl, limits);
  if (!st.ok()) clear(impl);
  return st;
}

}  // namespace

Status Parser::parse_into(std::string_view bytes, Document& doc, const ReadLimits& limits) {
  Document::Impl& impl = *doc.impl_;
  clear(impl);
  DOT_TRY(quick_envelope(bytes, limits));
  std::size_t need = bytes.size() + kPadding;
  if (impl.capacity < need) {
    impl.source.reset();  // before the new buffer: never hold both
    impl.source = detail::make_block_array<char>(need);
    impl.capacity = need;
  }
  if (!bytes.empty()) std::memcpy(impl.source.get(), bytes.data(), bytes.size());
  std::memset(impl.source.get() + bytes.size(), 0, kPadding);
  impl.size = bytes.size();
  return build_nodes(state_->fast, impl, limits);
}

Status Parser::parse_borrowed(std::string_view bytes, Document& doc, const ReadLimits& limits) {
  Document::Impl& impl = *doc.impl_;
  clear(impl);
  // The tree builder stops its scans at the padding's zero bytes; padding
  // that is not all zeros is not lent but copied, as parse_into does.
  const char* pad = bytes.data() + bytes.size();
  if (std::any_of(pad, pad + kPadding, [](char c) { return c != 0; })) return parse_into(bytes, doc, limits);
  DOT_TRY(quick_envelope(bytes, limits));
  impl.borrowed = bytes.data();
  impl.size = bytes.size();
  return build_nodes(state_->fast, impl, limits);
}

Status Parser::validate(std::string_view bytes, const ReadLimits& limits) {
  DOT_TRY(quick_envelope(bytes, limits));
  if (state_->fast.run(state_->pad(bytes), bytes.size(), limits, nullptr)) return {};
  return strict_verdict(bytes, limits);
}

Status Parser::validate_padded(std::string_view bytes, const ReadLimits& limits) {
  DOT_TRY(quick_envelope(bytes, limits));
  if (state_->fast.run(bytes.data(), bytes.size(), limits, nullptr)) return {};
  return strict_verdict(bytes, limits);
}

// ---- Document ----

Document::Document() : impl_(std::make_unique<Impl>()) {}
Document::~Document() = default;
Document::Document(Document&&) noexcept = default;
Document& Document::operator=(Document&&) noexcept = default;

std::string_view Document::source() const noexcept { return std::string_view(impl_->text(), impl_->size); }

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
double Value::as_double() const noexcept {
  const Node& n = node_of(doc_, index_);
  return n.type == Type::Number ? n.number() : 0.0;
}

std::string_view Value::number_text() const noexcept {
  const Node& n = node_of(doc_, index_);
  if (n.type != Type::Number) return {};
  // Not stored (it would cost every node 4 bytes): the spelling ends at the
  // first byte that cannot continue a number, and the source is grammar-checked.
  std::string_view src = doc_->source();
  std::size_t end = n.offset;
  while (end < src.size() && is_number_char(src[end])) ++end;
  return src.substr(n.offset, end - n.offset);
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
  return n.type == Type::Array || n.type == Type::Object ? n.lo() : 0;
}

Value::ElementRange Value::elements() const noexcept {
  const Node& n = node_of(doc_, index_);
  if (n.type != Type::Array) return {doc_, index_ + 1, 0};
  return {doc_, index_ + 1, n.lo()};
}

Value::MemberRange Value::members() const noexcept {
  const Node& n = node_of(doc_, index_);
  if (n.type != Type::Object) return {doc_, index_ + 1, 0};
  return {doc_, index_ + 1, n.lo()};
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
  node_ = detail::next_of(doc_->impl().nodes.data(), node_);
  --remaining_;
  return *this;
}

Member Value::MemberIterator::operator*() const {
  const Node& key = node_of(doc_, node_);
  return Member{doc_->impl().string_of(key), key.offset, Value(doc_, node_ + 1)};
}

Value::MemberIterator& Value::MemberIterator::operator++() {
  node_ = detail::next_of(doc_->impl().nodes.data(), node_ + 1);
  --remaining_;
  return *this;
}

}  // namespace dot::json
