// The one escaper (append_shown) and the one way arbitrary bytes become a
// JSON string (append_json_string), byte by byte.
#include <gtest/gtest.h>

#include "dot/base/error.h"
#include "../common/test_error_kinds.h"
#include "dot/base/json.h"
#include "dot/base/utf8.h"

namespace dot {
namespace {

TEST(Shown, EscapesEveryC0ControlButTabAndDel) {
  EXPECT_EQ(shown("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(shown("over\rwrite\bx"), "over\\x0dwrite\\x08x");
  EXPECT_EQ(shown(std::string_view("nul\0!", 5)), "nul\\x00!");
  EXPECT_EQ(shown("del\x7f"), "del\\x7f");
  EXPECT_EQ(shown("tab\tkept"), "tab\tkept");
  EXPECT_EQ(shown("\x1b]52;c;ZXZpbA==\x07"), "\\x1b]52;c;ZXZpbA==\\x07");
}

TEST(Shown, NewlinesAreEscapedInAFieldAndKeptInText) {
  EXPECT_EQ(shown("one\ntwo"), "one\\x0atwo");
  EXPECT_EQ(shown("one\ntwo\r\n", LineBreaks::Keep), "one\ntwo\\x0d\n");
}

TEST(Shown, EscapesC1ControlsAsTheirBytes) {
  EXPECT_EQ(shown("\xc2\x9b" "31m"), "\\xc2\\x9b31m");   // U+009B, the one-byte CSI
  EXPECT_EQ(shown("\xc2\x80\xc2\x9f"), "\\xc2\\x80\\xc2\\x9f");
  EXPECT_EQ(shown("\xc2\xa0\xc2\xa9"), "\xc2\xa0\xc2\xa9");  // U+00A0, U+00A9: not controls
}

TEST(Shown, EscapesBidirectionalControlsAndLineSeparators) {
  EXPECT_EQ(shown("a\xe2\x80\xae" "b"), "a\\xe2\\x80\\xaeb");    // U+202E RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(shown("\xe2\x81\xa6x\xe2\x81\xa9"), "\\xe2\\x81\\xa6x\\xe2\\x81\\xa9");  // U+2066, U+2069
  EXPECT_EQ(shown("\xe2\x80\x8f\xd8\x9c"), "\\xe2\\x80\\x8f\\xd8\\x9c");  // U+200F, U+061C
  EXPECT_EQ(shown("\xe2\x80\xa8\xe2\x80\xa9"), "\\xe2\\x80\\xa8\\xe2\\x80\\xa9");  // U+2028, U+2029
  EXPECT_EQ(shown("\xe2\x80\x94\xe2\x81\xa5"), "\xe2\x80\x94\xe2\x81\xa5");  // U+2014, U+2065: shown
}

TEST(Shown, EscapesEachByteThatIsNotUtf8AndKeepsValidText) {
  EXPECT_EQ(shown("caf\xc3\xa9 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
  EXPECT_EQ(shown("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(shown("\xc3"), "\\xc3");                      // cut short at the end
  EXPECT_EQ(shown("\xe2\x82" "x"), "\\xe2\\x82x");        // cut short before ASCII
  EXPECT_EQ(shown("\xc0\xaf"), "\\xc0\\xaf");             // overlong '/'
  EXPECT_EQ(shown("\xed\xa0\x80"), "\\xed\\xa0\\x80");    // a surrogate
  EXPECT_EQ(shown("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(shown("\xc2\x1b"), "\\xc2\\x1b");             // a lead byte cannot hide an ESC
}

TEST(Shown, ItsOutputIsAFixedPoint) {
  const std::string nasty = "x\x1b\r\n\xc2\x9b\xff\xe2\x80\xae\x7f\t\\x1b";
  for (LineBreaks lines : {LineBreaks::Escape, LineBreaks::Keep}) {
    std::string once = shown(nasty, lines);
    EXPECT_EQ(shown(once, lines), once);
    EXPECT_EQ(shown(once, LineBreaks::Keep), once);
  }
}

TEST(JsonString, AnyBytesMakeAJsonString) {
  std::string out;
  append_json_string(out, "a\x1b\xc2\x9b\xff\"\n");
  EXPECT_EQ(out, "\"a\\u001b\xc2\x9b\xef\xbf\xbd\\\"\\n\"");
  auto doc = json::parse(out);
  ASSERT_TRUE(doc.ok()) << doc.error().line();
  EXPECT_EQ(utf8_repaired("ok\xff\xfe!"), "ok\xef\xbf\xbd\xef\xbf\xbd!");
  EXPECT_EQ(utf8_repaired("caf\xc3\xa9"), "caf\xc3\xa9");
}

TEST(JsonString, AnErrorWithBytesThatAreNotUtf8IsStillJson) {
  Error e = make_error(test::ErrorKind::OpenInvalidUtf8, "cannot open /tmp/\xff\xfe: no such file");
  auto doc = json::parse(e.json());
  ASSERT_TRUE(doc.ok()) << doc.error().line() << ": " << e.json();
  EXPECT_EQ(doc->root().find("error")->find("detail")->as_string(), "cannot open /tmp/\xef\xbf\xbd\xef\xbf\xbd: no such file");
}

}  // namespace
}  // namespace dot
