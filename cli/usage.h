#pragma once
// Usage errors the way people know them from git: what was wrong, the
// closest known name when the word looks like a typo ("did you mean"), and
// the command whose help applies. Every parse error of every command is
// reported here (docs/spec/cli.md: exit 2; docs/user-guide.md).

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace dot::cli {

// "dot-core", "dot-core inspect list": the command as a person types it.
std::string command_path(const CLI::App& cmd);

// The names in `known` closest to `word`: those at the smallest
// Damerau-Levenshtein (optimal string alignment) distance when it is at most
// 2 and smaller than the word, else the ones `word` is a prefix of (a word of
// at least 3 characters). Empty when nothing is close.
std::vector<std::string> closest_names(std::string_view word, const std::vector<std::string>& known);

// Prints the usage error `e` raised while `app` parsed (stderr): a line
// naming the command and what was wrong, "did you mean ...?" when a word is
// close to a known subcommand or option of that command, and "run 'dot-core
// ... --help'". Returns kExitUsage.
int report_usage_error(const CLI::App& app, const CLI::ParseError& e);

// The same for an unknown command word under `parent` (`dot-core help plna`).
int report_unknown_command(const CLI::App& parent, std::string_view word);

// A string option that may be given again and again, one value per use
// (`--case A --case B`). CLI11's default for a list option takes every
// following word and eats a `--`, so `--case A -- PROG --config F` would
// give `--config` to nobody: here `--` always starts the positionals.
CLI::Option* add_repeatable_option(CLI::App* cmd, const std::string& name, std::vector<std::string>& target,
                                   const std::string& description);

}  // namespace dot::cli
