#!/usr/bin/env bash
# cmake/BuildInfo.cmake names the commit `dot-core version` prints, in every
# kind of source tree: a plain folder (a tarball), a checkout without a
# commit, a clean and a dirty checkout, a folder inside some other checkout.
set -euo pipefail
script=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git_() { git -C "$tmp/repo" -c user.name=test -c user.email=test@example.invalid "$@"; }

header=$tmp/out/build_info.h
commit_of() {
  cmake -DSOURCE_DIR="$1" -DVERSION=9.8.7 -DOUTPUT="$header" -P "$script"
  grep -q '^#define DOT_BUILD_VERSION "9.8.7"$' "$header" || { echo "FAIL: no version in $(cat "$header")"; exit 1; }
  sed -n 's/^#define DOT_BUILD_COMMIT "\(.*\)"$/\1/p' "$header"
}
expect() {
  if [ "$2" != "$3" ]; then echo "FAIL $1: expected '$3', got '$2'"; exit 1; fi
  echo "ok   $1: $2"
}
mkdir -p "$tmp/out" "$tmp/tarball" "$tmp/repo"

expect "a folder outside any checkout" "$(commit_of "$tmp/tarball")" unknown
git_ init -q
expect "a checkout without a commit" "$(commit_of "$tmp/repo")" unknown
echo one > "$tmp/repo/tracked"
git_ add tracked
git_ commit -q -m one
head=$(git_ rev-parse --short=12 HEAD)
expect "a clean checkout" "$(commit_of "$tmp/repo")" "$head"

# Unchanged text: the header is not rewritten (nothing recompiles).
before=$(stat -c %y "$header")
sleep 0.01
commit_of "$tmp/repo" >/dev/null
expect "an unchanged header keeps its mtime" "$(stat -c %y "$header")" "$before"

echo new > "$tmp/repo/untracked"
expect "an untracked file is not dirt" "$(commit_of "$tmp/repo")" "$head"
echo two > "$tmp/repo/tracked"
expect "a changed tracked file" "$(commit_of "$tmp/repo")" "$head-dirty"
git_ add tracked
expect "a staged change" "$(commit_of "$tmp/repo")" "$head-dirty"
git_ reset -q --hard
touch -d '2001-01-01' "$tmp/repo/tracked"
expect "a touched but unchanged file" "$(commit_of "$tmp/repo")" "$head"

mkdir "$tmp/repo/unpacked"
expect "a source folder inside another checkout" "$(commit_of "$tmp/repo/unpacked")" unknown
ln -s repo "$tmp/link"
expect "a checkout reached through a symlink" "$(commit_of "$tmp/link")" "$head"
