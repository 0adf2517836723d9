// Runs the real dot-core binary: jcs canonicalize|hash and vectors replay.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

struct CliRun {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs shell text `cmd`, whose stderr must go to `err_path`: its exit code,
// stdout and stderr.
CliRun run_shell(const std::string& cmd, const std::string& err_path) {
  FILE* p = ::popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = ::pclose(p);
  CliRun r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, slurp(err_path)};
  std::remove(err_path.c_str());
  return r;
}

// `args` is shell text; stdin comes from `input` through a temporary file.
CliRun dot_core(const std::string& args, const std::string& input = "") {
  // ctest runs tests in parallel processes: names unique per process and call.
  static int calls = 0;
  std::string tag = std::to_string(::getpid()) + "_" + std::to_string(++calls);
  std::string dir = ::testing::TempDir();
  std::string in_path = dir + "jcs_cli_in_" + tag, err_path = dir + "jcs_cli_err_" + tag;
  { std::ofstream(in_path, std::ios::binary) << input; }
  std::string cmd = std::string("cd '") + DOT_SOURCE_DIR + "' && '" + DOT_BIN_DIR + "/dot-core' " + args + " <'" +
                    in_path + "' 2>'" + err_path + "'";
  CliRun r = run_shell(cmd, err_path);
  std::remove(in_path.c_str());
  return r;
}

TEST(JcsCli, CanonicalizeStdin) {
  CliRun r = dot_core("jcs canonicalize", "{\"b\":1,\"a\":[1e3,-0,\"\\u00e9\"]}\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "{\"a\":[1000,0,\"\xC3\xA9\"],\"b\":1}");
  EXPECT_EQ(r.err, "");
}

TEST(JcsCli, InvalidInputPrintsErrorLineAndNothingElse) {
  CliRun r = dot_core("jcs canonicalize -", "{\"a\":1,\"a\":2}");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "DOT_E_VALIDATION: duplicate_key at byte 7: key \"a\" appears twice in one object\n");
  CliRun j = dot_core("jcs canonicalize --json", "[1,2.5]");
  EXPECT_EQ(j.exit_code, 0);
  CliRun h = dot_core("jcs canonicalize --json --profile hello", "[1,2.5]");
  EXPECT_EQ(h.exit_code, 1);
  EXPECT_EQ(h.out,
            "{\"error\":{\"code\":\"DOT_E_VALIDATION\",\"kind\":\"fraction\",\"offset\":3,\"detail\":\"hello profile: "
            "number 2.5 is not spelled as a plain integer\"}}\n");
  // A big valid prefix must not leak out before the error at the end.
  std::string big = "[";
  for (int i = 0; i < 100000; ++i) big += "\"xxxxxxxx\",";  // more than one 1 MiB output piece
  big += "1e400]";
  CliRun late = dot_core("jcs canonicalize", big);
  EXPECT_EQ(late.exit_code, 1);
  EXPECT_EQ(late.out, "");
  EXPECT_NE(late.err.find("invalid_number at byte 1100001"), std::string::npos) << late.err;
}

// A named regular file is read whole into one padded buffer (json::PaddedText)
// and its output streamed in pieces: sizes at and around page boundaries give
// the same bytes as standard input, and a refusal found late in a file larger
// than one output piece still writes nothing.
TEST(JcsCli, CanonicalizeMappedFileMatchesStdin) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "jcs_cli_file_" + std::to_string(::getpid()) + ".json";
  for (std::size_t size : {std::size_t{2}, std::size_t{4031}, std::size_t{4032}, std::size_t{4095},
                           std::size_t{4096}, std::size_t{4097}, std::size_t{8192}, std::size_t{300000}}) {
    std::string text = "{\"z\":1,\"a\":[";
    while (text.size() + 20 < size) text += "\"x\\n\",-0,1.50,";
    text += "true]}";
    text.resize(std::max(text.size(), size), ' ');
    if (size == 2) text = "[]";
    { std::ofstream(path, std::ios::binary) << text; }
    CliRun from_file = dot_core("jcs canonicalize '" + path + "'");
    CliRun from_stdin = dot_core("jcs canonicalize", text);
    EXPECT_EQ(from_file.exit_code, 0) << size << from_file.err;
    EXPECT_EQ(from_file.out, from_stdin.out) << size;
    EXPECT_EQ(from_file.err, "");
    CliRun metewand = dot_core("jcs canonicalize --profile metewand '" + path + "'");
    EXPECT_EQ(metewand.out, from_stdin.out) << size;
  }
  std::string late = "[";
  for (int i = 0; i < 80000; ++i) late += "{\"k\":\"xxxxxxxx\"},";  // more than one 1 MiB output piece
  late += "{\"k\":1,\"k\":2}]";
  { std::ofstream(path, std::ios::binary) << late; }
  CliRun dup = dot_core("jcs canonicalize '" + path + "'");
  EXPECT_EQ(dup.exit_code, 1);
  EXPECT_EQ(dup.out, "");
  EXPECT_NE(dup.err.find("duplicate_key"), std::string::npos) << dup.err;
  EXPECT_NE(dup.err.find("(in " + path + ")"), std::string::npos) << dup.err;
  { std::ofstream(path, std::ios::binary) << "[9007199254740993]"; }
  CliRun unsafe = dot_core("jcs canonicalize --profile metewand '" + path + "'");
  EXPECT_EQ(unsafe.exit_code, 1);
  EXPECT_EQ(unsafe.out, "");
  EXPECT_NE(unsafe.err.find("unsafe_integer"), std::string::npos) << unsafe.err;
  CliRun big = dot_core("jcs canonicalize --max-bytes 4 '" + path + "'");
  EXPECT_EQ(big.exit_code, 1);
  EXPECT_EQ(big.out, "");
  EXPECT_NE(big.err.find("too_large at byte 4"), std::string::npos) << big.err;
  std::remove(path.c_str());
}

