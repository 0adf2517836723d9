#!/usr/bin/env bash
# The bash and zsh completions dot-core-docgen generated at build time offer
# exactly what --help lists: every command, every subcommand, every option
# of each command path; `dot-core pl<TAB>` offers plan. Each script is run
# the way its shell runs it: bash calls _dot_core with COMP_WORDS and
# COMP_CWORD set; zsh runs the _dot-core file with words, CURRENT and PREFIX
# set, _describe and _files standing in for its completion system (they
# print what would be offered).
set -euo pipefail
DOT_CORE=$1 share=$2
source "$(dirname "$0")/help_lib.sh"
bash_script=$share/bash-completion/completions/dot-core
zsh_script=$share/zsh/vendor-completions/_dot-core

# complete_bash WORD...: what bash offers for the last word.
complete_bash() {
  bash --norc --noprofile -c '
    set -eu
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    _dot_core
    [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_script" "$@"
}
# complete_zsh WORD...: what zsh offers for the last word ("<files>" for
# file names).
complete_zsh() {
  zsh -f -c '
    set -eu
    script=$1; shift
    words=("$@"); CURRENT=$#; PREFIX=${words[CURRENT]}
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
    source $script' _ "$zsh_script" "$@"
}
same() {  # LABEL EXPECTED ACTUAL
  if [ "$(sort <<<"$2")" != "$(sort <<<"$3")" ]; then
    fail "$1: expected [$(echo $2)], offered [$(echo $3)]"
  fi
}

bash -n "$bash_script"
zsh -n "$zsh_script"
for shell in bash zsh; do
  c=complete_$shell
  same "$shell: dot-core pl" "plan
plan-id" "$($c dot-core pl)"
  same "$shell: dot-core jcs c" canonicalize "$($c dot-core jcs c)"
  same "$shell: dot-core (every command)" "$(help_subcommands)" "$($c dot-core '')"
  same "$shell: dot-core - (root options)" "$(help_options)" "$($c dot-core -)"
  # The value of an option is a file name, and is no command: after it,
  # the command's options again.
  files=""
  [ $shell = zsh ] && files="<files>"
  same "$shell: dot-core plan --root pl" "$files" "$($c dot-core plan --root pl)"
  same "$shell: dot-core plan --root plan --" "$(help_options plan | grep '^--')" "$($c dot-core plan --root plan --)"
  IFS=$'\n'
  for path in $(command_paths); do
    IFS=' ' read -r -a args <<<"$path"
    same "$shell: dot-core $path -" "$(help_options "${args[@]}")" "$($c dot-core "${args[@]}" -)"
    subs=$(help_subcommands "${args[@]}")
    if [ -n "$subs" ]; then
      same "$shell: dot-core $path (subcommands)" "$subs" "$($c dot-core "${args[@]}" '')"
    fi
  done
  unset IFS
  echo "ok   $shell: every command, subcommand and option --help lists"
done
