#pragma once
// RAII for the orphan sweep a host owes (process.h has the parts):
// OrphanSweep::begin() makes this process a child subreaper, so a descendant
// that left its child's process group with setsid is re-parented here instead
// of to init, where nobody would kill it; the sweep kills and reaps every
// orphan when it ends, on every path. The subreaper flag stays set
// afterwards: clearing it could hand another session's orphans to init.

#include <cstddef>
#include <utility>

#include "dot/base/process.h"
#include "dot/base/result.h"

namespace dot {

class OrphanSweep {
 public:
  static Result<OrphanSweep> begin();
  OrphanSweep(OrphanSweep&& o) noexcept : armed_(std::exchange(o.armed_, false)) {}
  OrphanSweep& operator=(OrphanSweep&&) = delete;
  OrphanSweep(const OrphanSweep&) = delete;
  OrphanSweep& operator=(const OrphanSweep&) = delete;
  ~OrphanSweep() {
    if (armed_) kill_orphans();
  }
  // Sweeps now (and again at the end); returns what kill_orphans() returns:
  // how many orphans were still running.
  std::size_t sweep() { return kill_orphans(); }

 private:
  OrphanSweep() = default;
  bool armed_ = true;
};

}  // namespace dot