// Standard input that is a pipe (no size known in advance) is read to its
// end, however long, and refused as too_large past --max-bytes.
TEST(JcsCli, CanonicalizePipedStdin) {
  std::string dir = ::testing::TempDir(), tag = std::to_string(::getpid());
  std::string path = dir + "jcs_cli_pipe_" + tag + ".json", err_path = dir + "jcs_cli_pipe_err_" + tag;
  std::string text = "[";
  for (int i = 0; i < 30000; ++i) text += "{\"b\":-0.50,\"a\":\"\\u00e9\"},";
  text += "1]";
  { std::ofstream(path, std::ios::binary) << text; }
  auto piped = [&](const std::string& args) {
    return run_shell("cat '" + path + "' | '" + DOT_BIN_DIR + "/dot-core' " + args + " 2>'" + err_path + "'", err_path);
  };
  CliRun from_file = dot_core("jcs canonicalize '" + path + "'");
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  CliRun whole = piped("jcs canonicalize -");
  EXPECT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_TRUE(whole.out == from_file.out) << whole.out.size() << " bytes against " << from_file.out.size();
  CliRun over = piped("jcs canonicalize --max-bytes 1000");
  EXPECT_EQ(over.exit_code, 1);
  EXPECT_EQ(over.out, "");
  EXPECT_NE(over.err.find("too_large at byte 1000"), std::string::npos) << over.err;
  std::remove(path.c_str());
}

TEST(JcsCli, UsageErrorsExit2) {
  EXPECT_EQ(dot_core("jcs canonicalize --profile latin1").exit_code, 2);
  EXPECT_EQ(dot_core("jcs").exit_code, 2);
  EXPECT_EQ(dot_core("jcs hash").exit_code, 2);
  EXPECT_EQ(dot_core("vectors replay").exit_code, 2);
  CliRun help = dot_core("jcs canonicalize --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Examples:"), std::string::npos);
}

TEST(JcsCli, HashPrintsLikeSha256sumAndNothingOnFailure) {
  CliRun r = dot_core("jcs hash docs/examples/sample.json -", "[1]");
  EXPECT_EQ(r.exit_code, 0);
  // sha256 of the canonical bytes "[1]".
  EXPECT_NE(r.out.find("080a9ed428559ef602668b4c00f114f1a11c3f6b02a435f0bdc154578e4d7f22  -\n"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("docs/examples/sample.json\n"), 66u);
  CliRun bad = dot_core("jcs hash docs/examples/sample.json -", "[1,]");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(bad.err, "DOT_E_VALIDATION: malformed at byte 3: unexpected character \"]\" where a value should start\n");
  CliRun missing = dot_core("jcs hash no/such/file.json");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind("DOT_E_IO: ", 0), 0u) << missing.err;
}

TEST(VectorsCli, OurVectorsAllPass) {
  CliRun r = dot_core("vectors replay --strict-kinds vectors/jcs");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  ASSERT_GE(r.out.size(), 2u);
  std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  EXPECT_NE(last.find(" passed, 0 failed\n"), std::string::npos) << last;
  EXPECT_GE(std::stoul(last), 150u) << last;
}

