// The FrameReader against every edge case of docs/spec/metewand.md, each fed at
// every chunking: all at once, one byte per read, and seeded random sizes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dot/metewand/frame_reader.h"
#include "dot/base/error_kinds.h"

namespace dot::metewand {
namespace {

using Kind = FrameError::Kind;

// What a whole stream decodes to: the accepted lines, then EOF or an error.
struct Outcome {
  std::vector<std::string> lines;
  std::vector<std::uint64_t> offsets;
  std::optional<FrameError> error;
};

enum class Path { Validate, Parse };

Outcome decode(std::string_view bytes, std::vector<std::size_t> chunks, Path path = Path::Validate) {
  MemorySource source(bytes, std::move(chunks));
  FrameReader reader(source);
  Outcome out;
  for (int guard = 0; guard < 1'000'000; ++guard) {
    if (path == Path::Validate) {
      auto r = reader.next_line();
      if (!r.ok()) { out.error = r.error(); break; }
      if (!r->has_value()) break;
      out.lines.emplace_back((*r)->bytes);
      out.offsets.push_back((*r)->offset);
    } else {
      auto r = reader.read_frame();
      if (!r.ok()) { out.error = r.error(); break; }
      if (!r->has_value()) break;
      out.lines.emplace_back((*r)->document.source());
      out.offsets.push_back((*r)->offset);
    }
  }
  return out;
}

std::vector<std::vector<std::size_t>> chunkings(std::size_t total) {
  std::vector<std::vector<std::size_t>> all = {{}, {1}, {2, 3, 5, 7}};
  std::mt19937 rng(static_cast<unsigned>(total) * 7919u + 17u);
  for (int k = 0; k < 3; ++k) {
    std::vector<std::size_t> sizes;
    std::uniform_int_distribution<std::size_t> d(1, k == 2 ? 200000 : 97);
    for (int i = 0; i < 64; ++i) sizes.push_back(d(rng));
    all.push_back(sizes);
  }
  return all;
}

// Every chunking and both paths must agree with the expectation.
void expect_lines(std::string_view input, const std::vector<std::string>& lines) {
  for (Path path : {Path::Validate, Path::Parse}) {
    for (const auto& chunks : chunkings(input.size())) {
      if (input.size() > 100000 && chunks.size() == 1) {
        if (path == Path::Parse) continue;  // one-byte reads of a megabyte: once is enough
      }
      Outcome o = decode(input, chunks, path);
      ASSERT_FALSE(o.error.has_value()) << o.error->name() << ": " << o.error->message()
                                        << " (chunks " << chunks.size() << ")";
      ASSERT_EQ(o.lines.size(), lines.size());
      for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(o.lines[i], lines[i]);
    }
  }
}

FrameError expect_error(std::string_view input, Kind kind, std::size_t frames_before = 0) {
  FrameError first;
  bool have = false;
  for (Path path : {Path::Validate, Path::Parse}) {
    for (const auto& chunks : chunkings(input.size())) {
      if (input.size() > 100000 && chunks.size() == 1 && path == Path::Parse) continue;
      Outcome o = decode(input, chunks, path);
      EXPECT_EQ(o.lines.size(), frames_before);
      if (!o.error) {
        ADD_FAILURE() << "accepted, expected " << frame_error_name(kind);
        return {};
      }
      EXPECT_EQ(o.error->name(), frame_error_name(kind)) << o.error->message();
      if (have) {
        EXPECT_EQ(o.error->offset, first.offset);
        EXPECT_EQ(o.error->limit, first.limit);
        EXPECT_EQ(o.error->received, first.received);
        EXPECT_EQ(o.error->valid_up_to, first.valid_up_to);
        EXPECT_EQ(o.error->key, first.key);
      } else {
        first = *o.error;
        have = true;
      }
    }
  }
  return first;
}

std::string string_line(std::size_t payload_bytes) {
  // A JSON string of exactly payload_bytes bytes (quotes included).
  return "\"" + std::string(payload_bytes - 2, 'x') + "\"";
}

std::string nested(std::size_t depth, bool objects) {
  std::string s;
  for (std::size_t i = 0; i < depth; ++i) s += objects ? "{\"a\":" : "[";
  s += "0";
  for (std::size_t i = 0; i < depth; ++i) s += objects ? "}" : "]";
  return s;
}

TEST(FrameReader, OneValuePerLine) {
  expect_lines("{\"a\":1}\n[1,2]\n\"s\"\n3\ntrue\nnull\n", {"{\"a\":1}", "[1,2]", "\"s\"", "3", "true", "null"});
}

TEST(FrameReader, CrBeforeLfIsJsonWhitespace) { expect_lines("{\"a\":1}\r\n", {"{\"a\":1}\r"}); }

TEST(FrameReader, LeadingAndTrailingSpacesAndTabs) { expect_lines(" \t{\"a\":1} \t\n", {" \t{\"a\":1} \t"}); }

TEST(FrameReader, EmptyLineIsMalformed) { expect_error("\n", Kind::MalformedJson); }
TEST(FrameReader, WhitespaceOnlyLineIsMalformed) { expect_error(" \t \r\n", Kind::MalformedJson); }

TEST(FrameReader, ByteOrderMarkAtLineStart) {
  expect_error("\xEF\xBB\xBF{}\n", Kind::ByteOrderMark);
  // Checked on every line, not only the first.
  auto e = expect_error("{}\n\xEF\xBB\xBF{}\n", Kind::ByteOrderMark, 1);
  EXPECT_EQ(e.offset, 3u);
}

TEST(FrameReader, ByteOrderMarkBeatsInvalidUtf8AndJson) {
  expect_error("\xEF\xBB\xBF\xFF\n", Kind::ByteOrderMark);
}

TEST(FrameReader, ByteOrderMarkAfterASpaceIsMalformed) { expect_error(" \xEF\xBB\xBF{}\n", Kind::MalformedJson); }

TEST(FrameReader, ByteOrderMarkInsideAStringIsFine) {
  expect_lines("{\"a\":\"\xEF\xBB\xBF\"}\n", {"{\"a\":\"\xEF\xBB\xBF\"}"});
}

TEST(FrameReader, InvalidUtf8ReportsTheValidPrefix) {
  EXPECT_EQ(expect_error("\"\xFF\"\n", Kind::InvalidUtf8).valid_up_to, 1u);
  EXPECT_EQ(expect_error("[\"ab\xC3\"]\n", Kind::InvalidUtf8).valid_up_to, 4u);
  // Overlong encoding, surrogate, beyond U+10FFFF, stray continuation.
  EXPECT_EQ(expect_error("\"\xC0\xAF\"\n", Kind::InvalidUtf8).valid_up_to, 1u);
  EXPECT_EQ(expect_error("\"a\xED\xA0\x80\"\n", Kind::InvalidUtf8).valid_up_to, 2u);
  EXPECT_EQ(expect_error("\"\xF4\x90\x80\x80\"\n", Kind::InvalidUtf8).valid_up_to, 1u);
  EXPECT_EQ(expect_error("\"\xC3\xA9\x80\"\n", Kind::InvalidUtf8).valid_up_to, 3u);
}

TEST(FrameReader, InvalidUtf8BeatsMalformedJson) {
  EXPECT_EQ(expect_error("{\xFF\n", Kind::InvalidUtf8).valid_up_to, 1u);
  EXPECT_EQ(expect_error("nul\xE2\x82\n", Kind::InvalidUtf8).valid_up_to, 3u);
}

TEST(FrameReader, InvalidUtf8BeatsDuplicateKey) {
  EXPECT_EQ(expect_error("{\"a\":1,\"a\":\"\xFF\"}\n", Kind::InvalidUtf8).valid_up_to, 12u);
}

TEST(FrameReader, LoneSurrogateEscapeIsMalformed) {
  expect_error("\"\\ud800\"\n", Kind::MalformedJson);
  expect_error("\"\\udc00x\"\n", Kind::MalformedJson);
  expect_lines("\"\\ud83d\\ude00\"\n", {"\"\\ud83d\\ude00\""});
}

TEST(FrameReader, NumbersOutsideTheGrammarOrBinary64AreMalformed) {
  for (const char* bad : {"1e400\n", "-1e400\n", "NaN\n", "01\n", "-\n", "1.\n", ".5\n", "+1\n", "Infinity\n",
                          "[1e400]\n", "0x10\n"})
    expect_error(bad, Kind::MalformedJson);
}

TEST(FrameReader, LargeIntegersAreAcceptedAtThisLayer) {
  expect_lines("9007199254740992\n18446744073709551616\n[18446744073709551616,-9223372036854775809]\n1e-400\n",
               {"9007199254740992", "18446744073709551616", "[18446744073709551616,-9223372036854775809]",
                "1e-400"});
}

TEST(FrameReader, Nesting127AcceptedAnd128Refused) {
  for (bool objects : {false, true}) {
    expect_lines(nested(127, objects) + "\n", {nested(127, objects)});
    expect_error(nested(128, objects) + "\n", Kind::MalformedJson);
  }
}

TEST(FrameReader, DuplicateKeys) {
  EXPECT_EQ(expect_error("{\"a\":1,\"a\":2}\n", Kind::DuplicateKey).key, "a");
  // Compared after unescaping.
  EXPECT_EQ(expect_error("{\"a\":1,\"\\u0061\":2}\n", Kind::DuplicateKey).key, "a");
  EXPECT_EQ(expect_error("{\"\\\"q\":1,\"\\u0022q\":2}\n", Kind::DuplicateKey).key, "\"q");
  EXPECT_EQ(expect_error("{\"\xC3\xA9\":1,\"\\u00e9\":2}\n", Kind::DuplicateKey).key, "\xC3\xA9");
  // The same key in different objects is fine.
  expect_lines("{\"a\":{\"a\":{\"a\":1}},\"b\":[{\"a\":1},{\"a\":2}]}\n",
               {"{\"a\":{\"a\":{\"a\":1}},\"b\":[{\"a\":1},{\"a\":2}]}"});
}

TEST(FrameReader, NestedDuplicateKeysAtAnyDepth) {
  EXPECT_EQ(expect_error("{\"x\":{\"y\":[{\"k\":1,\"k\":2}]}}\n", Kind::DuplicateKey).key, "k");
  EXPECT_EQ(expect_error("[[[[{\"ok\":1},{\"deep\":{\"z\":null,\"z\":null}}]]]]\n", Kind::DuplicateKey).key, "z");
  std::string deep;
  for (int i = 0; i < 120; ++i) deep += "{\"n\":";
  deep += "{\"dup\":1,\"dup\":2}";
  for (int i = 0; i < 120; ++i) deep += "}";
  EXPECT_EQ(expect_error(deep + "\n", Kind::DuplicateKey).key, "dup");
}

TEST(FrameReader, FirstProblemInTheLineDecidesBetweenDuplicateAndMalformed) {
  EXPECT_EQ(expect_error("{\"a\":1,\"a\":2,}\n", Kind::DuplicateKey).key, "a");
  expect_error("{\"a\":01,\"a\":2}\n", Kind::MalformedJson);
}

TEST(FrameReader, TrailingDataIsMalformed) {
  for (const char* bad : {"{} {}\n", "{}x\n", "1 2\n", "\"a\"\"b\"\n", "{}}\n"}) expect_error(bad, Kind::MalformedJson);
}

TEST(FrameReader, CleanEofBetweenFramesIsNotAnError) {
  Outcome o = decode("", {});
  EXPECT_TRUE(o.lines.empty());
  EXPECT_FALSE(o.error.has_value());
  MemorySource source("{}\n");
  FrameReader reader(source);
  ASSERT_TRUE(reader.next_line()->has_value());
  for (int i = 0; i < 3; ++i) {
    auto r = reader.next_line();
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->has_value());
  }
}

TEST(FrameReader, EarlyEofCountsBufferedBytesCrIncluded) {
  EXPECT_EQ(expect_error("{\"a\":1}", Kind::EarlyEof).received, 7u);
  EXPECT_EQ(expect_error("{}\r", Kind::EarlyEof).received, 3u);
  auto e = expect_error("{}\n{\"b\"", Kind::EarlyEof, 1);
  EXPECT_EQ(e.received, 4u);
  EXPECT_EQ(e.offset, 3u);
  // EarlyEof comes before any check of the partial line's content.
  EXPECT_EQ(expect_error("\xEF\xBB\xBF\xFF", Kind::EarlyEof).received, 4u);
}

TEST(FrameReader, InclusiveSizeBoundary) {
  // 1,048,575 payload bytes + LF = exactly the limit: accepted.
  std::string at_limit = string_line(kMaxLineBytes - 1);
  expect_lines(at_limit + "\n{}\n", {at_limit, "{}"});
  // One more byte: refused.
  std::string over = string_line(kMaxLineBytes);
  EXPECT_EQ(expect_error(over + "\n", Kind::LineTooLong).limit, kMaxLineBytes);
  // 1,048,575 bytes then EOF: the line could still have ended legally.
  EXPECT_EQ(expect_error(at_limit, Kind::EarlyEof).received, kMaxLineBytes - 1);
  // A 1,048,575-byte payload + CR + LF is 1,048,577 bytes.
  expect_error(at_limit + "\r\n", Kind::LineTooLong);
  // 1,048,576 bytes and EOF: refused as too long the moment the last byte arrived.
  expect_error(std::string(kMaxLineBytes, ' '), Kind::LineTooLong);
}

TEST(FrameReader, OversizedLineAfterGoodLinesReportsItsOffset) {
  std::string input = "{}\n[1]\n" + std::string(kMaxLineBytes + 10, ' ') + "\n";
  auto e = expect_error(input, Kind::LineTooLong, 2);
  EXPECT_EQ(e.offset, 7u);
}

TEST(FrameReader, OffsetsCountFromTheStreamStart) {
  Outcome o = decode("{}\n  [1] \n\"x\"\r\n", {1});
  ASSERT_EQ(o.offsets.size(), 3u);
  EXPECT_EQ(o.offsets[0], 0u);
  EXPECT_EQ(o.offsets[1], 3u);
  EXPECT_EQ(o.offsets[2], 10u);
}

TEST(FrameReader, AfterAnErrorTheStreamIsUnusable) {
  MemorySource source("{\"a\":1,\"a\":2}\n{}\n{}\n");
  FrameReader reader(source);
  auto first = reader.next_line();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().kind, Kind::DuplicateKey);
  EXPECT_TRUE(reader.failed());
  for (int i = 0; i < 2; ++i) {
    auto again = reader.read_frame();
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().kind, Kind::DuplicateKey);
    EXPECT_EQ(again.error().key, "a");
  }
}

