#pragma once
// Printing results and errors the way spec/cli.md says: one error line on
// stderr, and with --json the same error as an object on stdout.

#include <string>
#include <string_view>

#include "dot/base/error.h"

namespace dot::cli {

// Prints the error line (and, when json, the JSON error object on stdout);
// returns exit code 1.
int report(const Error& error, bool json = false);
// Writes bytes to stdout exactly (no newline added); false on a write error.
bool write_stdout(std::string_view bytes);
// True when stdout is a terminal (colour and alignment decisions).
bool stdout_is_terminal();
// RFC 3339 UTC with milliseconds from milliseconds since the epoch.
std::string format_time_ms(long long unix_ms);

}  // namespace dot::cli
