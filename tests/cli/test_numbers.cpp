// Every numeric option of every command (cli/numbers.h): a value that is not
// plain decimal digits inside the option's range is a usage error (exit 2)
// before the command opens anything. The table is each option against each
// kind of bad number, in both spellings (`--opt V` and `--opt=V`).
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dot/store/root.h"
#include "dot/store/store.h"
#include "helpers.h"
#include "run_cli.h"

namespace dot::cli {
namespace {

using store::testing::RunResult;
using store::testing::TempDir;

std::string bin(const std::string& name) { return std::string(DOT_BIN_DIR) + "/" + name; }

// Everything in the root's state folder, with each file's bytes and mtime:
// opening the database (even read-only, in WAL mode) or taking the lock
// changes it.
std::string state_of(const std::string& dir) {
  std::string out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    struct stat st {};
    ::lstat(e.path().c_str(), &st);
    out += e.path().filename().string() + " " + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + " " + store::testing::slurp(e.path()) + "\n";
  }
  return out;
}

struct NumericOption {
  std::vector<std::string> before;  // the command and its other arguments
  std::string option;
  std::vector<std::string> after;   // arguments that must come last (after --)
};

class NumericOptions : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = store::init_root(t / "root");
    ASSERT_TRUE(r.ok()) << r.error().line();
    layout = r->layout;
    // Two finished transactions: `prune --keep -1` used to drop both.
    auto s = store::Store::open(layout.database);
    ASSERT_TRUE(s.ok());
    for (int i = 0; i < 2; ++i) {
      auto a = s->begin_proposal({"org.dot.hello", store::testing::hex64('d'), 0});
      ASSERT_TRUE(a.ok());
      ASSERT_TRUE(s->abandon(*a, {"DOT_E_PROTOCOL", "test", "stderr bytes"}).ok());
    }
    std::ofstream(t / "doc.json", std::ios::binary) << "{\"a\":1}";
  }

  RunResult run(std::vector<std::string> args) {
    args.insert(args.begin(), bin("dot-core"));
    return store::testing::run_program(args, t.path());
  }

  std::vector<NumericOption> options() const {
    const std::string root = layout.root;
    const std::string doc = t / "doc.json";
    return {
        {{"store", "prune", "--root", root}, "--keep", {}},
        {{"inspect", "list", "--root", root}, "--limit", {}},
        {{"jcs", "canonicalize", doc}, "--max-bytes", {}},
        {{"jcs", "canonicalize", doc}, "--max-depth", {}},
        {{"jcs", "hash", doc}, "--max-bytes", {}},
        {{"jcs", "hash", doc}, "--max-depth", {}},
        {{"metewand", "hello"}, "--timeout", {"--", bin("metewand-example-worker")}},
        {{"adpp", "conform"}, "--timeout", {"--", bin("adpp-sim")}},
    };
  }

  TempDir t;
  store::RootLayout layout;
};

TEST_F(NumericOptions, EveryBadNumberIsAUsageErrorBeforeAnythingIsOpened) {
  const std::vector<std::string> bad = {"-1", "9223372036854775808", "18446744073709551616", "1e3", "0x10", "",
                                        "+1", " 1", "1.5.", "-0", "١"};
  const std::string before = state_of(layout.root + "/.dot");
  for (const auto& o : options()) {
    for (const auto& value : bad) {
      for (bool joined : {false, true}) {
        std::vector<std::string> args = o.before;
        if (joined) {
          args.push_back(o.option + "=" + value);
        } else {
          args.push_back(o.option);
          args.push_back(value);
        }
        args.insert(args.end(), o.after.begin(), o.after.end());
        std::string what = o.before[0] + " " + o.before[1] + " " + o.option + (joined ? "=" : " ") + "\"" + value + "\"";
        RunResult r = run(args);
        EXPECT_EQ(r.exit_code, 2) << what << "\nstdout: " << r.out << "\nstderr: " << r.err;
        EXPECT_NE(r.err.find(o.option), std::string::npos) << what << ": " << r.err;
        EXPECT_EQ(r.err.find("DOT_E_"), std::string::npos) << what << " ran the command: " << r.err;
        EXPECT_EQ(r.out, "") << what;
      }
    }
  }
  // The store was never opened: not a byte, not a timestamp, no new file.
  EXPECT_EQ(state_of(layout.root + "/.dot"), before);
}

TEST_F(NumericOptions, FractionsAreSecondsOnly) {
  RunResult keep = run({"store", "prune", "--root", layout.root, "--keep", "1.5"});
  EXPECT_EQ(keep.exit_code, 2) << keep.err;
  RunResult depth = run({"jcs", "canonicalize", t / "doc.json", "--max-depth", "2.0"});
  EXPECT_EQ(depth.exit_code, 2) << depth.err;
  // A timeout outside its range is a usage error too.
  RunResult conform = run({"adpp", "conform", "--timeout", "601", "--", bin("adpp-sim")});
  EXPECT_EQ(conform.exit_code, 2) << conform.err;
  RunResult hello = run({"metewand", "hello", "--timeout", "0", "--", bin("metewand-example-worker")});
  EXPECT_EQ(hello.exit_code, 2) << hello.err;
}

TEST_F(NumericOptions, DecimalDigitsAreTakenAsTheyRead) {
  // Leading zeros are decimal ("010" is ten, not octal eight).
  RunResult list = run({"inspect", "list", "--root", layout.root, "--json", "--limit", "01"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '{'), 1) << list.out;
  RunResult big = run({"jcs", "canonicalize", t / "doc.json", "--max-bytes", "007"});
  EXPECT_EQ(big.exit_code, 0) << big.err;
  EXPECT_EQ(big.out, "{\"a\":1}");
  RunResult small = run({"jcs", "canonicalize", t / "doc.json", "--max-bytes", "06"});
  EXPECT_EQ(small.exit_code, 1) << small.err;
  // Nine bytes: "010" read as octal (8) would refuse them.
  std::ofstream(t / "nine.json", std::ios::binary) << "{\"ab\":12}";
  RunResult ten = run({"jcs", "canonicalize", t / "nine.json", "--max-bytes", "010"});
  EXPECT_EQ(ten.exit_code, 0) << ten.err;
  EXPECT_EQ(ten.out, "{\"ab\":12}");
  // The largest count is accepted and keeps everything.
  RunResult prune = run({"store", "prune", "--root", layout.root, "--keep", "9223372036854775807", "--json"});
  EXPECT_EQ(prune.exit_code, 0) << prune.err;
  EXPECT_EQ(prune.out, "{\"pruned\":0,\"keep\":9223372036854775807}\n");
  RunResult zero = run({"store", "prune", "--root", layout.root, "--keep", "0", "--json"});
  EXPECT_EQ(zero.out, "{\"pruned\":2,\"keep\":0}\n");
}

}  // namespace
}  // namespace dot::cli
