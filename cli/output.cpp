// Printing results and errors (output.h): the error line, exact bytes, text for a person.
#include "output.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "dot/base/error_kinds.h"
#include "dot/base/fd.h"

namespace dot::cli {

int report(const Error& error, bool json) {
  if (json) {
    std::string line = error.json();
    line += '\n';
    (void)write_stdout(line);
  }
  // A detail can quote a plugin's words or a stored row: one line, escaped.
  std::string line = shown(error.line());
  line += '\n';
  (void)write_all(STDERR_FILENO, line, "standard error");
  return 1;
}

bool write_stdout(std::string_view bytes) {
  std::fflush(stdout);
  return write_all(STDOUT_FILENO, bytes, "standard output").ok();
}

Error stdout_error() { return make_error(base::ErrorKind::Write, "cannot write standard output"); }

bool print_text(std::string_view text) { return write_stdout(shown(text, LineBreaks::Keep)); }

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

std::string format_time_ms(long long unix_ms) {
  // Calendar arithmetic rather than gmtime_r: glibc's gmtime_r loads the time
  // zone (opens and reads /etc/localtime) on its first call, a dozen system
  // calls for a UTC time that needs none.
  using namespace std::chrono;
  const sys_time<milliseconds> t{milliseconds{unix_ms}};
  const sys_days day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss<milliseconds> hms{t - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), hms.hours().count(),
                     hms.minutes().count(), hms.seconds().count(), hms.subseconds().count());
}

}  // namespace dot::cli
