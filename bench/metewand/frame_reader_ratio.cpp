// frame_reader_ratio [ROUNDS]: the FrameReader against simdjson's DOM parse
// of the same 16 lines of 1 MiB, interleaved round by round so that both see
// the same machine load (this shared VM's load swings within seconds, which
// sequential benchmarks turn into noise). Per round: simdjson parses the 16
// pre-padded lines with a reused parser; then one long-lived FrameReader
// reads the same 16 lines from a stream (64 KiB reads, as from a pipe) and
// validates each (next_line), and, separately, builds a tree per line
// (read_frame). Prints medians of thread CPU time and of the per-round ratios.
#include <simdjson.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dot/metewand/frame_reader.h"
#include "line_gen.h"

namespace {

constexpr int kLines = 16;

// CPU time of this thread: time slices lost to other tenants do not count.
double cpu_seconds(const std::function<void()>& f) {
  timespec a{}, b{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  f();
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return static_cast<double>(b.tv_sec - a.tv_sec) + static_cast<double>(b.tv_nsec - a.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "frame_reader_ratio: %s failed\n", what);
  std::exit(1);
}

// The stream over and over, in pieces of at most 64 KiB.
class EndlessSource final : public dot::ByteSource {
 public:
  explicit EndlessSource(std::string_view bytes) : bytes_(bytes) {}
  dot::Result<std::size_t> read(char* buffer, std::size_t capacity) override {
    std::size_t n = std::min({capacity, bytes_.size() - pos_, std::size_t{64 * 1024}});
    std::memcpy(buffer, bytes_.data() + pos_, n);
    pos_ = (pos_ + n) % bytes_.size();
    return n;
  }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 31;
  if (rounds < 1) rounds = 1;
  std::vector<simdjson::padded_string> padded;
  std::string stream;
  for (int i = 0; i < kLines; ++i) {
    std::string line = dot::bench::make_line(i);
    padded.emplace_back(line);
    stream += line;
    stream += '\n';
  }
  simdjson::dom::parser sj;
  EndlessSource lines_source(stream), frames_source(stream);
  dot::metewand::FrameReader lines(lines_source), frames(frames_source);
  auto simdjson_parse = [&] {
    for (const auto& p : padded)
      if (sj.parse(p).error()) fail("simdjson");
  };
  auto next_lines = [&] {
    for (int i = 0; i < kLines; ++i) {
      auto r = lines.next_line();
      if (!r.ok() || !r->has_value()) fail("next_line");
    }
  };
  auto read_frames = [&] {
    for (int i = 0; i < kLines; ++i) {
      auto r = frames.read_frame();
      if (!r.ok() || !r->has_value()) fail("read_frame");
    }
  };
  simdjson_parse();  // warm up: buffers grown, pages touched
  next_lines();
  read_frames();
  std::vector<double> base, ours, ours_ratio, tree, tree_ratio;
  for (int i = 0; i < rounds; ++i) {
    double b = cpu_seconds(simdjson_parse);
    double l = cpu_seconds(next_lines);
    double f = cpu_seconds(read_frames);
    base.push_back(b);
    ours.push_back(l);
    tree.push_back(f);
    ours_ratio.push_back(l / b);
    tree_ratio.push_back(f / b);
  }
  double bytes = static_cast<double>(stream.size());
  std::printf("16 lines of 1 MiB (%.0f bytes), %d interleaved rounds, medians of thread CPU time\n", bytes, rounds);
  std::printf("%-36s %9s %10s %8s\n", "", "ms", "GB/s", "ratio");
  std::printf("%-36s %9.2f %10.2f %8s\n", "simdjson DOM (reused parser)", median(base) * 1e3,
              bytes / median(base) / 1e9, "1.00x");
  std::printf("%-36s %9.2f %10.2f %7.2fx\n", "FrameReader::next_line (validate)", median(ours) * 1e3,
              bytes / median(ours) / 1e9, median(ours_ratio));
  std::printf("%-36s %9.2f %10.2f %7.2fx\n", "FrameReader::read_frame (tree)", median(tree) * 1e3,
              bytes / median(tree) / 1e9, median(tree_ratio));
  return 0;
}
