#pragma once
// The one way the conformance commands (`adpp conform`, `dpp conform`) print
// what they found: the same lines, the same JSON shape, the same exit.
//
//   text   per group (an ADPP suite, a DPP profile) a heading `GROUP: TITLE`,
//          one line per case `  PASS NAME  DETAIL` / `  FAIL NAME  DETAIL`, the
//          group's `  GROUP: N passed, N failed`; `N passed, N failed` last.
//          A detail quotes the program under test (its stderr, its words):
//          it is shown() on its line, so it cannot forge one.
//   --json one object: the command's own members first, then "cases" (each
//          {"name", GROUP_KEY, "passed", "detail", "ms"}), GROUP_KEY + "s"
//          (each group that ran: {"passed","failed"}), "passed", "failed".
//   exit   0 when every case passed; else 1 with one DOT_E_PROTOCOL line
//          (kind conformance) on stderr naming the first failure.

#include <functional>
#include <string_view>
#include <vector>

#include "json_writer.h"

namespace dot::cli {

struct ConformGroup {
  std::string_view name;   // "profile", "org.dot.dpp/v1"
  std::string_view title;  // "the framed-stdio profile v1"
};

struct ConformCaseLine {
  std::string_view name;
  std::string_view group;
  std::string_view checks;  // --list: what the case sends and requires
  bool passed = false;
  std::string_view detail;
  long long ms = 0;
};

struct ConformPrint {
  std::string_view group_key;  // "suite" | "profile"
  std::vector<ConformGroup> groups;
  std::vector<ConformCaseLine> cases;
  // Writes the command's own members into the open JSON object.
  std::function<void(JsonWriter&)> head;
};

// Adds each case a run returned (its name, passed, detail, elapsed) to p,
// every one in `group`.
template <typename Results>
void add_verdicts(ConformPrint& p, const Results& results, std::string_view group) {
  for (const auto& c : results) p.cases.push_back({c.name, group, {}, c.passed, c.detail, c.elapsed.count()});
}

// --list: `GROUP NAME  CHECKS` per case, or a JSON array of {name, GROUP_KEY, checks}.
int print_conform_list(const ConformPrint& p, bool json);
// The verdicts as above; returns the exit code.
int print_conform_report(const ConformPrint& p, bool json);

}  // namespace dot::cli
