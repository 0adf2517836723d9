// UTF-8 as the project judges it, and bytes leaving as JSON strings or shown text (utf8.h).
#include "dot/base/utf8.h"

#include "dot/base/jcs.h"

namespace dot {

std::size_t utf8_valid_prefix(std::string_view bytes) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0)
        lo = 0xA0;  // no overlongs
      else if (c == 0xED)
        hi = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0)
        lo = 0x90;  // no overlongs
      else if (c == 0xF4)
        hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;
    }
    if (i + len > n) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    i += len;
  }
  return n;
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex(std::string& out, std::string_view bytes) {
  for (char c : bytes) {
    auto u = static_cast<unsigned char>(c);
    const char esc[4] = {'\\', 'x', kHex[u >> 4], kHex[u & 0xf]};
    out.append(esc, sizeof esc);
  }
}

// Length of the UTF-8 sequence a lead byte announces (1 for ASCII, 0 for a
// byte that cannot start one); utf8_valid_prefix then says if it is whole.
std::size_t sequence_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xC2 ? 0 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : lead < 0xF5 ? 4 : 0;
}

// A valid multi-byte character a terminal would act on instead of showing:
// a C1 control, a bidirectional control, a line or paragraph separator.
bool is_hidden_control(std::string_view ch) {
  auto b = [&](std::size_t i) { return static_cast<unsigned char>(ch[i]); };
  if (ch.size() == 2) return (b(0) == 0xC2 && b(1) <= 0x9F) || (b(0) == 0xD8 && b(1) == 0x9C);  // C1, U+061C
  if (ch.size() != 3 || b(0) != 0xE2) return false;
  if (b(1) == 0x80) return b(2) == 0x8E || b(2) == 0x8F || (b(2) >= 0xA8 && b(2) <= 0xAE);  // 200E-F, 2028-202E
  return b(1) == 0x81 && b(2) >= 0xA6 && b(2) <= 0xA9;                                      // 2066-2069
}

}  // namespace

std::size_t encode_utf8(std::uint32_t cp, char out[4]) noexcept {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  char bytes[4];
  out.append(bytes, encode_utf8(cp, bytes));
}

std::string utf8_repaired(std::string_view bytes) {
  std::size_t valid = utf8_valid_prefix(bytes);
  if (valid == bytes.size()) return std::string(bytes);
  std::string out;
  out.reserve(bytes.size() + 8);
  while (!bytes.empty()) {
    out.append(bytes.substr(0, valid));
    bytes.remove_prefix(valid);
    if (bytes.empty()) break;
    out += "\xEF\xBF\xBD";
    bytes.remove_prefix(1);
    valid = utf8_valid_prefix(bytes);
  }
  return out;
}

void append_json_string(std::string& out, std::string_view bytes) {
  if (utf8_valid_prefix(bytes) == bytes.size())
    jcs::append_string(out, bytes);
  else
    jcs::append_string(out, utf8_repaired(bytes));
}

void append_shown(std::string& out, std::string_view bytes, LineBreaks lines) {
  std::size_t run = 0;  // start of the pending run of bytes copied as they are
  std::size_t i = 0;
  auto flush = [&] { out.append(bytes.substr(run, i - run)); };
  while (i < bytes.size()) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7F) {
      ++i;
      continue;
    }
    if (c < 0x80) {
      if (c == '\t' || (c == '\n' && lines == LineBreaks::Keep)) {
        ++i;
        continue;
      }
      flush();
      append_hex(out, bytes.substr(i, 1));
      run = ++i;
      continue;
    }
    std::size_t len = sequence_length(c);
    std::string_view ch = bytes.substr(i, len);
    if (len == 0 || ch.size() < len || utf8_valid_prefix(ch) != len) {
      flush();
      append_hex(out, bytes.substr(i, 1));  // one invalid byte; resynchronise on the next
      run = ++i;
    } else if (is_hidden_control(ch)) {
      flush();
      append_hex(out, ch);
      run = i += len;
    } else {
      i += len;
    }
  }
  flush();
}

std::string shown(std::string_view bytes, LineBreaks lines) {
  std::string out;
  out.reserve(bytes.size());
  append_shown(out, bytes, lines);
  return out;
}

}  // namespace dot
