#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dot/dpp/frame.h"

namespace dot::dpp {
namespace {

struct Decoded {
  std::vector<Frame> frames;
  std::optional<Error> error;
};

Decoded decode_all(std::string_view bytes, std::size_t chunk = 0) {
  MemorySource src(bytes, {chunk});
  FrameReader r(src);
  Decoded out;
  for (;;) {
    auto f = r.next();
    if (!f.ok()) {
      out.error = f.error();
      return out;
    }
    if (!f->has_value()) return out;
    out.frames.push_back(std::move(**f));
  }
}

std::string frame(std::string_view body) { return *encode_frame(body); }

TEST(FrameReader, ReadsFramesAndEndsCleanly) {
  std::string stream = frame("{\"a\":1}") + frame("[]") + frame(std::string(65536, ' '));
  auto d = decode_all(stream);
  ASSERT_FALSE(d.error) << d.error->line();
  ASSERT_EQ(d.frames.size(), 3u);
  EXPECT_EQ(d.frames[0].offset, 0u);
  EXPECT_EQ(d.frames[0].body_offset, 21u);
  EXPECT_EQ(d.frames[0].body, "{\"a\":1}");
  EXPECT_EQ(d.frames[1].offset, 28u);
  EXPECT_EQ(d.frames[1].body, "[]");
  EXPECT_EQ(d.frames[2].body.size(), 65536u);
}

TEST(FrameReader, EmptyStreamIsACleanEnd) {
  auto d = decode_all("");
  EXPECT_FALSE(d.error);
  EXPECT_TRUE(d.frames.empty());
}

TEST(FrameReader, ReadsSplitAnywhereGiveTheSameFrames) {
  std::string stream = frame("{\"x\":\"y\"}") + frame("1") + frame("{\"long\":\"" + std::string(300, 'z') + "\"}");
  auto whole = decode_all(stream);
  ASSERT_FALSE(whole.error);
  for (std::size_t chunk = 1; chunk <= 40; ++chunk) {
    auto d = decode_all(stream, chunk);
    ASSERT_FALSE(d.error) << "chunk " << chunk;
    ASSERT_EQ(d.frames.size(), whole.frames.size());
    for (std::size_t i = 0; i < d.frames.size(); ++i) {
      EXPECT_EQ(d.frames[i].body, whole.frames[i].body);
      EXPECT_EQ(d.frames[i].offset, whole.frames[i].offset);
    }
  }
}

TEST(FrameReader, NeverReadsPastTheFrameOfAValidStream) {
  // One tiny frame followed by bytes the reader must not take: a peer that
  // writes before it is asked is detectable only if the reader left them.
  std::string stream = frame("1") + "GARBAGE";
  MemorySource src(stream);
  FrameReader r(src);
  auto f = r.next();
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ(src.consumed(), frame("1").size());
  EXPECT_EQ(r.buffered(), 0u);
}

struct BadCase {
  const char* name;
  std::string bytes;
  const char* kind;
  std::uint64_t offset;
};

class FrameErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(FrameErrors, KindAndOffset) {
  const BadCase& c = GetParam();
  for (std::size_t chunk : {0u, 1u, 3u}) {
    auto d = decode_all(c.bytes, chunk);
    ASSERT_TRUE(d.error) << c.name;
    EXPECT_EQ(d.error->code, Code::Protocol);
    EXPECT_EQ(d.error->kind, c.kind) << c.name << ": " << d.error->line();
    EXPECT_EQ(d.error->offset.value_or(~0ull), c.offset) << c.name << ": " << d.error->line();
    EXPECT_FALSE(d.error->detail.empty());
  }
}

const std::string kOk = "Content-Length: 2\r\n\r\n{}";

INSTANTIATE_TEST_SUITE_P(
    All, FrameErrors,
    ::testing::Values(
        BadCase{"garbage_before_header", "xContent-Length: 2\r\n\r\n{}", "header", 0},
        BadCase{"garbage_after_a_frame", kOk + "!", "header", 23},
        BadCase{"lowercase_name", "content-length: 2\r\n\r\n{}", "header", 0},
        BadCase{"no_space", "Content-Length:2\r\n\r\n{}", "header", 15},
        BadCase{"lf_only_after_length", "Content-Length: 2\n\n{}", "header", 17},
        BadCase{"lf_only_blank_line", "Content-Length: 2\r\n\n{}", "header", 19},
        BadCase{"cr_without_lf", "Content-Length: 2\rX\r\n{}", "header", 18},
        BadCase{"extra_content_type", "Content-Length: 2\r\nContent-Type: application/json\r\n\r\n{}",
                "extra_header", 19},
        BadCase{"plus_sign", "Content-Length: +5\r\n\r\nhello", "length", 16},
        BadCase{"minus_one", "Content-Length: -1\r\n\r\n", "length", 16},
        BadCase{"space_before_length", "Content-Length:  5\r\n\r\n12345", "length", 16},
        BadCase{"leading_zero", "Content-Length: 05\r\n\r\n12345", "length", 16},
        BadCase{"zero", "Content-Length: 0\r\n\r\n", "length", 16},
        BadCase{"no_digits", "Content-Length: \r\n\r\n", "length", 16},
        BadCase{"too_big", "Content-Length: 65537\r\n\r\n", "length", 20},
        BadCase{"twenty_digits", "Content-Length: 12345678901234567890\r\n\r\n", "length", 21},
        BadCase{"letter_in_length", "Content-Length: 5x\r\n\r\n", "length", 17},
        BadCase{"trailing_space_in_length", "Content-Length: 5 \r\n\r\n", "length", 17},
        BadCase{"eof_in_header", "Content-Len", "early_eof", 11},
        BadCase{"eof_after_header", "Content-Length: 5\r\n\r\n", "early_eof", 21},
        BadCase{"short_body", "Content-Length: 5\r\n\r\nabc", "early_eof", 24},
        BadCase{"eof_in_second_frame", kOk + "Content-Length: 3\r\n\r\n{", "early_eof", 45}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(FrameReader, StopsAtTheFirstIllegalByteWithoutBuffering) {
  // 20 digits: proven illegal at the sixth; the reader reads at most the
  // shortest valid completion of the header past that point.
  std::string stream = "Content-Length: 12345678901234567890\r\n\r\n" + std::string(1 << 20, 'x');
  MemorySource src(stream);
  FrameReader r(src);
  auto f = r.next();
  ASSERT_FALSE(f.ok());
  EXPECT_LE(src.consumed(), 26u);
  // The reader stays failed.
  auto again = r.next();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().offset, f.error().offset);
}

TEST(FrameReader, LongerBodyThanAnnouncedIsTheNextFramesProblem) {
  auto d = decode_all("Content-Length: 2\r\n\r\n{}}");
  ASSERT_EQ(d.frames.size(), 1u);
  ASSERT_TRUE(d.error);
  EXPECT_EQ(d.error->kind, "header");
  EXPECT_EQ(d.error->offset, 23u);
}

TEST(FrameWriter, EncodesAndRefusesWhatTheReaderWouldRefuse) {
  StringSink sink;
  FrameWriter w(sink);
  ASSERT_TRUE(w.write("{}").ok());
  EXPECT_EQ(sink.out, "Content-Length: 2\r\n\r\n{}");
  EXPECT_EQ(w.write("").error().kind, "length");
  EXPECT_EQ(w.write(std::string(65537, ' ')).error().kind, "length");
  EXPECT_TRUE(w.write(std::string(65536, ' ')).ok());
}

}  // namespace
}  // namespace dot::dpp