// A source that fails after handing out its bytes.
class FailingSource final : public ByteSource {
 public:
  explicit FailingSource(std::string bytes) : bytes_(std::move(bytes)) {}
  Result<std::size_t> read(char* buffer, std::size_t capacity) override {
    ++reads;
    if (pos_ == bytes_.size()) return make_error(base::ErrorKind::Read, "cannot read the pipe: Input/output error");
    std::size_t n = std::min(capacity, bytes_.size() - pos_);
    std::memcpy(buffer, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  int reads = 0;

 private:
  std::string bytes_;
  std::size_t pos_ = 0;
};

TEST(FrameReader, IoErrorIsItsOwnVariantAfterTheCompleteLines) {
  FailingSource source("{}\n[1]\n{\"par");
  FrameReader reader(source);
  EXPECT_TRUE(reader.next_line()->has_value());
  EXPECT_TRUE(reader.next_line()->has_value());
  auto e = reader.next_line();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().kind, Kind::Io);
  EXPECT_EQ(e.error().offset, 7u);
  EXPECT_NE(e.error().detail.find("Input/output error"), std::string::npos);
}

TEST(FrameReader, LineTooLongFiresAtTheLimitByteWithoutReadingFurther) {
  // Exactly 1,048,576 bytes without LF, then the source would fail: the
  // reader must refuse the line without asking for more.
  FailingSource source(std::string(kMaxLineBytes, 'a'));
  FrameReader reader(source, 4096);
  auto e = reader.next_line();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().kind, Kind::LineTooLong);
  EXPECT_EQ(e.error().limit, kMaxLineBytes);
}

