#!/usr/bin/env bash
# `cmake --install BUILD --prefix P` installs a tree that works on its own:
# with the source and build trees hidden (an empty tmpfs mounted over each in
# a private mount namespace, as on a machine that never built dot-core),
# P/bin/dot-core runs init, register (the reference plugin from
# P/libexec/dot-core/), plan and apply; `register --help` names that plugin;
# the plugin dot-mirror is installed beside it;
# the binaries name no build path and carry no RPATH; the man pages,
# completions and docs are in place. Then the tree moves, and still works.
set -euo pipefail
build_dir=$(realpath "$1") source_dir=$(realpath "$2") build_kind=${3:-product}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/p

cmake --install "$build_dir" --prefix "$prefix" >/dev/null
for f in bin/dot-core libexec/dot-core/dot-hello libexec/dot-core/dot-mirror share/man/man1/dot-core.1 share/man/man1/dot-core-plan.1 \
         share/bash-completion/completions/dot-core share/zsh/vendor-completions/_dot-core \
         share/doc/dot-core/user-guide.md share/doc/dot-core/README.md share/doc/dot-core/spec/README.md \
         share/doc/dot-core/spec/dpp-general.md share/doc/dot-core/spec/examples/dpp-general.to-plugin; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done
# docs/errors.md is installed as built: the page and the tables of kinds generated from the code.
grep -qF '## Kinds, layer by layer' "$prefix/share/doc/dot-core/errors.md" || fail "errors.md without its tables of kinds"
grep -qF '| `duplicate_key` | DOT_E_VALIDATION |' "$prefix/share/doc/dot-core/errors.md" || fail "errors.md lacks base's kinds"
for exe in bin/dot-core libexec/dot-core/dot-hello libexec/dot-core/dot-mirror; do
  ! readelf -d "$prefix/$exe" | grep -E 'RPATH|RUNPATH' || fail "$exe keeps an RPATH"
  if [ "$build_kind" != sanitized ]; then
    ! grep -qF -e "$build_dir" -e "$source_dir" "$prefix/$exe" || fail "$exe names the build or source tree"
  fi
done

# The first hour, from the prefix alone.
first_hour() {
  set -euo pipefail
  local p=$1 root=$tmp/managed-$RANDOM
  grep -qF -- "--plugin $p/libexec/dot-core/dot-hello " <<<"$("$p/bin/dot-core" register --help)" ||
    { echo "FAIL: register --help does not name $p/libexec/dot-core/dot-hello"; return 1; }
  "$p/bin/dot-core" init --root "$root" >/dev/null
  "$p/bin/dot-core" register --root "$root" --plugin "$p/libexec/dot-core/dot-hello" --assurance audit >/dev/null
  local plan
  plan=$("$p/bin/dot-core" plan --root "$root" --allow-audit-plugin | sed -n 's/^sealed plan \([0-9a-f]*\)$/\1/p')
  [ -n "$plan" ] || { echo "FAIL: plan printed no plan id"; return 1; }
  "$p/bin/dot-core" apply --root "$root" "$plan" >/dev/null
  [ "$(cat "$root/hello.txt")" = "Hello, world!" ] || { echo "FAIL: hello.txt after apply"; return 1; }
  "$p/bin/dot-core" version
  echo "ok   init, register, plan, apply from $p"
}

hide=(--mount --propagation private)
[ "$(id -u)" -eq 0 ] || hide+=(--map-root-user)
cd "$tmp"
unshare "${hide[@]}" env -i PATH=/usr/bin:/bin HOME="$tmp" tmp="$tmp" FIRST_HOUR="$(declare -f first_hour)" \
  BUILD="$build_dir" SOURCE="$source_dir" PREFIX_DIR="$prefix" bash -c '
    set -euo pipefail
    mount -t tmpfs none "$SOURCE"
    [[ $BUILD == "$SOURCE"/* ]] || mount -t tmpfs none "$BUILD"
    [ -z "$(ls -A "$SOURCE")" ] && [ ! -e "$BUILD/bin/dot-core" ] || { echo "FAIL: the trees are not hidden"; exit 1; }
    eval "$FIRST_HOUR"
    first_hour "$PREFIX_DIR"
    mv "$PREFIX_DIR" "$PREFIX_DIR-moved"
    first_hour "$PREFIX_DIR-moved"'