TEST(VectorsCli, WrongVectorsAreReportedWithNameAndOffset) {
  const std::string dir = "tests/base/data/jcs_wrong";
  CliRun r = dot_core("vectors replay " + dir);
  EXPECT_EQ(r.exit_code, 1);
  const std::string want =
      "FAIL " + dir + "/fixture.json#wrong-canonical: canonical output differs at byte 2 (expected 0x62, got 0x61): "
      "expected \"{\\\"b\\\":1,\\\"a\\\":2}\", got \"{\\\"a\\\":2,\\\"b\\\":1}\"\n"
      "FAIL " + dir + "/fixture.json#wrong-sha256: sha256 "
      "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945 differs from the vector's "
      "\"0000000000000000000000000000000000000000000000000000000000000000\"\n"
      "FAIL " + dir + "/fixture.json#actually-rejected: rejected, but the vector expects acceptance: "
      "DOT_E_VALIDATION: duplicate_key at byte 7: key \"a\" appears twice in one object\n"
      "FAIL " + dir + "/fixture.json#actually-accepted: accepted as \"[1e+300]\", but the vector expects rejection "
      "(invalid_number)\n"
      "FAIL " + dir + "/io/input/a.json: canonical output differs at byte 11 (expected 0x33, got 0x32): "
      "expected \"{\\\"a\\\":1,\\\"b\\\":3}\", got \"{\\\"a\\\":1,\\\"b\\\":2}\"\n"
      "FAIL " + dir + "/io/input/c.json: no expected output: DOT_E_IO: cannot open " + dir +
      "/io/output/c.json: No such file or directory\n"
      "FAIL " + dir + "/numbers/es6.txt:2: number differs at byte 1 (expected 0x2e, got end of output): "
      "expected \"1.0\", got \"1\"\n"
      "5 passed, 7 failed\n";
  EXPECT_EQ(r.out, want);

  CliRun strict = dot_core("vectors replay --strict-kinds " + dir + "/fixture.json");
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.out.find("FAIL " + dir + "/fixture.json#other-kind: rejected as duplicate_key but the vector "
                            "names invalid_number"),
            std::string::npos)
      << strict.out;
  EXPECT_NE(strict.out.find("\n2 passed, 5 failed\n"), std::string::npos) << strict.out;

  CliRun json = dot_core("vectors replay --json " + dir + "/numbers");
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_EQ(json.out, "{\"failed\":1,\"failures\":[{\"detail\":\"number differs at byte 1 (expected 0x2e, got end of "
                      "output): expected \\\"1.0\\\", got \\\"1\\\"\",\"name\":\"" + dir +
                      "/numbers/es6.txt:2\",\"offset\":1}],\"passed\":1}\n");
}

TEST(VectorsCli, MissingPathIsAnError) {
  CliRun r = dot_core("vectors replay no/such/dir");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "DOT_E_IO: cannot read vectors at no/such/dir: no such file or directory\n");
}

}  // namespace

#ifdef DOT_BENCH_CORPUS
// bench_jcs_corpus (issue 18): deterministic from its seed, every shape about
// the size asked for, each a text the strict reader accepts and whose
// canonical form is a fixed point; and each shape holds what it is named for.
TEST(JcsBenchCorpus, ShapesAreDeterministicValidAndWhatTheySay) {
  std::string base = ::testing::TempDir() + "jcs_corpus_" + std::to_string(::getpid());
  auto generate = [&](const std::string& dir, const std::string& seed) {
    std::string cmd = "mkdir -p '" + dir + "' && '" + DOT_BIN_DIR + "/bench_jcs_corpus' '" + dir + "' 1 " + seed +
                      " >/dev/null";
    return std::system(cmd.c_str());
  };
  ASSERT_EQ(generate(base + "_a", "7"), 0);
  ASSERT_EQ(generate(base + "_b", "7"), 0);
  ASSERT_EQ(generate(base + "_c", "8"), 0);
  for (const char* shape : {"numbers", "escapes", "utf8", "wide", "deep", "pretty", "records"}) {
    std::string a = base + "_a/" + shape + ".json";
    std::string text = slurp(a);
    EXPECT_EQ(text, slurp(base + "_b/" + shape + ".json")) << shape;
    EXPECT_LE(text.size(), std::size_t{1} << 20) << shape;
    EXPECT_GE(text.size(), (std::size_t{1} << 20) - 65536) << shape;
    if (std::string(shape) != "records") {  // doc_gen.h's document has no seed
      EXPECT_NE(text, slurp(base + "_c/" + shape + ".json")) << shape;
    }
    CliRun once = dot_core("jcs canonicalize '" + a + "'");
    EXPECT_EQ(once.exit_code, 0) << shape << once.err;
    CliRun twice = dot_core("jcs canonicalize", once.out);
    EXPECT_EQ(twice.out, once.out) << shape;
  }
  std::string numbers = slurp(base + "_a/numbers.json");
  for (const char* needle : {"-0,", "E-", "e+", "5e-324", "1.7976931348623157", "1e-400", ".0,"})
    EXPECT_NE(numbers.find(needle), std::string::npos) << needle;
  EXPECT_NE(numbers.find("000000000000000000000"), std::string::npos);  // beyond 2^64 in plain digits
  std::string escapes = slurp(base + "_a/escapes.json");
  for (const char* needle : {"\\u001", "\\uD8", "\\ud8", "\\t", "\\\"", "\\/"})
    EXPECT_NE(escapes.find(needle), std::string::npos) << needle;
  std::string wide = slurp(base + "_a/wide.json");
  EXPECT_NE(wide.find('\xF0'), std::string::npos);  // astral keys
  EXPECT_NE(wide.find('\xEE'), std::string::npos);  // and BMP keys above the surrogates
  std::string deep = dot_core("jcs canonicalize '" + base + "_a/deep.json'").out;
  std::size_t depth = 0, deepest = 0;
  for (char c : deep) {
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    if (c == ']' || c == '}') --depth;
  }
  EXPECT_GE(deepest, std::size_t{100});
  std::string pretty = slurp(base + "_a/pretty.json");
  EXPECT_NE(pretty.find("\r\n"), std::string::npos);
  EXPECT_NE(pretty.find(" \t "), std::string::npos);
  std::system(("rm -rf '" + base + "_a' '" + base + "_b' '" + base + "_c'").c_str());
}
#endif
