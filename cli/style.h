#pragma once
// Colour and paging of human output, decided in one place. Colour is on when
// standard output is a terminal, NO_COLOR is unset or empty and TERM is not
// "dumb"; never otherwise (docs/spec/cli.md: no colour when stdout is not a
// terminal). `--pager` sends the text through $PAGER, only when asked and
// only to a terminal.
//
// Colour is added AFTER the text went through the one escaper (dot::shown,
// as print_text does): every byte a plugin or a stored row controls is
// already \xNN when an SGR sequence of ours is put around a line or a word,
// so the only escape sequences that reach the terminal are ours.

#include <string>
#include <string_view>

namespace dot::cli {

// What to colour in a text.
enum class Paint {
  None,
  Diff,    // unified diff lines: added green, removed red, hunk headers cyan
  States,  // transaction state names (whole words): finished well green, failed red, waiting yellow
};

// Whether standard output gets colour (isatty, NO_COLOR, TERM).
bool colour_on_stdout();

// `shown_text` (already escaped) with `paint` applied.
std::string painted(std::string_view shown_text, Paint paint);

// Prints `text` for a person: escaped like print_text, then painted when
// colour is on, then written to standard output, or through `sh -c "$PAGER"`
// (`less -R` when PAGER is unset or empty) when `page` is set and standard
// output is a terminal. A pager that cannot be started is skipped (the text
// is printed directly). False on a write error.
bool print_styled(std::string_view text, Paint paint, bool page = false);

}  // namespace dot::cli
