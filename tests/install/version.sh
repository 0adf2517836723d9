#!/usr/bin/env bash
# `dot-core version` and `version --json`: the project's version and a commit
# that exists in this source tree ("unknown" only when it is not a checkout).
set -euo pipefail
dot_core=$1 source_dir=$2 version=$3
fail() { echo "FAIL: $*"; exit 1; }

text=$("$dot_core" version)
[[ $text =~ ^dot-core\ ([^ ]+)\ \(commit\ ([^ ]+)\)$ ]] || fail "version printed '$text'"
[ "${BASH_REMATCH[1]}" = "$version" ] || fail "version ${BASH_REMATCH[1]}, project says $version"
commit=${BASH_REMATCH[2]}

top=$(git -C "$source_dir" rev-parse --show-toplevel 2>/dev/null || true)
if [ -n "$top" ] && [ "$(realpath "$top")" = "$(realpath "$source_dir")" ]; then
  [[ $commit =~ ^([0-9a-f]{12,})(-dirty)?$ ]] || fail "commit '$commit' in a git checkout"
  git -C "$source_dir" cat-file -e "${BASH_REMATCH[1]}^{commit}" || fail "no commit ${BASH_REMATCH[1]} in $source_dir"
else
  [ "$commit" = unknown ] || fail "commit '$commit' outside a git checkout"
fi

json=$("$dot_core" version --json)
[ "$json" = "{\"commit\":\"$commit\",\"version\":\"$version\"}" ] || fail "version --json printed '$json'"
echo "ok: $text; $json"
