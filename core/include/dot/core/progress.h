#pragma once
// How far a long step of plan or apply is: what the command's progress line
// on a terminal shows (files done of the total, and their bytes so far).

#include <cstddef>
#include <cstdint>
#include <functional>

namespace dot::core {

struct Progress {
  std::size_t done = 0;
  std::size_t total = 0;
  std::uint64_t bytes = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

}  // namespace dot::core
