#!/usr/bin/env python3
"""Runs every command line of the ```console blocks of a Markdown page and
checks that it prints what the page shows.

Usage: console_blocks.py BIN_DIR PAGE.md

The blocks of one page run in order, in one scratch folder, as one story (a
later block may use the root an earlier one made). In a block, a line
`$ COMMAND` is run with bash (stdout and stderr together, as a terminal shows
them); the lines up to the next `$ ` are what it must print. What may differ
from run to run is matched, not compared:
- a run of 8 or more lowercase hex digits (ids, digests, prefixes) matches any
  hex run of the same length, and the page's value then stands for the real
  one in every later command and line (a page's id and its prefixes map to the
  real id and its prefixes; one page value never maps to two real ones);
- a UTC time `2026-11-30T19:10:29.608Z` matches any such time.
Paths: `/tmp/walk` (the README's folder) and `~` are the scratch folder,
`$PWD/build/release/bin/` and `dot-core` are BIN_DIR's (it leads PATH). A command
whose expected output has no `DOT_E_` line must exit 0.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HEX = re.compile(r"[0-9a-f]{8,}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def blocks(page):
    """[(line_number, [(command, [expected lines])])] for every console block."""
    out, cur, in_block, start = [], None, False, 0
    with open(page, encoding="utf-8") as f:
        for n, line in enumerate(f.read().split("\n"), 1):
            if not in_block and line.strip() == "```console":
                in_block, cur, start = True, [], n
            elif in_block and line.strip() == "```":
                out.append((start, cur))
                in_block = False
            elif in_block:
                if line.startswith("$ "):
                    cur.append((line[2:], []))
                elif cur:
                    cur[-1][1].append(line)
                else:
                    sys.exit(f"{page}:{n}: output before the first command of a block")
    if in_block:
        sys.exit(f"{page}:{start}: console block never closed")
    return out


class Ids:
    def __init__(self):
        self.real = {}  # page hex -> real hex (same length)

    def translate(self, text):
        def sub(m):
            tok = m.group(0)
            for page_id, real in self.real.items():
                if page_id.startswith(tok):
                    return real[: len(tok)]
            return tok
        return HEX.sub(sub, text)

    def learn(self, page_tok, real_tok, where):
        known = self.real.get(page_tok)
        if known is not None and known != real_tok:
            sys.exit(f"{where}: the page's {page_tok} stands for both {known} and {real_tok}")
        self.real[page_tok] = real_tok


def line_pattern(expected):
    """A regex for one expected line, with a group per hex run."""
    parts, pos, hexes = [], 0, []
    for m in re.finditer(f"{HEX.pattern}|{TIME.pattern}", expected):
        parts.append(re.escape(expected[pos : m.start()]))
        if TIME.fullmatch(m.group(0)):
            parts.append(TIME.pattern)
        else:
            parts.append(f"([0-9a-f]{{{len(m.group(0))}}})")
            hexes.append(m.group(0))
        pos = m.end()
    parts.append(re.escape(expected[pos:]))
    return re.compile("".join(parts) + r"\Z"), hexes


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    bin_dir, page = os.path.abspath(sys.argv[1]), sys.argv[2]
    scratch = tempfile.mkdtemp(prefix="dot-doc-")
    ids = Ids()
    failures = 0
    try:
        found = blocks(page)
        if not found:
            sys.exit(f"{page}: no console block")
        for start, commands in found:
            for command, expected in commands:
                where = f"{page} (block at line {start}): $ {command}"
                while expected and expected[-1] == "":
                    expected = expected[:-1]
                run = ids.translate(command)
                run = run.replace("$PWD/build/release/bin/", bin_dir + "/")
                run = run.replace("/tmp/walk", scratch + "/walk").replace("~/", scratch + "/")
                if run.startswith("dot-core "):
                    run = os.path.join(bin_dir, "dot-core") + run[len("dot-core"):]
                env = dict(os.environ, HOME=scratch, NO_COLOR="1", LC_ALL="C.UTF-8",
                           PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
                env.pop("DOT_ROOT", None)
                p = subprocess.run(["bash", "-c", run], cwd=scratch, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=120)
                actual = p.stdout.decode("utf-8", "replace").replace(scratch + "/walk", "/tmp/walk")
                actual = actual.replace(scratch + "/", "~/").replace(bin_dir + "/", "$PWD/build/release/bin/")
                actual_lines = actual.split("\n")
                while actual_lines and actual_lines[-1] == "":
                    actual_lines.pop()
                problem = None
                if p.returncode != 0 and not any("DOT_E_" in e for e in expected):
                    problem = f"exit {p.returncode}"
                elif len(actual_lines) != len(expected):
                    problem = f"{len(actual_lines)} lines, the page shows {len(expected)}"
                else:
                    for want, got in zip(expected, actual_lines):
                        pattern, hexes = line_pattern(want)
                        m = pattern.match(got)
                        if not m:
                            problem = f"line differs:\n  page: {want}\n  real: {got}"
                            break
                        for page_tok, real_tok in zip(hexes, m.groups()):
                            ids.learn(page_tok, real_tok, where)
                if problem:
                    failures += 1
                    print(f"FAIL {where}\n  {problem}\n--- real output ---\n{actual}--- end ---")
                else:
                    print(f"ok   {where}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if failures:
        print(f"{failures} command(s) of {page} do not print what the page shows")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
