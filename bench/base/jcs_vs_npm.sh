#!/usr/bin/env bash
# bench/base/jcs_vs_npm.sh [MIB] [ROUNDS]: end-to-end `dot-core jcs canonicalize`
# against the npm package canonicalize (tools/jcs-crosscheck, pinned) on the same
# MIB-mebibyte file (default 8), interleaved ROUNDS times (default 7). Checks that
# both outputs are identical, then prints the medians and the median ratio.
set -euo pipefail
cd "$(dirname "$0")/../.."
mib=${1:-8}
rounds=${2:-7}
bin=build/release/bin
[ -x $bin/dot-core ] && [ -x $bin/bench_make_json ] || ./scripts/build release >/dev/null
[ -d tools/jcs-crosscheck/node_modules/canonicalize ] || (cd tools/jcs-crosscheck && npm ci --no-audit --no-fund >/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$bin/bench_make_json "$mib" > "$work/doc.json"
now() { date +%s%N; }
ours=() theirs=() ratios=()
for ((i = 0; i < rounds; i++)); do
  t0=$(now); $bin/dot-core jcs canonicalize "$work/doc.json" > "$work/ours.out"; t1=$(now)
  node tools/jcs-crosscheck/canonicalize-file.mjs "$work/doc.json" > "$work/npm.out"; t2=$(now)
  cmp -s "$work/ours.out" "$work/npm.out" || { echo "jcs_vs_npm: outputs differ" >&2; exit 1; }
  ours+=($(( (t1 - t0) / 1000 ))) theirs+=($(( (t2 - t1) / 1000 )))
  ratios+=("$(awk -v a=$((t2 - t1)) -v b=$((t1 - t0)) 'BEGIN{printf "%.2f", a / b}')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
size=$(stat -c %s "$work/doc.json")
echo "input: $size bytes, $rounds interleaved rounds, identical outputs ($(stat -c %s "$work/ours.out") bytes)"
echo "dot-core jcs canonicalize : median $(( $(median "${ours[@]}") / 1000 )) ms"
echo "npm canonicalize@$(node -p "require('./tools/jcs-crosscheck/node_modules/canonicalize/package.json').version") (node $(node --version)): median $(( $(median "${theirs[@]}") / 1000 )) ms"
echo "speed-up (median of per-round npm/dot-core): $(median "${ratios[@]}")x"
