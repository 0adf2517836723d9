#!/usr/bin/env python3
"""bench/core/general_compare.py: the general profile's plan goals (docs/spec/dpp-general.md,
"Performance goals"), measured with dot-mirror.

  plan:  10,000 files of 1 KiB in 100 folders, `dot-core plan` (dot-mirror, audit) against
         plan_floor (spawn a copying child, read and hash the stage, one sealed insert),
         interleaved runs, each on a fresh root; medians and the median of per-run ratios.
  rss:   (with --big) a 1 GiB plan, 64 files of 16 MiB: the peak resident set of `plan` and of
         `apply` of that plan (the largest of dot-core and the plugin it ran).

  --tree FILES:FOLDERS plans FILES files of 1 KiB in FOLDERS folders instead (100000:1000, the
         issue's larger tree).
  --process registers dot-mirror under process assurance (contained: Landlock, seccomp, rlimits)
         instead of audit; the floor is the same uncontained copy.

Usage: bench/core/general_compare.py BIN_DIR FLOOR_DIR [RUNS] [--big] [--tree FILES:FOLDERS] [--process]"""
import os, random, resource, shutil, statistics, subprocess, sys, tempfile, time

argv = sys.argv[1:]
tree = (10000, 100)
if "--tree" in argv:
    at = argv.index("--tree")
    tree = tuple(int(n) for n in argv[at + 1].split(":"))
    del argv[at:at + 2]
args = [a for a in argv if not a.startswith("--")]
big = "--big" in argv
assurance = "process" if "--process" in argv else "audit"
bin_dir, floor_dir = os.path.abspath(args[0]), os.path.abspath(args[1])
runs = int(args[2]) if len(args) > 2 else 11
core = os.path.join(bin_dir, "dot-core")
mirror = os.path.join(bin_dir, "dot-mirror")
floor = os.path.join(floor_dir, "plan_floor")
env = {"LANG": "C", "PATH": "/usr/bin:/bin"}


def run(argv, check=True):
    r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and r.returncode != 0:
        sys.exit(f"{argv}: exit {r.returncode}: {r.stderr.decode()}")
    return r


def timed(argv):
    t0 = time.perf_counter()
    r = run(argv)
    return time.perf_counter() - t0, r.stdout.decode()


def peak_rss_kib(argv):
    """Runs argv in a fresh Python process and returns the peak RSS of its largest descendant."""
    probe = ("import resource, subprocess, sys\n"
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
             "if r.returncode: sys.exit(r.stderr.decode())\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    return int(run([sys.executable, "-c", probe] + argv).stdout)


def make_tree(src, folders, files, size, rng):
    for d in range(folders):
        os.makedirs(os.path.join(src, f"d{d:04}"))
        for f in range(files):
            with open(os.path.join(src, f"d{d:04}", f"f{f:04}"), "wb") as out:
                out.write(rng.randbytes(size))


def new_root(base, name, src):
    root = os.path.join(base, name)
    run([core, "init", "--root", root])
    run([core, "register", "--root", root, "--plugin", mirror, "--id", "org.dot.mirror", "--profile",
         "org.dot.dpp/v1", "--assurance", assurance, "--input", src])
    return root


def plan_argv(root):
    return [core, "plan", "--root", root, "--json"] + (["--allow-audit-plugin"] if assurance == "audit" else [])


def main():
    base = tempfile.mkdtemp(prefix="dot-general-bench-")
    try:
        rng = random.Random(20261202)
        src = os.path.join(base, "src")
        files, folders = tree
        make_tree(src, folders, files // folders, 1024, rng)
        ours, floors, ratios = [], [], []
        for i in range(runs):
            root = new_root(base, f"root{i}", src)
            stage, db = os.path.join(base, f"stage{i}"), os.path.join(base, f"floor{i}.db")
            # Alternate which goes first, so that neither always meets a warm cache.
            if i % 2:
                f, _ = timed([floor, src, stage, db])
                o, out = timed(plan_argv(root))
            else:
                o, out = timed(plan_argv(root))
                f, _ = timed([floor, src, stage, db])
            if '"state":"SEALED"' not in out:
                sys.exit("plan did not seal: " + out[:300])
            ours.append(o)
            floors.append(f)
            ratios.append(o / f)
            shutil.rmtree(root)
            shutil.rmtree(stage)
            os.remove(db)
        print(f"plan, {files:,} files of 1 KiB in {folders:,} folders, {assurance} assurance, {runs} interleaved runs:")
        print(f"  plan_floor       median {statistics.median(floors) * 1000:8.1f} ms")
        print(f"  dot-core plan    median {statistics.median(ours) * 1000:8.1f} ms")
        print(f"  ratio            {statistics.median(ours) / statistics.median(floors):.2f}x of medians, "
              f"{statistics.median(ratios):.2f}x median of per-run ratios (goal: at most 2x)")

        if big:
            shutil.rmtree(src)
            make_tree(src, 1, 64, 16 << 20, rng)
            root = new_root(base, "big", src)
            rss = peak_rss_kib(plan_argv(root))
            print(f"1 GiB plan (64 files of 16 MiB): peak RSS of plan {rss / 1024:.1f} MiB (goal: at most 64 MiB)")
            listed = run([core, "inspect", "list", "--root", root, "--state", "SEALED", "--json"]).stdout.decode()
            plan_id = listed.split('"plan_id":"')[1][:64]
            applied = subprocess.run([core, "apply", "--root", root, plan_id], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
            if applied.returncode != 0:
                print("  apply: " + applied.stderr.decode().strip().splitlines()[0])
            else:
                # Applied once; measure a second apply of the same tree on a fresh root.
                root2 = new_root(base, "big2", src)
                run(plan_argv(root2))
                listed = run([core, "inspect", "list", "--root", root2, "--state", "SEALED", "--json"]).stdout.decode()
                rss = peak_rss_kib([core, "apply", "--root", root2, listed.split('"plan_id":"')[1][:64]])
                print(f"  peak RSS of apply {rss / 1024:.1f} MiB (goal: at most 64 MiB)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


main()
