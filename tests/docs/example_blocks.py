#!/usr/bin/env python3
"""Checks that every code block a Markdown page marks as an example file is
that file, byte for byte, so the page shows exactly the code the tests build
and run.

Usage: example_blocks.py SOURCE_DIR PAGE.md

A block is marked by the line `<!-- example: docs/examples/NAME -->` right
before its opening fence (invisible in rendered Markdown). A marker without
a block, a path that does not exist, or a block that differs fails, naming
the first line that differs. A page must mark at least one block.
"""
import os
import sys


def marked_blocks(page):
    """[(marker line number, path, block text)] in page order."""
    lines = open(page, encoding="utf-8").read().split("\n")
    out, n = [], 0
    while n < len(lines):
        line = lines[n].strip()
        if line.startswith("<!-- example:") and line.endswith("-->"):
            path = line[len("<!-- example:"):-len("-->")].strip()
            if n + 1 >= len(lines) or not lines[n + 1].startswith("```"):
                sys.exit(f"{page}:{n + 1}: example marker for {path} not followed by a code block")
            end = n + 2
            while end < len(lines) and lines[end] != "```":
                end += 1
            if end == len(lines):
                sys.exit(f"{page}:{n + 2}: code block never closed")
            out.append((n + 1, path, "\n".join(lines[n + 2:end]) + "\n"))
            n = end
        n += 1
    return out


def main():
    source_dir, page = sys.argv[1], sys.argv[2]
    blocks = marked_blocks(page)
    if not blocks:
        sys.exit(f"{page}: no block is marked as an example file")
    failed = False
    for line_no, path, text in blocks:
        try:
            want = open(os.path.join(source_dir, path), encoding="utf-8").read()
        except OSError as e:
            sys.exit(f"{page}:{line_no}: {path}: {e.strerror}")
        if text == want:
            print(f"ok   {page}:{line_no} is {path}")
            continue
        failed = True
        got_lines, want_lines = text.split("\n"), want.split("\n")
        first = next((i for i, (a, b) in enumerate(zip(got_lines, want_lines)) if a != b),
                     min(len(got_lines), len(want_lines)))
        print(f"FAIL {page}:{line_no}: the block differs from {path} at its line {first + 1}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
