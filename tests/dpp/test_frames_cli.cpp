// `dot-core frames decode --format dpp` as a black box: the output shape and
// error kinds of docs/spec/cli.md, on files and on stdin.
#include <gtest/gtest.h>

#include <fstream>

#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "drive.h"

namespace dot::dpp {
namespace {

struct Run {
  int code = -1;
  std::string out, err;
};

Run run_cli(const std::vector<std::string>& args, std::string_view input) {
  SpawnOptions o;
  o.path = testing::bin("dot-core");
  o.argv = {"dot-core", "frames", "decode", "--format", "dpp"};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env = {"LANG=C"};
  auto child = spawn(o);
  Run r;
  if (!child.ok()) return r;
  (void)write_all(child->stdin_fd().get(), input);
  child->stdin_fd().reset();
  r.out = read_all(child->stdout_fd().get(), 1 << 22).value();
  r.err = read_all(child->stderr_fd().get(), 1 << 20).value();
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(10));
  r.code = st ? st->code : -1;
  return r;
}

std::string frame(std::string_view body) { return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body); }

TEST(FramesDecodeDpp, PrintsEachFrameThenTheEnd) {
  std::string stream = frame("{\"b\": 1, \"a\" : [1.50, \"x y\"]}") + frame("true");
  auto r = run_cli({"-"}, stream);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "{\"frame\":1,\"offset\":0,\"value\":{\"b\":1,\"a\":[1.50,\"x y\"]}}\n"
            "{\"frame\":2,\"offset\":51,\"value\":true}\n"
            "{\"end\":\"eof\",\"frames\":2}\n");
  EXPECT_EQ(r.err, "");
}

TEST(FramesDecodeDpp, CountPrintsOnlyTheLastLine) {
  auto r = run_cli({"--count"}, frame("1") + frame("2"));
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "{\"end\":\"eof\",\"frames\":2}\n");
  r = run_cli({"--count"}, frame("1") + "Content-Length: 05\r\n\r\n");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out.rfind("{\"error\":\"length\",\"offset\":38,", 0), 0u) << r.out;
}

TEST(FramesDecodeDpp, ReadsAFile) {
  testing::TempStage dir;
  std::string path = dir.path() + "/capture.bin";
  std::ofstream(path, std::ios::binary) << frame("{}");
  auto r = run_cli({path}, "");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "{\"frame\":1,\"offset\":0,\"value\":{}}\n{\"end\":\"eof\",\"frames\":1}\n");
  r = run_cli({dir.path() + "/missing.bin"}, "");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("DOT_E_IO: ", 0), 0u) << r.err;
}

struct ErrCase {
  const char* name;
  std::string input;
  const char* kind;
  int offset;
};

class FramesDecodeErrors : public ::testing::TestWithParam<ErrCase> {};

TEST_P(FramesDecodeErrors, FirstErrorWithKindAndOffset) {
  const auto& c = GetParam();
  auto r = run_cli({}, c.input);
  EXPECT_EQ(r.code, 1);
  std::string want = std::string("{\"error\":\"") + c.kind + "\",\"offset\":" + std::to_string(c.offset) + ",\"detail\":";
  auto pos = r.out.find(want);
  EXPECT_NE(pos, std::string::npos) << r.out;
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(r.err.rfind("DOT_E_PROTOCOL: " + std::string(c.kind) + " at byte " + std::to_string(c.offset), 0), 0u)
      << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    All, FramesDecodeErrors,
    ::testing::Values(ErrCase{"header", "Content-length: 2\r\n\r\n{}", "header", 8},
                      ErrCase{"length", "Content-Length: 65537\r\n\r\n", "length", 20},
                      ErrCase{"extra_header", "Content-Length: 2\r\nX: y\r\n\r\n{}", "extra_header", 19},
                      ErrCase{"early_eof", "Content-Length: 9\r\n\r\n{}", "early_eof", 23},
                      ErrCase{"utf8", frame("[\"\xc3\"]"), "utf8", 23},
                      ErrCase{"depth", frame(std::string(17, '[') + std::string(17, ']')), "depth", 38},
                      ErrCase{"duplicate_key", frame("{\"a\":1,\"\\u0061\":2}"), "duplicate_key", 29},
                      ErrCase{"trailing", frame("{}{}"), "trailing", 23},
                      ErrCase{"malformed", frame("{\"a\"}"), "malformed", 25},
                      ErrCase{"after_good_frames", frame("1") + frame("2") + "x", "header", 44}),
    [](const ::testing::TestParamInfo<ErrCase>& i) { return std::string(i.param.name); });

TEST(FramesDecodeDpp, HelpHasAnExample) {
  SpawnOptions o;
  o.path = testing::bin("dot-core");
  o.argv = {"dot-core", "frames", "decode", "--help"};
  auto child = spawn(o);
  ASSERT_TRUE(child.ok());
  auto out = read_all(child->stdout_fd().get(), 1 << 20).value();
  EXPECT_NE(out.find("--format dpp"), std::string::npos);
  EXPECT_EQ(child->wait_until(Clock::now() + std::chrono::seconds(10))->code, 0);
}

}  // namespace
}  // namespace dot::dpp
