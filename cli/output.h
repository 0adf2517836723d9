#pragma once
// Printing results and errors the way docs/spec/cli.md says: one error line on
// stderr, and with --json the same error as an object on stdout.
//
// Two ways out, and every printer uses one of them: write_stdout for exact
// bytes (JSON from JsonWriter, canonical JSON, captured frames) and
// print_text for text meant for a person. Everything a person reads passes
// through dot::append_shown (dot/base/utf8.h), the one escaper: fields that
// may hold bytes from a plugin, a provider or a stored row are shown() on
// their own (so a '\n' in them cannot forge a line), and print_text applies
// the same rule, keeping line breaks, to the whole text on its way out (so a
// field somebody forgot still cannot reach the terminal raw).

#include <string>
#include <string_view>

#include "dot/base/error.h"
#include "dot/base/utf8.h"  // shown(): one field of human output

namespace dot::cli {

// Prints the error line, shown() on one line (and, when json, the JSON error
// object on stdout); returns exit code 1.
int report(const Error& error, bool json = false);
// Writes bytes to stdout exactly (no newline added); false on a write error.
bool write_stdout(std::string_view bytes);
// The error a command reports when write_stdout or print_text failed.
Error stdout_error();
// Writes text for a person to stdout: every control but newline and tab
// escaped as \xNN; false on a write error.
bool print_text(std::string_view text);
// True when stdout is a terminal (colour and alignment decisions).
bool stdout_is_terminal();
// RFC 3339 UTC with milliseconds from milliseconds since the epoch.
std::string format_time_ms(long long unix_ms);

}  // namespace dot::cli
