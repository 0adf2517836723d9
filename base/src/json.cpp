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
#include <cstring>

#include <simdjson.h>

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

bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// Small objects are checked pairwise; bigger ones sorted.
bool has_duplicate(std::vector<std::string_view>& keys, std::size_t base) {
  std::size_t n = keys.size() - base;
  if (n < 2) return false;
  auto first = keys.begin() + static_cast<std::ptrdiff_t>(base);
  if (n <= 16) {
    for (std::size_t i = base; i + 1 < keys.size(); ++i)
      for (std::size_t j = i + 1; j < keys.size(); ++j)
        if (keys[i].size() == keys[j].size() && keys[i] == keys[j]) return true;
    return false;
  }
  std::sort(first, keys.end());
  return std::adjacent_find(first, keys.end()) != keys.end();
}

// Runs simdjson on a padded buffer and walks its tape. Returns false when the
// precise reader must decide. With `impl` it also builds the tree.
class FastPath {
 public:
  FastPath(const char* padded, std::size_t size, const ReadLimits& limits)
      : src_(padded), size_(size), limits_(limits) {}

  bool run(Document::Impl* impl) {
    std::size_t depth_cap = std::min(limits_.max_depth, size_) + 2;
    if (parser_.allocate(std::max<std::size_t>(size_, 1), depth_cap) != simdjson::SUCCESS) return false;
    auto doc = parser_.parse(reinterpret_cast<const std::uint8_t*>(src_), size_, false);
    if (doc.error() != simdjson::SUCCESS) return false;
    return impl ? walk<true>(impl) : walk<false>(nullptr);
  }

 private:
  struct Frame {
    std::uint32_t node;
    std::uint32_t count;
    std::size_t key_base;
    bool object;
  };

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
    auto tape_string = [&](std::uint64_t word) {
      const std::uint8_t* p = strings + (word & kPayloadMask);
      std::uint32_t len;
      std::memcpy(&len, p, sizeof len);
      return std::string_view(reinterpret_cast<const char*>(p + sizeof len), len);
    };

    std::optional<detail::TreeBuilder> build;
    if constexpr (kBuild) {
      impl->nodes.clear();
      impl->strings.clear();
      impl->strings.reserve(size_);
      // Roughly one node per structural; avoids regrowth on typical documents.
      impl->nodes.reserve(n_structurals / 2 + 1);
      build.emplace(impl->nodes, impl->strings);
    }
    stack_.clear();
    keys_.clear();

    std::size_t t = 1;  // tape[0] is the root
    for (;;) {
      std::uint64_t word = tape[t];
      char type = static_cast<char>(word >> 56);
      if (type == kTapeRoot) break;
      std::uint32_t offset = kBuild ? next_offset() : 0;
      // In an object, every other entry at this level is a key.
      bool is_key = !stack_.empty() && stack_.back().object && (stack_.back().count & 1) == 0 &&
                    type != kTapeEndObject;
      switch (type) {
        case kTapeStartArray:
        case kTapeStartObject: {
          if (stack_.size() >= limits_.max_depth) return false;
          if (!stack_.empty()) ++stack_.back().count;
          Frame f{0, 0, keys_.size(), type == kTapeStartObject};
          if constexpr (kBuild) f.node = build->open(f.object ? Type::Object : Type::Array, offset);
          stack_.push_back(f);
          ++t;
          continue;
        }
        case kTapeEndArray:
        case kTapeEndObject: {
          Frame& f = stack_.back();
          if (f.object && has_duplicate(keys_, f.key_base)) return false;
          if constexpr (kBuild) build->close(f.node, f.object ? f.count / 2 : f.count);
          keys_.resize(f.key_base);
          stack_.pop_back();
          ++t;
          continue;
        }
        case kTapeString: {
          std::string_view s = tape_string(word);
          if (is_key) keys_.push_back(s);
          if constexpr (kBuild) build->string_copy(offset, s);
          ++t;
          break;
        }
        case kTapeInt64:
        case kTapeUint64:
        case kTapeDouble: {
          std::uint64_t bits = tape[t + 1];
          if constexpr (kBuild) {
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
            build->number(offset, value, static_cast<std::uint32_t>(end - offset), integer);
          }
          t += 2;
          break;
        }
        case kTapeTrue:
        case kTapeFalse:
        case kTapeNull:
          if constexpr (kBuild)
            build->scalar(type == kTapeNull ? Type::Null : Type::Bool, offset, type == kTapeTrue);
          ++t;
          break;
        default:
          return false;  // a tape we do not understand: let the precise reader decide
      }
      if (!stack_.empty()) ++stack_.back().count;
    }
    return true;
  }

  const char* src_;
  std::size_t size_;
  const ReadLimits& limits_;
  simdjson::dom::parser parser_;
  std::vector<Frame> stack_;
  std::vector<std::string_view> keys_;
};

Status quick_envelope(std::string_view bytes, const ReadLimits& limits) {
  std::size_t max = std::min(limits.max_bytes, detail::kMaxIndexableBytes);
  if (bytes.size() > max || (bytes.size() >= 3 && bytes.substr(0, 3) == "\xEF\xBB\xBF"))
    return detail::check_envelope(bytes, limits);
  return {};
}

}  // namespace

// ---- Document ----

Document::Document() : impl_(std::make_unique<Impl>()) {}
Document::~Document() = default;
Document::Document(Document&&) noexcept = default;
Document& Document::operator=(Document&&) noexcept = default;

std::string_view Document::source() const noexcept { return std::string_view(impl_->source.data(), impl_->size); }

Result<Document> parse(std::string_view bytes, const ReadLimits& limits) {
  DOT_TRY(quick_envelope(bytes, limits));
  Document doc;
  Document::Impl& impl = *doc.impl_;
  impl.size = bytes.size();
  impl.source.resize(bytes.size() + simdjson::SIMDJSON_PADDING);
  if (!bytes.empty()) std::memcpy(impl.source.data(), bytes.data(), bytes.size());
  {
    FastPath fast(impl.source.data(), impl.size, limits);
    if (fast.run(&impl)) return doc;
  }
  DOT_TRY(detail::parse_strict(impl, limits));
  return doc;
}

Status validate(std::string_view bytes, const ReadLimits& limits) {
  DOT_TRY(quick_envelope(bytes, limits));
  simdjson::padded_string padded(bytes.data(), bytes.size());
  {
    FastPath fast(padded.data(), bytes.size(), limits);
    if (fast.run(nullptr)) return {};
  }
  Document::Impl impl;
  impl.size = bytes.size();
  impl.source.assign(bytes.data(), bytes.size());
  return detail::parse_strict(impl, limits);
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
  return std::string_view(doc_->impl().strings.data() + n.a, n.b);
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
  return Member{std::string_view(doc_->impl().strings.data() + key.a, key.b), key.offset, Value(doc_, node_ + 1)};
}

Value::MemberIterator& Value::MemberIterator::operator++() {
  node_ = node_of(doc_, node_ + 1).next;
  --remaining_;
  return *this;
}

}  // namespace dot::json
