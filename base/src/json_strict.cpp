// The precise strict reader: a single left-to-right pass that stops at the
// first problem, which is therefore the one with the smallest offset. It runs
// whenever the simdjson fast path declines a text (errors, integers beyond
// 64 bits, duplicate keys, depth), so it alone decides every error message.
#include <charconv>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "dot/base/error_kinds.h"
#include "dot/base/jcs.h"
#include "json_internal.h"

namespace dot::json::detail {
namespace {

Error reject(base::ErrorKind kind, std::uint64_t offset, std::string detail) {
  return make_parse_error(kind, offset, std::move(detail));
}

}  // namespace

bool spelling_is_huge(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && text[i] == '-') ++i;
  long long magnitude = 0;  // digits before the point, or minus leading zeros after it
  bool nonzero_seen = false;
  for (; i < text.size() && is_digit(text[i]); ++i) {
    if (text[i] != '0') nonzero_seen = true;
    if (nonzero_seen) ++magnitude;
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && is_digit(text[i]); ++i) {
      if (nonzero_seen) continue;
      if (text[i] != '0')
        nonzero_seen = true;
      else
        --magnitude;
    }
  }
  long long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
    for (; i < text.size(); ++i) {
      if (exponent < 1'000'000'000) exponent = exponent * 10 + (text[i] - '0');
    }
    if (negative) exponent = -exponent;
  }
  return magnitude + exponent > 0;
}

namespace {

class StrictParser {
 public:
  StrictParser(Document::Impl& impl, const ReadLimits& limits)
      : p_(impl.text()),
        n_(impl.size),
        max_depth_(limits.max_depth),
        arena_(impl.strings),
        build_(impl.nodes, impl.strings) {}

  Status run() {
    skip_ws();
    bool need_value = true;
    for (;;) {
      if (need_value) {
        if (i_ >= n_) return reject(base::ErrorKind::Malformed, i_, "expected a value, found the end of the input");
        char c = p_[i_];
        if (c == '[' || c == '{') {
          if (stack_.size() >= max_depth_)
            return reject(base::ErrorKind::Depth, i_, fmt::format("nesting deeper than the limit of {}", max_depth_));
          bool object = c == '{';
          Frame f;
          f.node = build_.open(object ? Type::Object : Type::Array, i_);
          f.object = object;
          f.key_base = keys_.size();
          stack_.push_back(std::move(f));
          ++i_;
          skip_ws();
          if (i_ < n_ && p_[i_] == (object ? '}' : ']')) {
            ++i_;
            close();
          } else {
            if (object) DOT_TRY(key());
            continue;
          }
        } else {
          DOT_TRY(scalar());
        }
      }
      // A value just ended.
      if (stack_.empty()) break;
      Frame& f = stack_.back();
      ++f.count;
      skip_ws();
      if (i_ >= n_)
        return reject(base::ErrorKind::Malformed, i_, f.object ? "unterminated object" : "unterminated array");
      char c = p_[i_];
      if (c == ',') {
        ++i_;
        skip_ws();
        if (f.object) DOT_TRY(key());
        need_value = true;
      } else if (c == (f.object ? '}' : ']')) {
        ++i_;
        close();
        need_value = false;
      } else {
        return reject(
            base::ErrorKind::Malformed, i_,
            f.object ? "expected ',' or '}' after an object member" : "expected ',' or ']' after an array element");
      }
    }
    skip_ws();
    if (i_ != n_) return reject(base::ErrorKind::Trailing, i_, "unexpected data after the JSON value");
    return {};
  }

 private:
  struct Frame {
    std::uint32_t node = 0;
    std::uint32_t count = 0;
    bool object = false;
    std::size_t key_base = 0;
    // Built once an object has more keys than a linear scan should handle.
    std::unique_ptr<std::unordered_set<std::string_view>> key_set;
  };
  static constexpr std::size_t kLinearKeys = 16;

  void skip_ws() {
    while (i_ < n_ && is_ws(p_[i_])) ++i_;
  }

  void close() {
    Frame& f = stack_.back();
    build_.close(f.node, f.count);
    keys_.resize(f.key_base);
    stack_.pop_back();
  }

