#!/usr/bin/env python3
"""bench/core/ab.py: two builds of dot-core side by side, interleaved, on the same work, so a
refactor can show it costs nothing (docs/PERFORMANCE.md, "Two builds side by side").

  hello:   `plan` then `apply` with dot-hello (two files), each build on its own root;
  general: `plan` then `apply` with dot-mirror of FILES files of 1 KiB in 10 folders, each
           run on fresh roots (a root whose targets hold the tree would plan NO_CHANGES).

Each run times build A then build B (then B then A on the next run, so neither always goes
first), whole processes: the CPU time they used (user + system, the plugin's included: what a
refactor changes, and far steadier than wall time on a loaded machine) and the wall time; the
medians and the median of the per-run ratios B / A.

Usage: bench/core/ab.py A_BIN_DIR B_BIN_DIR [RUNS] [FILES]"""
import json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

a_dir, b_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 9
files = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
env = {"LANG": "C", "PATH": "/usr/bin:/bin"}


def cpu_of_children():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def run(argv):
    """(wall seconds, CPU seconds, stdout) of one whole process and everything it waited for."""
    c0, t0 = cpu_of_children(), time.perf_counter()
    r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt, cpu = time.perf_counter() - t0, cpu_of_children() - c0
    if r.returncode != 0:
        sys.exit(f"{argv}: exit {r.returncode}: {r.stderr.decode()}")
    return (dt, cpu), r.stdout.decode()


def new_root(bin_dir, root, plugin, extra=()):
    core = os.path.join(bin_dir, "dot-core")
    run([core, "init", "--root", root])
    run([core, "register", "--root", root, "--plugin", os.path.join(bin_dir, plugin), "--assurance", "audit",
         *extra])


def plan_apply(bin_dir, root):
    core = os.path.join(bin_dir, "dot-core")
    t_plan, out = run([core, "plan", "--root", root, "--allow-audit-plugin", "--json"])
    t_apply, _ = run([core, "apply", "--root", root, json.loads(out)["plan_id"]])
    return t_plan, t_apply


def make_source(path):
    for d in range(10):
        folder = os.path.join(path, f"d{d:02}")
        os.makedirs(folder)
        for f in range(files // 10):
            with open(os.path.join(folder, f"f{f:04}.txt"), "wb") as out:
                out.write(bytes((d * 31 + f + i) % 251 for i in range(1024)))


def report(name, times):
    print(f"{name}:")
    for step in ("plan", "apply"):
        for k, what in ((1, "cpu "), (0, "wall")):
            a = [t[k] for t in times["A"][step]]
            b = [t[k] for t in times["B"][step]]
            ratios = [y / x for x, y in zip(a, b)]
            print(f"  {step:5} {what}  A {statistics.median(a) * 1000:9.2f} ms   B {statistics.median(b) * 1000:9.2f} ms"
                  f"   B/A median {statistics.median(ratios):.3f}  (per run {min(ratios):.2f}-{max(ratios):.2f})")


base = tempfile.mkdtemp(prefix="dot-ab-")
try:
    builds = {"A": a_dir, "B": b_dir}
    hello = {k: {"plan": [], "apply": []} for k in builds}
    for k, d in builds.items():
        new_root(d, os.path.join(base, f"hello-{k}"), "dot-hello")
    for i in range(runs):
        for k in (("A", "B") if i % 2 == 0 else ("B", "A")):
            root = os.path.join(base, f"hello-{k}")
            p, a = plan_apply(builds[k], root)
            hello[k]["plan"].append(p)
            hello[k]["apply"].append(a)
            for name in ("hello.txt", "welcome.txt"):
                os.unlink(os.path.join(root, name))
    report("hello (dot-hello, 2 files)", hello)

    source = os.path.join(base, "source")
    make_source(source)
    general = {k: {"plan": [], "apply": []} for k in builds}
    for i in range(runs):
        for k in (("A", "B") if i % 2 == 0 else ("B", "A")):
            root = os.path.join(base, f"general-{k}-{i}")
            new_root(builds[k], root, "dot-mirror", ("--id", "org.dot.mirror", "--profile", "org.dot.dpp/v1", "--input", source))
            p, a = plan_apply(builds[k], root)
            general[k]["plan"].append(p)
            general[k]["apply"].append(a)
            shutil.rmtree(root)
    report(f"general (dot-mirror, {files} files of 1 KiB in 10 folders)", general)
finally:
    shutil.rmtree(base, ignore_errors=True)
