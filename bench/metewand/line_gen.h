#pragma once
// The worker lines of the Metewand benchmarks: realistic messages of exactly
// 1 MiB with their LF (objects with an array of records mixing escaped and
// raw UTF-8 strings, integers, decimals, booleans, nulls and nesting).
#include <string>

#include "dot/metewand/frame_reader.h"

namespace dot::bench {

// One realistic worker message just under the limit: an object with an
// array of records mixing strings, integers, decimals, booleans and nesting.
inline std::string make_line(int seed) {
  std::string s = "{\"id\":\"" + std::to_string(seed) + "\",\"ok\":true,\"result\":{\"rows\":[";
  for (int i = 0;; ++i) {
    std::string rec = (i ? "," : "") + std::string("{\"index\":") + std::to_string(i) +
                      ",\"name\":\"sample-" + std::to_string(i * 7919 % 100003) +
                      " \\u00e9t\\u00e9 caf\xC3\xA9\",\"score\":" + std::to_string(i % 997) + "." +
                      std::to_string(i % 89) + ",\"tags\":[\"alpha\",\"beta\",\"gamma\"],\"valid\":" +
                      (i % 3 ? "true" : "false") + ",\"nested\":{\"a\":[1,2,3],\"b\":null}}";
    if (s.size() + rec.size() + 16 >= dot::metewand::kMaxLineBytes - 1) break;
    s += rec;
  }
  s += "]}}";
  s.resize(dot::metewand::kMaxLineBytes - 1, ' ');  // pad with JSON whitespace to exactly 1 MiB with its LF
  return s;
}

}  // namespace dot::bench
