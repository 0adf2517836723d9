#!/usr/bin/env python3
"""The man pages dot-core-docgen generated at build time list, for every
command, exactly the options and arguments its --help lists (the generator
walks the app itself, so the pages cannot drift), groff reads them without a
warning, and no page names the build tree.

usage: man_pages.py DOT_CORE SHARE BUILD_DIR"""

import os
import re
import subprocess
import sys

from help_lib import Help, fail, same

# A .TP entry's name line: \fB-h,\-\-help\fR or \fB\-\-root\fR TEXT.
TP_NAME = re.compile(r"^\\fB([^\\]*(?:\\-[^\\]*)*)\\fR")


def man_part(roff, path):
    """The roff of PATH's part of its page: a top-level command's page up to
    its COMMANDS section, a subcommand's .SS section."""
    lines = roff.splitlines()
    if len(path) == 1:
        part = []
        for line in lines:
            if re.match(r"^\.SH (COMMANDS|SEE ALSO)", line):
                break
            part.append(line)
        return part
    header = '.SS "dot\\-core ' + " ".join(path).replace("-", "\\-") + '"'
    part, inside = [], False
    for line in lines:
        if re.match(r"^\.S[SH] ", line):
            inside = line == header
        elif inside:
            part.append(line)
    return part


def man_names(lines):
    """The names of the .TP entries in LINES ("-h,--help" gives two)."""
    names = []
    for previous, line in zip(lines, lines[1:]):
        if previous == ".TP":
            match = TP_NAME.match(line)
            if match:
                names.extend(match.group(1).replace("\\-", "-").split(","))
    return names


def main(dot_core, share, build_dir):
    help_ = Help(dot_core)
    man1 = os.path.join(share, "man", "man1")
    paths = help_.command_paths()
    if not paths:
        fail("dot-core --help lists no command")
    if ("plan",) not in paths:
        fail("no plan in dot-core --help")

    pages = {}
    for path in paths:
        page = os.path.join(man1, f"dot-core-{path[0]}.1")
        if page not in pages:
            if not os.path.isfile(page):
                fail(f"no {page} for {path[0]}")
            with open(page, encoding="utf-8") as f:
                pages[page] = f.read()
        part = man_part(pages[page], path)
        if not part:
            fail(f"no part for '{' '.join(path)}' in {page}")
        names = man_names(part)
        label = " ".join(path)
        same(f"{label}: options", help_.options(path), [n for n in names if n.startswith("-")],
             "--help lists", "the man page")
        same(f"{label}: arguments", help_.positionals(path), [n for n in names if not n.startswith("-")],
             "--help lists", "the man page")
        print(f"ok   {label}: {len(help_.options(path))} option(s) in {os.path.basename(page)}")

    # The root page lists every command and the root's own options.
    with open(os.path.join(man1, "dot-core.1"), encoding="utf-8") as f:
        root = f.read().splitlines()
    commands, inside = [], False
    for line in root:
        if line.startswith(".SH COMMANDS"):
            inside = True
        elif line.startswith(".SH"):
            inside = False
        elif inside:
            commands.append(line)
    same("dot-core: commands", help_.subcommands(), man_names(commands), "--help lists", "the man page")
    same("dot-core: options", help_.options(),
         [n for n in man_names(man_part("\n".join(root), ("dot-core",))) if n.startswith("-")],
         "--help lists", "the man page")
    listed = sorted(os.listdir(man1))
    if len(listed) != len(help_.subcommands()) + 1:
        fail(f"stray pages in {man1}: {' '.join(listed)}")

    for name in listed:
        groff = subprocess.run(["groff", "-man", "-ww", "-z", os.path.join(man1, name)],
                               capture_output=True, text=True)
        warnings = (groff.stdout + groff.stderr).strip()
        if groff.returncode != 0 or warnings:
            fail(f"groff on {name}: {warnings or 'exit ' + str(groff.returncode)}")
    for folder, _, files in os.walk(share):
        for name in files:
            with open(os.path.join(folder, name), "rb") as f:
                if build_dir.encode() in f.read():
                    fail(f"a generated file names the build tree {build_dir}: {os.path.join(folder, name)}")
    print(f"ok   {len(listed)} pages, groff silent, no build path")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    main(*sys.argv[1:])