  // An object key, the duplicate check, and the ':' after it.
  Status key() {
    if (i_ >= n_ || p_[i_] != '"')
      return reject(base::ErrorKind::Malformed, i_, i_ >= n_ ? "unterminated object" : "expected a string key");
    std::uint64_t at = i_;
    std::size_t start = arena_.size();
    DOT_TRY(string_body());
    std::string_view k(arena_.data() + start, arena_.size() - start);
    Frame& f = stack_.back();
    bool duplicate = false;
    if (f.key_set) {
      duplicate = !f.key_set->insert(k).second;
    } else {
      for (std::size_t j = f.key_base; j < keys_.size() && !duplicate; ++j) duplicate = keys_[j] == k;
      if (!duplicate) {
        keys_.push_back(k);
        if (keys_.size() - f.key_base > kLinearKeys) {
          f.key_set = std::make_unique<std::unordered_set<std::string_view>>(
              keys_.begin() + static_cast<std::ptrdiff_t>(f.key_base), keys_.end());
        }
      }
    }
    if (duplicate)
      return reject(base::ErrorKind::DuplicateKey, at,
                    fmt::format("key {} appears twice in one object", quote_for_detail(k)));
    if (i_ == at + k.size() + 2) {
      // The arena copy stays (the duplicate check's views point at it); the
      // node points at the source like the fast path's.
      build_.string_in_source(at, at + 1, k.size());
    } else {
      build_.string_in_arena(at, start);
    }
    skip_ws();
    if (i_ >= n_ || p_[i_] != ':') return reject(base::ErrorKind::Malformed, i_, "expected ':' after an object key");
    ++i_;
    skip_ws();
    return {};
  }

  Status scalar() {
    char c = p_[i_];
    if (c == '"') {
      std::uint64_t at = i_;
      std::size_t start = arena_.size();
      DOT_TRY(string_body());
      std::size_t len = arena_.size() - start;
      if (i_ == at + len + 2) {  // no escapes: the bytes are the source's, as in the fast path
        arena_.resize(start);
        build_.string_in_source(at, at + 1, len);
      } else {
        build_.string_in_arena(at, start);
      }
      return {};
    }
    if (c == 't') return literal("true", Type::Bool, true);
    if (c == 'f') return literal("false", Type::Bool, false);
    if (c == 'n') return literal("null", Type::Null, false);
    if (c == '-' || is_digit(c)) return number();
    return reject(base::ErrorKind::Malformed, i_,
                  fmt::format("unexpected character {} where a value should start",
                              quote_for_detail(std::string_view(p_ + i_, 1))));
  }

  Status literal(std::string_view word, Type type, bool flag) {
    std::uint64_t at = i_;
    for (char w : word) {
      if (i_ >= n_ || p_[i_] != w)
        return reject(base::ErrorKind::Malformed, i_, fmt::format("invalid literal, expected {}", word));
      ++i_;
    }
    build_.scalar(type, at, flag);
    return {};
  }

  Status number() {
    std::size_t start = i_;
    bool integer = true;
    if (p_[i_] == '-') ++i_;
    if (i_ < n_ && p_[i_] == '0') {
      ++i_;
    } else if (i_ < n_ && is_digit(p_[i_])) {
      while (i_ < n_ && is_digit(p_[i_])) ++i_;
    } else {
      return reject(base::ErrorKind::Malformed, i_, "a number needs a digit here");
    }
    if (i_ < n_ && p_[i_] == '.') {
      integer = false;
      ++i_;
      if (i_ >= n_ || !is_digit(p_[i_]))
        return reject(base::ErrorKind::Malformed, i_, "a number needs a digit after '.'");
      while (i_ < n_ && is_digit(p_[i_])) ++i_;
    }
    if (i_ < n_ && (p_[i_] == 'e' || p_[i_] == 'E')) {
      integer = false;
      ++i_;
      if (i_ < n_ && (p_[i_] == '+' || p_[i_] == '-')) ++i_;
      if (i_ >= n_ || !is_digit(p_[i_]))
        return reject(base::ErrorKind::Malformed, i_, "a number needs a digit in its exponent");
      while (i_ < n_ && is_digit(p_[i_])) ++i_;
    }
    std::string_view text(p_ + start, i_ - start);
    double value = 0;
    auto res = std::from_chars(text.data(), text.data() + text.size(), value);
    if (res.ec == std::errc::result_out_of_range) {
      if (spelling_is_huge(text))
        return reject(base::ErrorKind::InvalidNumber, start,
                      fmt::format("number {} overflows binary64", quote_for_detail(text.substr(0, 40))));
      value = text[0] == '-' ? -0.0 : 0.0;  // underflow is the value's nearest double: zero
    } else if (res.ec != std::errc() || res.ptr != text.data() + text.size()) {
      return reject(base::ErrorKind::Malformed, start, "unreadable number");  // unreachable after the grammar check
    }
    build_.number(start, value, integer);
    return {};
  }

