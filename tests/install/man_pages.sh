#!/usr/bin/env bash
# The man pages dot-core-docgen generated at build time list, for every
# command, exactly the options and arguments its --help lists (the generator
# walks the app itself, so the pages cannot drift), groff reads them without
# a warning, and no page names the build tree.
set -euo pipefail
DOT_CORE=$1 share=$2 build_dir=$3
source "$(dirname "$0")/help_lib.sh"
man1=$share/man/man1

# man_part PAGE PATH: the roff of PATH's part of PAGE: a top-level command's
# page up to its COMMANDS section, a subcommand's .SS section.
man_part() {
  local header=""
  [[ $2 == *" "* ]] && header=".SS \"dot\\-core ${2//-/\\-}\""
  HEADER=$header awk '
    BEGIN { h = ENVIRON["HEADER"]; inside = (h == "") }
    h == "" && /^\.SH (COMMANDS|SEE ALSO)/ { inside = 0 }
    h != "" && /^\.S[SH] / { inside = ($0 == h); next }
    inside { print }' "$1"
}
# man_names ROFF: the names of its .TP entries (\fB-h,--help\fR), one a line.
man_names() {
  awk '/^\.TP$/ { getline; print }' | sed -n 's/^\\fB\([^\\]*\(\\-[^\\]*\)*\)\\fR.*/\1/p' |
    sed 's/\\-/-/g' | tr ',' '\n'
}
same() {  # LABEL EXPECTED ACTUAL: the same lines, whatever their order
  if [ "$(sort <<<"$2")" != "$(sort <<<"$3")" ]; then
    fail "$1: --help lists [$(echo $2)], the man page [$(echo $3)]"
  fi
}

paths=$(command_paths)
[ -n "$paths" ] || fail "dot-core --help lists no command"
grep -qx plan <<<"$paths" || fail "no plan in dot-core --help"
IFS=$'\n'
for path in $paths; do
  top=${path%% *}
  page=$man1/dot-core-$top.1
  [ -f "$page" ] || fail "no $page for $top"
  part=$(man_part "$page" "$path")
  [ -n "$part" ] || fail "no part for '$path' in $page"
  IFS=' ' read -r -a args <<<"$path"
  same "$path: options" "$(help_options "${args[@]}")" "$(man_names <<<"$part" | grep '^-' || true)"
  same "$path: arguments" "$(help_positionals "${args[@]}")" "$(man_names <<<"$part" | grep -v '^-' || true)"
  echo "ok   $path: $(help_options "${args[@]}" | wc -l) option(s) in $(basename "$page")"
done
unset IFS

# The root page lists every command and the root's own options.
same "dot-core: commands" "$(help_subcommands)" \
  "$(awk '/^\.SH COMMANDS/ { on = 1; next } /^\.SH/ { on = 0 } on' "$man1/dot-core.1" | man_names)"
same "dot-core: options" "$(help_options)" "$(man_part "$man1/dot-core.1" dot-core | man_names | grep '^-')"
[ "$(ls "$man1" | wc -l)" -eq "$(( $(help_subcommands | wc -l) + 1 ))" ] || fail "stray pages in $man1: $(ls "$man1")"

for page in "$man1"/*.1; do
  warnings=$(groff -man -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || fail "groff on $page: $warnings"
done
if grep -rlF "$build_dir" "$share"; then fail "a generated file names the build tree $build_dir"; fi
echo "ok   $(ls "$man1" | wc -l) pages, groff silent, no build path"
