#!/usr/bin/env python3
"""bench/core/plan_scale.py: `dot-core plan` of dot-mirror on large trees (issue 33), side by side in one run
with `rsync -an --itemize-changes SRC/ ROOT/` (the comparison a user would make), interleaved runs, medians:
  first plan      the plan of the whole tree into an empty root (every file staged, read back, stored)
  after apply     plan again once that plan is applied, two seconds later (nothing staged: every declared
                  digest matches; core reads every target once, since apply does not record what it wrote
                  in the stat cache: a digest is trusted only when read two seconds after the file changed)
  no change       plan again (the everyday plan: every source and target known from the caches)
  one edit        plan after one source file changed (one file staged)
the peak RSS of each plan (/usr/bin/time -v: the largest of dot-core and its plugin) and of rsync, and
what one more no-change plan adds to the store on disk (store.db and its WAL), averaged over ten
(SQLite grows its file a few pages at a time, so one plan may add 8 KiB and the next nothing).
Trees: FILES files of SIZE bytes in FOLDERS folders; by default 10,000 in 100 and 100,000 in 1,000.
Usage: bench/core/plan_scale.py BIN_DIR [RUNS] [FILES:FOLDERS ...] [--process]   (SIZE is 1024)"""
import json, os, re, shutil, statistics, subprocess, sys, tempfile, time

# The racy-timestamp granule of the stat caches (dot/base/racy_time.h), and a little more.
SETTLE_SECONDS = 2.2
# No-change plans whose store growth is averaged.
GROWTH_PLANS = 10

args = [a for a in sys.argv[1:] if a != "--process"]
# --process: dot-mirror registered under process assurance (contained: landlock, seccomp, rlimits)
# instead of audit.
assurance = "process" if "--process" in sys.argv[1:] else "audit"
bin_dir = os.path.abspath(args[0])
runs = int(args[1]) if len(args) > 1 else 3
trees = [tuple(int(x) for x in a.split(":")) for a in args[2:]] or [(10000, 100), (100000, 1000)]
size = 1024
core = os.path.join(bin_dir, "dot-core")
env = {"LANG": "C", "PATH": "/usr/bin:/bin"}


def run(argv):
    r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.exit(f"{argv}: exit {r.returncode}: {r.stderr.decode()[-2000:]}")
    return r.stdout.decode(), r.stderr.decode()


def measured(argv):
    """Wall seconds and peak RSS (KiB) of argv under /usr/bin/time -v, and its stdout."""
    t0 = time.perf_counter()
    out, err = run(["/usr/bin/time", "-v"] + argv)
    dt = time.perf_counter() - t0
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
    return dt, rss, out


