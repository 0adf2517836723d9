#include "output.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

#include "dot/base/fd.h"

namespace dot::cli {

int report(const Error& error, bool json) {
  if (json) {
    std::string line = error.json();
    line += '\n';
    (void)write_stdout(line);
  }
  std::string line = error.line();
  line += '\n';
  (void)write_all(STDERR_FILENO, line, "standard error");
  return 1;
}

bool write_stdout(std::string_view bytes) {
  std::fflush(stdout);
  return write_all(STDOUT_FILENO, bytes, "standard output").ok();
}

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

std::string format_time_ms(long long unix_ms) {
  std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
}

}  // namespace dot::cli
