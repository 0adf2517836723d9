#!/usr/bin/env python3
"""bench/core/compare_v2.py: `dot-core apply` of a version-2 plan of FILES files of SIZE bytes in FOLDERS
folders (planned by dot-mirror from a source tree), side by side with its floor (apply_v2_floor: the same
durable steps in C) and with `rsync -a --fsync` of the same tree into an empty folder; interleaved runs,
medians (docs/PERFORMANCE.md, "Version-2 apply").
With --growth N instead: plan and apply of a version-2 plan (dot-mirror rewriting 16 files of 256 bytes
in 4 folders) on a root whose journal holds N applied version-2 transactions (growth.py clones one) against
a root that holds one, interleaved runs, medians.
Usage: bench/core/compare_v2.py BIN_DIR [RUNS] [FILES] [FOLDERS] [SIZE]
       bench/core/compare_v2.py BIN_DIR [RUNS] --growth N"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

from growth import V2_TABLES, grow

args = sys.argv[1:]
growth = None
if "--growth" in args:
    at = args.index("--growth")
    growth = int(args[at + 1])
    del args[at:at + 2]
bin_dir = os.path.abspath(args[0])
runs = int(args[1]) if len(args) > 1 else 5
files = int(args[2]) if len(args) > 2 else 10000
folders = int(args[3]) if len(args) > 3 else 100
size = int(args[4]) if len(args) > 4 else 1024
core = os.path.join(bin_dir, "dot-core")
floor = os.path.join(bin_dir, "apply_v2_floor")
env = {"LANG": "C", "PATH": "/usr/bin:/bin"}

def run(argv):
    r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.exit(f"{argv}: exit {r.returncode}: {r.stderr.decode()}")
    return r.stdout.decode()

def timed(argv):
    t0 = time.perf_counter()
    out = run(argv)
    return time.perf_counter() - t0, out

def write_tree(src, files, folders, size, salt=0):
    for f in range(folders):
        os.makedirs(os.path.join(src, f"d{f:03d}"), exist_ok=True)
    for i in range(files):
        with open(os.path.join(src, f"d{i % folders:03d}", f"f{i:05d}"), "wb") as out:
            out.write(bytes((i * 31 + k * 7 + salt) & 0xff for k in range(size)))

def new_root(base, name, src):
    root = os.path.join(base, name)
    run([core, "init", "--root", root])
    run([core, "register", "--root", root, "--plugin", os.path.join(bin_dir, "dot-mirror"), "--id",
         "org.dot.mirror", "--profile", "org.dot.dpp/v1", "--assurance", "audit", "--input", src])
    return root

def plan(root):
    dt, out = timed([core, "plan", "--root", root, "--allow-audit-plugin", "--json"])
    return dt, json.loads(out)["plan_id"]

def load():
    return f"{os.getloadavg()[0]:.2f}"

def against_floor(base):
    rsync = shutil.which("rsync")
    if not rsync:
        sys.exit("rsync is not installed (scripts/bootstrap installs it)")
    src = os.path.join(base, "src")
    write_tree(src, files, folders, size)
    floor_db = os.path.join(base, "floor.db")
    run([floor, "setup", floor_db, str(files), str(size)])
    t_apply, t_floor, t_rsync = [], [], []
    for r in range(runs):
        root = new_root(base, f"root{r}", src)
        _, plan_id = plan(root)
        fdir = os.path.join(base, f"floor{r}"); os.mkdir(fdir, 0o700)
        rdir = os.path.join(base, f"rsync{r}"); os.mkdir(rdir, 0o700)
        t_floor.append(timed([floor, fdir, floor_db, str(files), str(folders)])[0])
        t_apply.append(timed([core, "apply", "--root", root, plan_id])[0])
        t_rsync.append(timed([rsync, "-a", "--fsync", src + "/", rdir + "/"])[0])
        for d in (root, fdir, rdir):
            shutil.rmtree(d)
        print(f"run {r + 1}: apply {t_apply[-1] * 1e3:.1f} ms  floor {t_floor[-1] * 1e3:.1f} ms  "
              f"rsync {t_rsync[-1] * 1e3:.1f} ms  load {load()}", flush=True)
    m = {k: statistics.median(v) for k, v in (("apply", t_apply), ("floor", t_floor), ("rsync", t_rsync))}
    print(f"{files} files of {size} B in {folders} folders, {runs} runs, medians:")
    print(f"apply {m['apply'] * 1e3:.1f} ms  floor {m['floor'] * 1e3:.1f} ms  rsync -a --fsync {m['rsync'] * 1e3:.1f} ms")
    print(f"apply / floor {m['apply'] / m['floor']:.2f} (target <= 1.5)  rsync / apply {m['rsync'] / m['apply']:.2f} (target >= 2)")

def against_empty(base, n):
    g_files, g_folders, g_size = 16, 4, 256
    src = os.path.join(base, "src")
    write_tree(src, g_files, g_folders, g_size)
    roots = {"empty": new_root(base, "empty", src), "full": new_root(base, "full", src)}
    for root in roots.values():
        _, plan_id = plan(root)
        run([core, "apply", "--root", root, plan_id])
    t0 = time.perf_counter()
    grow(roots["full"], n, V2_TABLES)
    print(f"grew the store to {n + 1} version-2 transactions in {time.perf_counter() - t0:.1f} s", flush=True)
    t = {name: ([], []) for name in roots}
    for r in range(runs):
        write_tree(src, g_files, g_folders, g_size, salt=r + 1)  # every file changes: each plan writes 16
        for name, root in roots.items():
            dt, plan_id = plan(root); t[name][0].append(dt)
            t[name][1].append(timed([core, "apply", "--root", root, plan_id])[0])
        print(f"run {r + 1}: plan {t['empty'][0][-1] * 1e3:.1f} / {t['full'][0][-1] * 1e3:.1f} ms  "
              f"apply {t['empty'][1][-1] * 1e3:.1f} / {t['full'][1][-1] * 1e3:.1f} ms (empty / full)  "
              f"load {load()}", flush=True)
    for k, label in ((0, "plan"), (1, "apply")):
        e, f = statistics.median(t["empty"][k]) * 1e3, statistics.median(t["full"][k]) * 1e3
        print(f"{label:5}  one transaction {e:7.2f} ms   {n + 1} transactions {f:7.2f} ms   "
              f"ratio {f / e:.3f} (target <= 1.2)")

base = tempfile.mkdtemp(prefix="dot-bench-v2-")
try:
    if growth is None:
        against_floor(base)
    else:
        against_empty(base, growth)
finally:
    shutil.rmtree(base, ignore_errors=True)
