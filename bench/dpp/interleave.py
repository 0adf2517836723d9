#!/usr/bin/env python3
"""bench/dpp/interleave.py RUNS LABEL=COMMAND... : whole processes side by side.

Runs every command once per round, in order, for RUNS rounds (after 3 warm-up
rounds), stdout and stderr to /dev/null, and prints per command the median
wall time, the median CPU time (user + system of the process and everything it
reaped, from wait4: what machine load inflates least) and both ratios to the
first command. stdin is /dev/null; a command must exit 0. Used for the start-up figures of docs/PERFORMANCE.md, e.g.

  bench/dpp/interleave.py 40 floor='dpp-floor dpp-floor-peer --no-store' \\
      before='/tmp/before/dpp-session-once /tmp/before/dot-hello' \\
      after='build/release/bin/dpp-session-once build/release/bin/dot-hello'
"""
import os
import shlex
import statistics
import sys
import time


def run(argv):
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                                       (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                       (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    _, status, ru = os.wait4(pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{shlex.join(argv)}: exit status {os.waitstatus_to_exitcode(status)}")
    return wall, (ru.ru_utime + ru.ru_stime) * 1000


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs = int(sys.argv[1])
    cases = []
    for spec in sys.argv[2:]:
        label, _, cmd = spec.partition("=")
        cases.append((label, shlex.split(cmd), [], []))
    for r in range(runs + 3):
        for _, argv, wall, cpu in cases:
            w, c = run(argv)
            if r >= 3:
                wall.append(w)
                cpu.append(c)
    load = os.getloadavg()[0]
    print(f"{runs} interleaved rounds, load average {load:.2f}, {os.cpu_count()} cpus")
    print(f"{'':24} {'wall median':>12} {'ratio':>6} {'cpu median':>11} {'ratio':>6}")
    w0 = statistics.median(cases[0][2])
    c0 = statistics.median(cases[0][3])
    for label, _, wall, cpu in cases:
        w, c = statistics.median(wall), statistics.median(cpu)
        print(f"{label:24} {w:9.2f} ms {w / w0:6.2f} {c:8.2f} ms {c / c0:6.2f}")


if __name__ == "__main__":
    main()
