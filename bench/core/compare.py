#!/usr/bin/env python3
"""bench/core/compare.py: side-by-side timing of `dot-core plan` / `apply` against their floors
(docs/spec/cli.md), interleaved runs, medians; and the growth from an empty store
to one holding N transactions. Usage: bench/core/compare.py build/release/bin build/release/bin [RUNS] [N]"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

from growth import HELLO_TABLES, grow

bin_dir, floor_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 15
big = int(sys.argv[4]) if len(sys.argv) > 4 else 100000
core = os.path.join(bin_dir, "dot-core")
env = {"LANG": "C", "PATH": "/usr/bin:/bin"}

def timed(args):
    t0 = time.perf_counter()
    r = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{args}: exit {r.returncode}: {r.stderr.decode()}")
    return dt, r.stdout.decode()

def new_root(base, name):
    root = os.path.join(base, name)
    subprocess.run([core, "init", "--root", root], env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([core, "register", "--root", root, "--plugin", os.path.join(bin_dir, "dot-hello"),
                    "--assurance", "audit"], env=env, check=True, stdout=subprocess.DEVNULL)
    return root

# A plan whose targets already hold what it would write seals nothing
# (NO_CHANGES), so every run starts from a root whose hello targets are
# absent: the same plan and apply each time.
def clear_targets(root):
    for name in ("hello.txt", "welcome.txt"):
        try:
            os.unlink(os.path.join(root, name))
        except FileNotFoundError:
            pass

def plan(root):
    dt, out = timed([core, "plan", "--root", root, "--allow-audit-plugin", "--json"])
    return dt, json.loads(out)["plan_id"]

base = tempfile.mkdtemp(prefix="dot-bench-")
try:
    floor_db = os.path.join(base, "floor.db")
    floor_dir_apply = os.path.join(base, "floor-root"); os.mkdir(floor_dir_apply, 0o700)
    root = new_root(base, "root")
    t_plan, t_floor, t_apply, t_afloor = [], [], [], []
    for i in range(runs):
        t_floor.append(timed([os.path.join(floor_dir, "dpp-floor"), os.path.join(floor_dir, "dpp-floor-peer"), floor_db])[0])
        dt, pid = plan(root); t_plan.append(dt)
        t_afloor.append(timed([os.path.join(floor_dir, "apply_floor"), floor_dir_apply, floor_db + "-apply"])[0])
        t_apply.append(timed([core, "apply", "--root", root, pid])[0])
        clear_targets(root)
    m = lambda xs: statistics.median(xs) * 1000
    print(f"plan   median {m(t_plan):7.2f} ms   floor {m(t_floor):7.2f} ms   ratio {m(t_plan)/m(t_floor):.2f}  ({runs} interleaved runs)")
    print(f"apply  median {m(t_apply):7.2f} ms   floor {m(t_afloor):7.2f} ms   ratio {m(t_apply)/m(t_afloor):.2f}")

    # Growth: an empty store against one with `big` stored transactions, interleaved.
    empty = new_root(base, "empty")
    full = new_root(base, "full")
    _, pid = plan(full); timed([core, "apply", "--root", full, pid]); clear_targets(full)
    t0 = time.perf_counter(); grow(full, big, HELLO_TABLES); print(f"grew the store to {big + 1} transactions in {time.perf_counter() - t0:.1f} s")
    g = {"empty": ([], []), "full": ([], [])}
    for i in range(runs):
        for name, r in (("empty", empty), ("full", full)):
            dt, pid = plan(r); g[name][0].append(dt)
            g[name][1].append(timed([core, "apply", "--root", r, pid])[0])
            clear_targets(r)
    for k, label in ((0, "plan"), (1, "apply")):
        e, f = m(g["empty"][k]), m(g["full"][k])
        print(f"{label:5}  empty store {e:7.2f} ms   {big} transactions {f:7.2f} ms   growth {100 * (f / e - 1):+.1f}%")
finally:
    shutil.rmtree(base, ignore_errors=True)
