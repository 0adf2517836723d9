#!/usr/bin/env python3
"""The bash and zsh completions dot-core-docgen generated at build time offer
exactly what --help lists: every command, every subcommand, every option of
each command path; `dot-core pl<TAB>` offers plan; after an option that
takes a value, file names; after a flag, the command's words again.

Each script is run the way its shell runs it, in one long-lived shell that
answers every question in turn, as an interactive shell does: bash calls
_dot_core with COMP_WORDS and COMP_CWORD set; zsh runs the _dot-core file
with words, CURRENT and PREFIX set, _describe and _files standing in for its
completion system (they print what would be offered).

usage: completion.py DOT_CORE SHARE"""

import os
import subprocess
import sys

from help_lib import Help, fail, same

# Both drivers read questions from stdin: a line with the number of words,
# then one word a line; they answer with what would be offered, one a line,
# then a line holding only END.
BASH_DRIVER = r'''
set -eu
source "$1"
while read -r n; do
  COMP_WORDS=()
  for ((i = 0; i < n; i++)); do IFS= read -r w; COMP_WORDS+=("$w"); done
  COMP_CWORD=$((n - 1))
  _dot_core
  [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"
  echo END
done
'''
ZSH_DRIVER = r'''
set -eu
script=$1
_describe() {
  local a item
  [[ $1 == -t ]] && shift 2
  shift
  for a in "$@"; do
    [[ $a == -- ]] && continue
    for item in "${(@P)a}"; do
      item=${item%%:*}
      if [[ $item == $PREFIX* ]]; then print -r -- $item; fi
    done
  done
}
_files() { print -r -- "<files>"; }
while read -r n; do
  words=()
  for ((i = 0; i < n; i++)); do IFS= read -r w; words+=("$w"); done
  CURRENT=$n; PREFIX=${words[CURRENT]}
  source $script
  print END
done
'''


def complete_all(shell, script, questions):
    """What SHELL offers for the last word of each question (a list of
    words), in order."""
    stdin = "".join(f"{len(q)}\n" + "".join(w + "\n" for w in q) for q in questions)
    if shell == "bash":
        argv = ["bash", "--norc", "--noprofile", "-c", BASH_DRIVER, "_", script]
    else:
        argv = ["zsh", "-f", "-c", ZSH_DRIVER, "_", script]
    run = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"{shell} driver exited {run.returncode}: {run.stderr.strip()}")
    answers, current = [], []
    for line in run.stdout.splitlines():
        if line == "END":
            answers.append(current)
            current = []
        else:
            current.append(line)
    if len(answers) != len(questions) or current:
        fail(f"{shell} answered {len(answers)} of {len(questions)} questions: {run.stderr.strip()}")
    return answers


def main(dot_core, share):
    help_ = Help(dot_core)
    scripts = {
        "bash": os.path.join(share, "bash-completion", "completions", "dot-core"),
        "zsh": os.path.join(share, "zsh", "vendor-completions", "_dot-core"),
    }
    for shell, script in scripts.items():
        check = subprocess.run([shell, "-n", script], capture_output=True, text=True)
        if check.returncode != 0:
            fail(f"{shell} -n {script}: {check.stderr.strip()}")

    paths = help_.command_paths()
    flag = "--json"  # a flag of plan: takes no value
    if flag not in help_.options(("plan",)):
        fail("plan --help lists no --json")
    for shell, script in scripts.items():
        files = ["<files>"] if shell == "zsh" else []
        # (label, words, expected)
        cases = [
            ("dot-core pl", ["dot-core", "pl"], ["plan", "plan-id"]),
            ("dot-core jcs c", ["dot-core", "jcs", "c"], ["canonicalize"]),
            ("dot-core (every command)", ["dot-core", ""], help_.subcommands()),
            ("dot-core - (root options)", ["dot-core", "-"], help_.options()),
            # The value of an option is a file name, and is no command: after
            # it, the command's options again.
            ("dot-core plan --root pl", ["dot-core", "plan", "--root", "pl"], files),
            ("dot-core plan --root plan --", ["dot-core", "plan", "--root", "plan", "--"],
             [o for o in help_.options(("plan",)) if o.startswith("--")]),
            # A flag takes no value: after it, the command's words again.
            (f"dot-core plan {flag} (a flag)", ["dot-core", "plan", flag, ""], help_.options(("plan",))),
            (f"dot-core plan {flag} --root pl", ["dot-core", "plan", flag, "--root", "pl"], files),
        ]
        for path in paths:
            label = " ".join(path)
            cases.append((f"dot-core {label} -", ["dot-core", *path, "-"], help_.options(path)))
            subs = help_.subcommands(path)
            if subs:
                cases.append((f"dot-core {label} (subcommands)", ["dot-core", *path, ""], subs))
        answers = complete_all(shell, script, [words for _, words, _ in cases])
        for (label, _, expected), offered in zip(cases, answers):
            same(f"{shell}: {label}", expected, offered)
        print(f"ok   {shell}: every command, subcommand and option --help lists ({len(cases)} questions)")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    main(*sys.argv[1:])
