// Usage errors the way people know them from git (usage.h).
#include "usage.h"

#include <unistd.h>

#include <algorithm>

#include "commands.h"
#include "dot/base/fd.h"
#include "dot/base/utf8.h"

namespace dot::cli {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and
  // transpositions of neighbours ("lsit" -> "list") cost one each.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1, 0));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::vector<std::string> subcommand_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::App* s : cmd.get_subcommands([](const CLI::App*) { return true; }))
    if (!s->get_name().empty()) names.push_back(s->get_name());
  return names;
}

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// The command the parser was in when it failed: the last subcommand it
// entered, level by level.
const CLI::App& failing_command(const CLI::App& app) {
  const CLI::App* cur = &app;
  for (;;) {
    auto parsed = cur->get_subcommands();
    if (parsed.empty()) return *cur;
    cur = parsed.back();
  }
}

void print_usage(const CLI::App& cmd, const std::string& what, const std::vector<std::string>& suggestions) {
  std::string out = command_path(cmd) + ": " + shown(what) + "\n";
  if (!suggestions.empty()) {
    out += "did you mean ";
    for (std::size_t i = 0; i < suggestions.size(); ++i) {
      if (i) out += i + 1 == suggestions.size() ? " or " : ", ";
      out += "'" + suggestions[i] + "'";
    }
    out += "?\n";
  }
  out += "run '" + command_path(cmd) + " --help' for its usage\n";
  (void)write_all(STDERR_FILENO, out, "standard error");
}

}  // namespace

std::string command_path(const CLI::App& cmd) {
  std::string path = cmd.get_name();
  for (const CLI::App* p = cmd.get_parent(); p != nullptr; p = p->get_parent()) path = p->get_name() + " " + path;
  return path;
}

std::vector<std::string> closest_names(std::string_view word, const std::vector<std::string>& known) {
  std::vector<std::string> best;
  std::size_t best_distance = 3;
  for (const auto& name : known) {
    std::size_t d = edit_distance(word, name);
    if (d >= word.size() || d > best_distance) continue;
    if (d < best_distance) best.clear();
    best_distance = d;
    best.push_back(name);
  }
  if (!best.empty()) return best;
  // Dashes do not count towards the three characters: "--a" is no hint.
  if (word.size() - std::min(word.find_first_not_of('-'), word.size()) < 3) return best;
  for (const auto& name : known)
    if (name.size() > word.size() && name.compare(0, word.size(), word) == 0) best.push_back(name);
  return best;
}

int report_unknown_command(const CLI::App& parent, std::string_view word) {
  print_usage(parent, "unknown command '" + std::string(word) + "'", closest_names(word, subcommand_names(parent)));
  return kExitUsage;
}

int report_usage_error(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App& cmd = failing_command(app);
  std::vector<std::string> left = app.remaining(true);
  // The first word nobody took: an unknown option, a misspelt command, or
  // one argument too many.
  if (!left.empty() && (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr ||
                        dynamic_cast<const CLI::RequiredError*>(&e) != nullptr)) {
    const std::string& word = left.front();
    if (word.size() > 1 && word[0] == '-') {
      std::string name = word.substr(0, word.find('='));
      print_usage(cmd, "unknown option '" + word + "'", closest_names(name, option_names(cmd)));
      return kExitUsage;
    }
    auto commands = subcommand_names(cmd);
    if (!commands.empty()) return report_unknown_command(cmd, word);
    print_usage(cmd, "unexpected argument '" + word + "'", {});
    return kExitUsage;
  }
  print_usage(cmd, e.what(), {});
  return kExitUsage;
}

CLI::Option* add_repeatable_option(CLI::App* cmd, const std::string& name, std::vector<std::string>& target,
                                   const std::string& description) {
  return cmd->add_option(name, target, description)
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

}  // namespace dot::cli
