#pragma once
// The progress line of plan and apply on stderr: "plan: 1200/10000 targets
// observed, 1.2 MiB". In auto mode it shows only on a terminal and only once
// the step has run for about a second, redrawn in place at most ten times a
// second and cleared at the end; `always` draws every update, one line each
// when stderr is not a terminal (what tests use: nothing depends on time);
// `never` draws nothing (also what --json and --quiet choose).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace dot::cli {

enum class ProgressWhen { Auto, Always, Never };

// "always" or "never" (--progress, checked by the parser); anything else is auto.
ProgressWhen progress_when(const std::string& word);

// "512 B", "1.5 KiB", "12.0 MiB", "3.2 GiB".
std::string byte_size_text(std::uint64_t bytes);

class ProgressLine {
 public:
  // `label`: "plan"; `what`: "targets observed".
  ProgressLine(ProgressWhen when, std::string label, std::string what, int fd = 2);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(std::size_t done, std::size_t total, std::uint64_t bytes);
  // The step is over: a drawn line is wiped on a terminal (also on destruction).
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  void draw(const std::string& line);
  ProgressWhen when_;
  std::string label_, what_;
  int fd_;
  bool terminal_;
  bool drawn_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_{};
};

}  // namespace dot::cli
