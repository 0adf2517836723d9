// The one way the conformance commands print their verdicts (conform_output.h).
#include "conform_output.h"
#include "error_kinds.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "output.h"

namespace dot::cli {

int print_conform_list(const ConformPrint& p, bool json) {
  if (json) {
    JsonWriter w;
    w.begin_array();
    for (const auto& c : p.cases) {
      w.begin_object();
      w.key("name").string(c.name);
      w.key(p.group_key).string(c.group);
      w.key("checks").string(c.checks);
      w.end_object();
    }
    w.end_array();
    return write_stdout(std::move(w).line()) ? kExitOk : kExitError;
  }
  std::size_t name_width = 0, group_width = 0;
  for (const auto& c : p.cases) {
    name_width = std::max(name_width, c.name.size());
    group_width = std::max(group_width, c.group.size());
  }
  std::string out;
  for (const auto& c : p.cases)
    out += fmt::format("{:<{}} {:<{}}  {}\n", c.group, group_width, c.name, name_width, c.checks);
  return print_text(out) ? kExitOk : kExitError;
}

int print_conform_report(const ConformPrint& p, bool json) {
  auto count = [&](std::string_view group, bool passed) {
    return static_cast<std::size_t>(std::count_if(p.cases.begin(), p.cases.end(), [&](const ConformCaseLine& c) {
      return (group.empty() || c.group == group) && c.passed == passed;
    }));
  };
  auto ran = [&](std::string_view group) { return count(group, true) + count(group, false) > 0; };
  const std::size_t passed = count({}, true), failed = count({}, false);

  if (json) {
    JsonWriter w;
    w.begin_object();
    if (p.head) p.head(w);
    w.key("cases").begin_array();
    for (const auto& c : p.cases) {
      w.begin_object();
      w.key("name").string(c.name);
      w.key(p.group_key).string(c.group);
      w.key("passed").boolean(c.passed);
      w.key("detail").string(c.detail);
      w.key("ms").number(c.ms);
      w.end_object();
    }
    w.end_array();
    w.key(std::string(p.group_key) + "s").begin_object();
    for (const auto& g : p.groups) {
      if (!ran(g.name)) continue;
      w.key(g.name).begin_object();
      w.key("passed").number(count(g.name, true));
      w.key("failed").number(count(g.name, false));
      w.end_object();
    }
    w.end_object();
    w.key("passed").number(passed);
    w.key("failed").number(failed);
    w.end_object();
    if (!write_stdout(std::move(w).line())) return kExitError;
  } else {
    std::size_t width = 0;
    for (const auto& c : p.cases) width = std::max(width, c.name.size());
    std::string out;
    for (const auto& g : p.groups) {
      if (!ran(g.name)) continue;
      out += fmt::format("{}: {}\n", g.name, g.title);
      for (const auto& c : p.cases)
        if (c.group == g.name)
          out += fmt::format("  {} {:<{}}  {}\n", c.passed ? "PASS" : "FAIL", c.name, width, shown(c.detail));
      out += fmt::format("  {}: {} passed, {} failed\n", g.name, count(g.name, true), count(g.name, false));
    }
    out += fmt::format("{} passed, {} failed\n", passed, failed);
    if (!print_text(out)) return kExitError;
  }
  if (failed == 0) return kExitOk;
  auto first = std::find_if(p.cases.begin(), p.cases.end(), [](const ConformCaseLine& c) { return !c.passed; });
  // The JSON document above already carries the verdict: only stderr gets the error line.
  return report(make_error(cli::ErrorKind::Conformance, fmt::format("{} of {} cases failed; first: {}: {}", failed,
                                                                    p.cases.size(), first->name, first->detail)),
                false);
}

}  // namespace dot::cli
