#pragma once
// Deterministic synthetic JSON documents for benchmarks: records mixing
// objects, arrays, short and escaped strings, integers, decimals and literals,
// roughly what plans, protocol messages and worker lines carry.
#include <cstdint>
#include <string>

namespace dot::bench {

inline std::string make_document(std::size_t target_bytes) {
  std::string out = "{\"records\":[";
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  bool first = true;
  std::size_t i = 0;
  while (out.size() + 400 < target_bytes) {
    if (!first) out += ',';
    first = false;
    std::uint64_t r = next();
    out += "{\"id\":" + std::to_string(i++);
    out += ",\"name\":\"item-" + std::to_string(r % 100000) + "\"";
    out += ",\"path\":\"notes/2026/11/" + std::to_string(r % 977) + ".md\"";
    out += ",\"size\":" + std::to_string(r % 65536);
    out += ",\"ratio\":" + std::to_string(static_cast<double>(r % 10000) / 7.0);
    out += ",\"tags\":[\"a\",\"b\",\"caf\\u00e9\",\"line\\nbreak\"]";
    out += ",\"ok\":" + std::string(r & 1 ? "true" : "false");
    out += ",\"meta\":{\"sha256\":\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\",\"mode\":420,\"owner\":null}";
    out += ",\"text\":\"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\"}";
  }
  out += "]}";
  return out;
}

}  // namespace dot::bench