def write_tree(src, files, folders):
    for f in range(folders):
        os.makedirs(os.path.join(src, f"d{f:04d}"), exist_ok=True)
    for i in range(files):
        with open(os.path.join(src, f"d{i % folders:04d}", f"f{i:06d}"), "wb") as out:
            out.write((f"{i:08d}".encode() * (size // 8 + 1))[:size])


def new_root(base, name, src):
    root = os.path.join(base, name)
    run([core, "init", "--root", root])
    run([core, "register", "--root", root, "--plugin", os.path.join(bin_dir, "dot-mirror"), "--id",
         "org.dot.mirror", "--profile", "org.dot.dpp/v1", "--assurance", assurance, "--input", src])
    return root


def plan(root):
    dt, rss, out = measured([core, "plan", "--root", root] + (["--allow-audit-plugin"] if assurance == "audit" else []) +
                            ["--json"])
    return dt, rss, json.loads(out)


def rsync(src, root):
    return measured(["rsync", "-an", "--itemize-changes", "--exclude", "/.dot", src + "/", root + "/"])


def edit(src, n):
    path = os.path.join(src, "d0000", "f000000")
    with open(path, "r+b") as f:
        f.write(bytes([n & 0xff]) * 8)


def store_bytes(root):
    """The store's bytes on disk: the database and its write-ahead log."""
    return sum(os.path.getsize(os.path.join(root, ".dot", f)) for f in ("store.db", "store.db-wal")
               if os.path.exists(os.path.join(root, ".dot", f)))


def median(xs):
    return statistics.median(xs)


def bench_tree(files, folders):
    base = tempfile.mkdtemp(prefix="dot-plan-scale-")
    try:
        src = os.path.join(base, "src")
        write_tree(src, files, folders)
        t = {k: [] for k in ("first", "first_rss", "after", "after_rss", "nochange", "nochange_rss", "edit",
                             "edit_rss", "rsync_nochange", "rsync_edit", "rsync_rss", "growth")}
        root = None
        for r in range(runs):
            # Interleaved: a fresh root's first plan, then the no-change and one-edit plans and rsync on it.
            if root:
                shutil.rmtree(root)
            root = new_root(base, "root", src)
            dt, rss, first = plan(root)
            t["first"].append(dt)
            t["first_rss"].append(rss)
            run([core, "apply", "--root", root, first["plan_id"]])
            time.sleep(SETTLE_SECONDS)
            dt, rss, after = plan(root)
            assert after.get("state") == "NO_CHANGES", after.get("state")
            t["after"].append(dt)
            t["after_rss"].append(rss)
            dt, rss, same = plan(root)
            assert same.get("state") == "NO_CHANGES", same.get("state")
            t["nochange"].append(dt)
            t["nochange_rss"].append(rss)
            dt, rss, _ = rsync(src, root)
            t["rsync_nochange"].append(dt)
            t["rsync_rss"].append(rss)
            before = store_bytes(root)
            for _ in range(GROWTH_PLANS):
                assert plan(root)[2].get("state") == "NO_CHANGES"
            t["growth"].append((store_bytes(root) - before) / GROWTH_PLANS)
            edit(src, r + 1)
            dt, rss, one = plan(root)
            assert len(one["operations"]) == 1, len(one["operations"])
            t["edit"].append(dt)
            t["edit_rss"].append(rss)
            dt, _, _ = rsync(src, root)
            t["rsync_edit"].append(dt)
        return {k: median(v) for k, v in t.items()}
    finally:
        shutil.rmtree(base, ignore_errors=True)


print(f"plan at scale ({assurance}): {runs} interleaved runs, medians, load {os.getloadavg()[0]:.2f} at start")
print(f"{'tree':>22} {'case':>10} {'dot-core s':>11} {'rsync -an s':>12} {'ratio':>7} {'peak RSS MiB':>13}")
for files, folders in trees:
    m = bench_tree(files, folders)
    name = f"{files} x 1 KiB / {folders}"
    for case, key, rkey in (("no change", "nochange", "rsync_nochange"), ("one edit", "edit", "rsync_edit")):
        print(f"{name:>22} {case:>10} {m[key]:>11.3f} {m[rkey]:>12.3f} {m[key] / m[rkey]:>6.2f}x "
              f"{m[key + '_rss'] / 1024:>13.1f}")
    print(f"{name:>22} {'after apply':>11} {m['after']:>10.3f} {m['rsync_nochange']:>12.3f} "
          f"{m['after'] / m['rsync_nochange']:>6.2f}x {m['after_rss'] / 1024:>13.1f}")
    print(f"{name:>22} {'first':>10} {m['first']:>11.3f} {'':>12} {'':>7} {m['first_rss'] / 1024:>13.1f}")
    print(f"{name:>22} {'rsync RSS':>10} {'':>11} {'':>12} {'':>7} {m['rsync_rss'] / 1024:>13.1f}")
    print(f"{name:>22} store growth per no-change plan: {m['growth']:.0f} bytes (median of {runs} runs of "
          f"{GROWTH_PLANS} plans; goal: at most 4096)")
print(f"load {os.getloadavg()[0]:.2f} at end")
