"""What `dot-core ... --help` lists, read from its text (CLI11's layout:
"Section:" headers, entries indented by two spaces), independently of
dot-core-docgen. Imported by the tests of this folder.

Each command path's help is run once and kept: the tests ask for its
sections many times, and on this kind of machine every process start costs
milliseconds (the shell versions of these tests spent over a minute starting
awk, sed and sort)."""

import subprocess
import sys


class Help:
    def __init__(self, dot_core):
        self.dot_core = dot_core
        self._texts = {}

    def text(self, path=()):
        """`dot-core PATH --help` (PATH a tuple of words)."""
        path = tuple(path)
        if path not in self._texts:
            run = subprocess.run([self.dot_core, *path, "--help"], capture_output=True, text=True)
            if run.returncode != 0:
                fail(f"dot-core {' '.join(path)} --help exited {run.returncode}: {run.stderr.strip()}")
            self._texts[path] = run.stdout
        return self._texts[path]

    def section(self, name, path=()):
        """The first column of section NAME's entries (an option entry like
        "-h,--help" is one field)."""
        entries, inside = [], False
        for line in self.text(path).splitlines():
            if line and not line.startswith(" ") and line.endswith(":"):
                inside = line == name + ":"
            elif inside and line.startswith("  ") and line[2:3] not in ("", " "):
                entries.append(line.split()[0])
        return entries

    # `dot-core --help` lists its commands under headings of their own
    # (cli/app.cpp); a command's subcommands are under "Subcommands".
    COMMAND_SECTIONS = ("Subcommands", "Everyday commands", "Looking after a root", "Protocol tools")

    def subcommands(self, path=()):
        return [sub for name in self.COMMAND_SECTIONS for sub in self.section(name, path)]

    def options(self, path=()):
        """Every option name listed ("-h,--help" gives -h and --help)."""
        return [name for entry in self.section("Options", path)
                for name in entry.split(",") if name.startswith("-")]

    def positionals(self, path=()):
        return self.section("Positionals", path)

    def command_paths(self, path=()):
        """Every command path below PATH, as tuples, in --help's order."""
        paths = []
        for sub in self.subcommands(path):
            paths.append((*path, sub))
            paths.extend(self.command_paths((*path, sub)))
        return paths


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def same(label, expected, actual, what="expected", other="offered"):
    """The same entries, whatever their order."""
    if sorted(expected) != sorted(actual):
        fail(f"{label}: {what} [{' '.join(expected)}], {other} [{' '.join(actual)}]")
