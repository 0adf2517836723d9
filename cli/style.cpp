// Colour and paging of human output (style.h).
#include "style.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "dot/base/utf8.h"
#include "dot/store/state.h"
#include "output.h"

extern char** environ;

namespace dot::cli {
namespace {

constexpr std::string_view kGreen = "\x1b[32m";
constexpr std::string_view kRed = "\x1b[31m";
constexpr std::string_view kYellow = "\x1b[33m";
constexpr std::string_view kCyan = "\x1b[36m";
constexpr std::string_view kReset = "\x1b[0m";

void wrap(std::string& out, std::string_view colour, std::string_view text) {
  if (colour.empty() || text.empty()) {
    out += text;
    return;
  }
  out += colour;
  out += text;
  out += kReset;
}

std::string_view diff_colour(std::string_view line) {
  if (line.starts_with("+++") || line.starts_with("---")) return {};
  if (line.starts_with("+")) return kGreen;
  if (line.starts_with("-")) return kRed;
  if (line.starts_with("@@")) return kCyan;
  return {};
}

std::string_view state_colour(std::string_view word) {
  for (store::State s : store::all_states()) {
    if (store::state_name(s) != word) continue;
    switch (s) {
      case store::State::Done:
      case store::State::RolledBack:
        return kGreen;
      case store::State::Abandoned:
      case store::State::Stale:
        return kRed;
      case store::State::Sealed:
      case store::State::Proposing:
      case store::State::Prepared:
      case store::State::Committing:
      case store::State::Committed:
      case store::State::RollingBack:
        return kYellow;
      case store::State::Discarded:
        return {};
    }
  }
  return {};
}

// Each whole word (between spaces or line ends) that names a state.
void paint_states(std::string& out, std::string_view line) {
  std::size_t i = 0;
  while (i < line.size()) {
    std::size_t end = line.find(' ', i);
    if (end == std::string_view::npos) end = line.size();
    wrap(out, state_colour(line.substr(i, end - i)), line.substr(i, end - i));
    if (end < line.size()) out += ' ';
    i = end + 1;
  }
}

// Sends `text` to `sh -c "$PAGER"` on our terminal; false when no pager ran.
bool run_pager(std::string_view text) {
  const char* env = std::getenv("PAGER");
  std::string pager = env != nullptr && *env != '\0' ? env : "less -R";
  SpawnOptions o;
  o.path = "/bin/sh";
  o.argv = {"sh", "-c", pager};
  for (char** e = environ; *e != nullptr; ++e) o.env.emplace_back(*e);
  o.stdin_mode = StdioMode::Pipe;
  o.stdout_mode = StdioMode::Inherit;
  o.stderr_mode = StdioMode::Inherit;
  // An interactive pager reads keys from the terminal: it must stay in our
  // (foreground) process group, and may outlive nothing of ours.
  o.new_process_group = false;
  auto child = spawn(o);
  if (!child.ok()) return false;
  // A pager quit early (EPIPE) is the reader's choice, not an error.
  (void)write_all(child->stdin_fd().get(), text, "the pager");
  child->stdin_fd().reset();
  (void)child->wait_until(Clock::now() + std::chrono::hours(24 * 365));
  return true;
}

}  // namespace

bool colour_on_stdout() {
  if (!stdout_is_terminal()) return false;
  const char* no_colour = std::getenv("NO_COLOR");
  if (no_colour != nullptr && *no_colour != '\0') return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

std::string painted(std::string_view shown_text, Paint paint) {
  if (paint == Paint::None) return std::string(shown_text);
  std::string out;
  out.reserve(shown_text.size() + shown_text.size() / 8);
  while (!shown_text.empty()) {
    std::size_t nl = shown_text.find('\n');
    std::string_view line = shown_text.substr(0, nl);
    if (paint == Paint::Diff)
      wrap(out, diff_colour(line), line);
    else
      paint_states(out, line);
    if (nl == std::string_view::npos) break;
    out += '\n';
    shown_text.remove_prefix(nl + 1);
  }
  return out;
}

bool print_styled(std::string_view text, Paint paint, bool page) {
  std::string out = shown(text, LineBreaks::Keep);
  if (colour_on_stdout()) out = painted(out, paint);
  if (page && stdout_is_terminal() && run_pager(out)) return true;
  return write_stdout(out);
}

}  // namespace dot::cli
