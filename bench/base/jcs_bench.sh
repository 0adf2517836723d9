#!/usr/bin/env bash
# bench/base/jcs_bench.sh [ROUNDS] [RUNS] [MIB] [SEED]: end-to-end (process
# start to last byte) `dot-core jcs canonicalize` against npm canonicalize 4.0.0
# (tools/jcs-crosscheck) and the other RFC 8785 canonicalizers of
# bench/base/jcs-others, on every shape of bench_jcs_corpus (issue 18).
#
# For each shape: every implementation's output is compared byte for byte with
# dot-core's (a difference is reported, and that implementation is not timed
# on that shape); then ROUNDS rounds (default 5) of one hyperfine run each,
# every command RUNS times (default 3) after a warm-up, so that all of them
# share each round's machine load. Per round, the ratio of medians; printed:
# the median over rounds of each command's median wall time and of each ratio.
#
# SHAPES (environment): only these shapes, e.g. SHAPES="numbers wide".
# OTHERS (environment): the other packages to time, default "canonicalize@5.1.0"
# (the fastest of the four here; set OTHERS="json-canonicalize
# @truestamp/canonify json-canon canonicalize@5.1.0" to time all of them).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
runs=${2:-3}
mib=${3:-8}
seed=${4:-1}
others=${OTHERS:-canonicalize@5.1.0}
bin=build/release/bin
command -v hyperfine >/dev/null || { echo "jcs_bench: hyperfine is missing (scripts/bootstrap test installs it)" >&2; exit 1; }
[ -x $bin/dot-core ] && [ -x $bin/bench_jcs_corpus ] || ./scripts/build release >/dev/null
[ -d tools/jcs-crosscheck/node_modules/canonicalize ] || (cd tools/jcs-crosscheck && npm ci --no-audit --no-fund >/dev/null)
[ -d bench/base/jcs-others/node_modules/json-canonicalize ] || (cd bench/base/jcs-others && npm ci --no-audit --no-fund >/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$bin/bench_jcs_corpus "$work" "$mib" "$seed" >/dev/null

ours="$PWD/$bin/dot-core jcs canonicalize"
npm4="node $PWD/tools/jcs-crosscheck/canonicalize-file.mjs"
other_cmd() { echo "node $PWD/bench/base/jcs-others/canonicalize-file.mjs ${1%@*}"; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), node $(node --version), load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "corpus: bench_jcs_corpus $mib MiB per shape, seed $seed; $rounds rounds x $runs runs, interleaved per round"
printf '%-8s %9s %9s %8s' shape dot-core npm-4.0.0 ratio
for o in $others; do printf ' %22s %8s' "$o" ratio; done
echo
for f in "$work"/*.json; do
  shape=$(basename "$f" .json)
  [ -z "${SHAPES:-}" ] || [[ " $SHAPES " == *" $shape "* ]] || continue
  $ours "$f" > "$work/ours.out"
  $npm4 "$f" > "$work/npm.out"
  cmp -s "$work/ours.out" "$work/npm.out" || { echo "jcs_bench: $shape: dot-core and npm canonicalize 4.0.0 differ: $(cmp "$work/ours.out" "$work/npm.out" | head -1)" >&2; exit 1; }
  cmds=("$ours $f" "$npm4 $f")
  names=(dot-core npm)
  for o in $others; do
    if $(other_cmd "$o") "$f" > "$work/other.out" 2> "$work/other.err" && cmp -s "$work/ours.out" "$work/other.out"; then
      cmds+=("$(other_cmd "$o") $f")
      names+=("$o")
    else
      echo "jcs_bench: $shape: $o differs from dot-core and npm canonicalize: $(cmp "$work/ours.out" "$work/other.out" 2>&1 | head -1; head -c 200 "$work/other.err")" >&2
    fi
  done
  for ((r = 0; r < rounds; r++)); do
    # hyperfine's warnings about outliers would bury the table; its errors are shown.
    hyperfine -N --warmup 1 --runs "$runs" --style none --export-json "$work/$shape.$r.json" "${cmds[@]}" \
      >/dev/null 2>"$work/hyperfine.err" || { cat "$work/hyperfine.err" >&2; exit 1; }
  done
  node - "$work" "$shape" "$rounds" "${names[@]}" <<'EOF'
const [work, shape, rounds, ...names] = process.argv.slice(2);
const fs = require('node:fs');
const median = (v) => { const s = [...v].sort((a, b) => a - b); return s[(s.length - 1) >> 1]; };
const per = names.map(() => []);  // per command: its median of each round (s)
for (let r = 0; r < Number(rounds); r++) {
  const j = JSON.parse(fs.readFileSync(`${work}/${shape}.${r}.json`, 'utf8'));
  j.results.forEach((res, i) => per[i].push(median(res.times)));
}
const ours = per[0];
let line = shape.padEnd(8) + `${(median(ours) * 1e3).toFixed(1)} ms`.padStart(10);
per.slice(1).forEach((t, i) => {
  const ratio = median(t.map((v, k) => v / ours[k]));
  const cell = `${(median(t) * 1e3).toFixed(1)} ms`;
  line += i === 0 ? cell.padStart(10) + `${ratio.toFixed(1)}x`.padStart(9)
                  : ` ${names[i + 1]}: ${cell}`.padStart(23) + `${ratio.toFixed(1)}x`.padStart(9);
});
console.log(line);
EOF
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg); ratios are other/dot-core (higher is faster for dot-core)"
