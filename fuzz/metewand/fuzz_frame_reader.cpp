// FrameReader under arbitrary bytes and arbitrary fragmentation. The first
// byte picks a chunking; the rest is the stream. Invariants checked (abort on
// violation):
//   - the outcome (lines, offsets, final error and its payload) is the same
//     for the chosen chunking and for all-at-once reads, on both the
//     validate-only and the tree-building path;
//   - accepted lines hold no LF, fit the limit, and parse again on their own;
//   - an error repeats on the next call (no resynchronisation).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "dot/metewand/frame_reader.h"

namespace {

using namespace dot::metewand;

struct Outcome {
  std::vector<std::string> lines;
  std::vector<std::uint64_t> offsets;
  bool failed = false;
  FrameError error;
};

Outcome run(std::string_view bytes, std::vector<std::size_t> chunks, bool tree) {
  dot::MemorySource source(bytes, std::move(chunks));
  FrameReader reader(source, 4096);
  Outcome o;
  for (;;) {
    if (tree) {
      auto r = reader.read_frame();
      if (!r.ok()) { o.failed = true; o.error = r.error(); break; }
      if (!r->has_value()) break;
      o.lines.emplace_back((*r)->document.source());
      o.offsets.push_back((*r)->offset);
    } else {
      auto r = reader.next_line();
      if (!r.ok()) { o.failed = true; o.error = r.error(); break; }
      if (!r->has_value()) break;
      o.lines.emplace_back((*r)->bytes);
      o.offsets.push_back((*r)->offset);
    }
  }
  if (o.failed) {
    auto again = reader.next_line();
    if (again.ok() || again.error().kind != o.error.kind) std::abort();
  }
  return o;
}

bool same(const Outcome& a, const Outcome& b) {
  if (a.lines != b.lines || a.offsets != b.offsets || a.failed != b.failed) return false;
  if (!a.failed) return true;
  return a.error.kind == b.error.kind && a.error.offset == b.error.offset && a.error.limit == b.error.limit &&
         a.error.received == b.error.received && a.error.valid_up_to == b.error.valid_up_to &&
         a.error.key == b.error.key;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::vector<std::size_t> chunks;
  switch (data[0] % 4) {
    case 0: break;                       // all at once
    case 1: chunks = {1}; break;         // one byte per read
    case 2: chunks = {1 + data[0] / 4u, 3, 1, 17}; break;
    default: chunks = {2, 5, 64, 7, 1}; break;
  }
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  Outcome whole = run(bytes, {}, false);
  Outcome chunked = run(bytes, chunks, false);
  Outcome tree = run(bytes, chunks, true);
  if (!same(whole, chunked) || !same(whole, tree)) std::abort();
  for (std::size_t i = 0; i < whole.lines.size(); ++i) {
    const std::string& line = whole.lines[i];
    if (line.find('\n') != std::string::npos || line.size() + 1 > kMaxLineBytes) std::abort();
    if (!validate_line(line).ok() || !parse_line(line).ok()) std::abort();
    if (bytes.substr(whole.offsets[i], line.size()) != line) std::abort();
  }
  if (whole.failed && whole.error.kind == FrameError::Kind::InvalidUtf8) {
    // valid_up_to is a prefix of the line that is itself valid.
    std::string_view rest = bytes.substr(whole.error.offset);
    std::string_view line = rest.substr(0, rest.find('\n'));
    if (whole.error.valid_up_to >= line.size() ||
        utf8_valid_up_to(line.substr(0, whole.error.valid_up_to)) != whole.error.valid_up_to)
      std::abort();
  }
  return 0;
}