// An endless stream of bytes without a line feed, in varying read sizes.
class EndlessSource final : public ByteSource {
 public:
  explicit EndlessSource(std::string prefix = {}) : prefix_(std::move(prefix)) {}
  Result<std::size_t> read(char* buffer, std::size_t capacity) override {
    std::size_t n = std::min<std::size_t>(capacity, sizes_[next_++ % 5]);
    for (std::size_t i = 0; i < n; ++i, ++produced)
      buffer[i] = produced < prefix_.size() ? prefix_[produced] : 'a';
    max_request = std::max(max_request, capacity);
    return n;
  }
  std::uint64_t produced = 0;
  std::size_t max_request = 0;

 private:
  std::string prefix_;
  std::size_t sizes_[5] = {1, 65536, 7, 300000, 4096};
  std::size_t next_ = 0;
};

TEST(FrameReader, EndlessLineKeepsMemoryBounded) {
  EndlessSource source("{}\n[\"");
  FrameReader reader(source);
  auto first = reader.next_line();
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->has_value());
  auto e = reader.next_line();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().kind, Kind::LineTooLong);
  EXPECT_EQ(e.error().offset, 3u);
  // Exactly the first line and the limit's worth of the endless one were read,
  // into one fixed buffer of the limit plus one read size.
  EXPECT_EQ(source.produced, 3 + kMaxLineBytes);
  EXPECT_EQ(reader.buffer_capacity(), kMaxLineBytes + FrameReader::kDefaultReadSize);
  EXPECT_LE(reader.buffer_allocated(), reader.buffer_capacity());
  EXPECT_GE(reader.buffer_allocated(), kMaxLineBytes);
  EXPECT_LE(source.max_request, kMaxLineBytes);
  // And it stays refused without reading more.
  EXPECT_FALSE(reader.next_line().ok());
  EXPECT_EQ(source.produced, 3 + kMaxLineBytes);
}