  // Reads a string literal at p_[i_] == '"' and appends its unescaped bytes to
  // the arena. UTF-8 validity was checked over the whole input beforehand.
  Status string_body() {
    ++i_;
    for (;;) {
      std::size_t run = i_;
      while (i_ < n_) {
        auto c = static_cast<unsigned char>(p_[i_]);
        if (c == '"' || c == '\\' || c < 0x20) break;
        ++i_;
      }
      arena_.append(p_ + run, i_ - run);
      if (i_ >= n_) return reject(base::ErrorKind::Malformed, i_, "unterminated string");
      char c = p_[i_];
      if (c == '"') {
        ++i_;
        return {};
      }
      if (c != '\\')
        return reject(base::ErrorKind::Malformed, i_,
                      fmt::format("control character U+{:04X} must be escaped in a string",
                                  static_cast<unsigned>(static_cast<unsigned char>(c))));
      std::size_t esc = i_;
      if (i_ + 1 >= n_) return reject(base::ErrorKind::Malformed, i_ + 1, "unterminated escape");
      char e = p_[i_ + 1];
      i_ += 2;
      switch (e) {
        case '"':
          arena_ += '"';
          break;
        case '\\':
          arena_ += '\\';
          break;
        case '/':
          arena_ += '/';
          break;
        case 'b':
          arena_ += '\b';
          break;
        case 'f':
          arena_ += '\f';
          break;
        case 'n':
          arena_ += '\n';
          break;
        case 'r':
          arena_ += '\r';
          break;
        case 't':
          arena_ += '\t';
          break;
        case 'u': {
          std::uint32_t cp = 0;
          DOT_TRY(hex4(cp));
          if (cp >= 0xDC00 && cp <= 0xDFFF)
            return reject(base::ErrorKind::InvalidUnicode, esc, fmt::format("lone low surrogate \\u{:04x}", cp));
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            std::uint32_t low = 0;
            if (!low_surrogate_follows(low))
              return reject(base::ErrorKind::InvalidUnicode, esc,
                            fmt::format("high surrogate \\u{:04x} without a low surrogate escape after it", cp));
            i_ += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          char utf8[4];
          arena_.append(utf8, encode_utf8(cp, utf8));
          break;
        }
        default:
          return reject(base::ErrorKind::Malformed, esc, "invalid escape sequence");
      }
    }
  }

  // Four hex digits at p_[i_], consumed.
  Status hex4(std::uint32_t& cp) {
    for (int k = 0; k < 4; ++k) {
      int h = i_ < n_ ? hex_value(p_[i_]) : -1;
      if (h < 0) return reject(base::ErrorKind::Malformed, i_, "\\u needs four hex digits");
      cp = cp * 16 + static_cast<std::uint32_t>(h);
      ++i_;
    }
    return {};
  }

  // True when p_[i_..] is "\uDC00".."\uDFFF" (not consumed).
  bool low_surrogate_follows(std::uint32_t& low) const {
    if (i_ + 6 > n_ || p_[i_] != '\\' || p_[i_ + 1] != 'u') return false;
    std::uint32_t v = 0;
    for (std::size_t k = 2; k < 6; ++k) {
      int h = hex_value(p_[i_ + k]);
      if (h < 0) return false;
      v = v * 16 + static_cast<std::uint32_t>(h);
    }
    if (v < 0xDC00 || v > 0xDFFF) return false;
    low = v;
    return true;
  }

  const char* p_;
  std::size_t n_;
  std::size_t i_ = 0;
  std::size_t max_depth_;
  Arena& arena_;
  TreeBuilder build_;
  std::vector<Frame> stack_;
  std::vector<std::string_view> keys_;  // keys of the open objects, innermost last
};

}  // namespace

Status check_envelope(std::string_view bytes, const ReadLimits& limits) {
  std::size_t max = std::min(limits.max_bytes, kMaxIndexableBytes);
  if (bytes.size() > max)
    return reject(base::ErrorKind::TooLarge, max,
                  fmt::format("input of {} bytes exceeds the limit of {} bytes", bytes.size(), max));
  if (bytes.size() >= 3 && bytes.substr(0, 3) == "\xEF\xBB\xBF")
    return reject(base::ErrorKind::Bom, 0, "a byte-order mark is not allowed");
  if (!simdjson::validate_utf8(bytes.data(), bytes.size())) {
    std::size_t at = utf8_valid_prefix(bytes);
    return reject(
        base::ErrorKind::Utf8, at,
        fmt::format("invalid UTF-8 (byte 0x{:02X})", static_cast<unsigned>(static_cast<unsigned char>(bytes[at]))));
  }
  return {};
}

std::string quote_for_detail(std::string_view s) {
  constexpr std::size_t kMax = 64;
  bool cut = false;
  if (s.size() > kMax) {
    std::size_t end = kMax;
    while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
    s = s.substr(0, end);
    cut = true;
  }
  std::string out;
  // Details are printed for humans: keep them valid UTF-8 even if `s` is not.
  append_json_string(out, s);
  if (cut) out += "...";
  return out;
}

Status parse_strict(Document::Impl& impl, const ReadLimits& limits) {
  std::string_view bytes(impl.text(), impl.size);
  DOT_TRY(check_envelope(bytes, limits));
  impl.nodes.clear();
  impl.strings.clear();
  impl.strings.reserve(impl.size);
  StrictParser parser(impl, limits);
  return parser.run();
}

}  // namespace dot::json::detail
