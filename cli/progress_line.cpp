// The progress line of plan and apply (progress_line.h).
#include "progress_line.h"

#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/fd.h"

namespace dot::cli {

ProgressWhen progress_when(const std::string& word) {
  if (word == "always") return ProgressWhen::Always;
  if (word == "never") return ProgressWhen::Never;
  return ProgressWhen::Auto;
}

std::string byte_size_text(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024;
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

ProgressLine::ProgressLine(ProgressWhen when, std::string label, std::string what, int fd)
    : when_(when), label_(std::move(label)), what_(std::move(what)), fd_(fd), terminal_(::isatty(fd) == 1) {
  if (when_ == ProgressWhen::Auto && !terminal_) when_ = ProgressWhen::Never;
}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::finish() {
  // On a terminal the line is wiped, so what the command prints next starts clean.
  if (drawn_ && terminal_) (void)write_all(fd_, "\r\x1b[K", "stderr");
  drawn_ = false;
  when_ = ProgressWhen::Never;
}

void ProgressLine::update(std::size_t done, std::size_t total, std::uint64_t bytes) {
  if (when_ == ProgressWhen::Never) return;
  const std::string line = fmt::format("{}: {}/{} {}, {}", label_, done, total, what_, byte_size_text(bytes));
  if (when_ == ProgressWhen::Always) {
    draw(line);
    return;
  }
  // Auto: nothing for a step that ends within a second; then at most ten
  // redraws a second, and always the last one.
  const auto now = Clock::now();
  if (now - start_ < std::chrono::seconds(1)) return;
  if (done != total && drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  draw(line);
}

void ProgressLine::draw(const std::string& line) {
  drawn_ = true;
  (void)write_all(fd_, terminal_ ? "\r" + line + "\x1b[K" : line + "\n", "stderr");
}

}  // namespace dot::cli