TEST(FrameReader, SmallLinesKeepASmallBuffer) {
  std::string input;
  for (int i = 0; i < 20000; ++i) input += "{\"id\":\"" + std::to_string(i) + "\",\"ok\":true}\n";
  MemorySource source(input);
  FrameReader reader(source);
  int n = 0;
  for (auto r = reader.next_line(); r.ok() && r->has_value(); r = reader.next_line()) ++n;
  EXPECT_EQ(n, 20000);
  EXPECT_EQ(reader.buffer_allocated(), 64u * 1024);
}

TEST(FrameReader, ManyLinesAcrossBufferCompactions) {
  std::string input;
  std::vector<std::string> lines;
  std::mt19937 rng(5);
  for (int i = 0; i < 60; ++i) {
    std::size_t n = std::uniform_int_distribution<std::size_t>(2, 120000)(rng);
    lines.push_back(string_line(n));
    input += lines.back() + "\n";
  }
  expect_lines(input, lines);
}

TEST(Utf8ValidUpTo, MatchesTheValidPrefix) {
  EXPECT_EQ(utf8_valid_up_to(""), 0u);
  EXPECT_EQ(utf8_valid_up_to("abc"), 3u);
  EXPECT_EQ(utf8_valid_up_to("\xF0\x9F\x98\x80"), 4u);
  EXPECT_EQ(utf8_valid_up_to("a\xF0\x9F\x98"), 1u);  // truncated at the end
  EXPECT_EQ(utf8_valid_up_to("\xE0\x80\x80"), 0u);  // overlong
  EXPECT_EQ(utf8_valid_up_to("\xEF\xBF\xBF"), 3u);  // U+FFFF is a scalar value
  EXPECT_EQ(utf8_valid_up_to("\xF8\x88\x80\x80\x80"), 0u);
}

}  // namespace
}  // namespace dot::metewand
