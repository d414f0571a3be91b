#!/bin/sh
# Instructions per write, per contender and payload size, counted by
# callgrind (deterministic: user-space instructions only; no syscalls,
# futex wake-ups or cache misses).
#
#   tests/bench/lib-callgrind.sh [--smoke] [BUILD_DIR] [RECORDS] [OUT_DIR]
#
# For each contender and size it runs
#   valgrind --tool=callgrind --toggle-collect='bench_cg_*' \
#     BUILD_DIR/tests/bench/lib-bench --callgrind NAME --size S --records N
# where bench_cg_NAME is a noinline function doing N writes (payload
# generation included, consumer side not yet started, so nothing but the
# producer runs), then divides the collected Ir by N.  The "array"
# reference does the same loop storing into a plain array: the difference
# is the queue's own cost.  LD_BIND_NOW=1 keeps lazy symbol binding out of
# the count.  Prints a table; writes OUT_DIR/lib-callgrind-runs.csv and
# lib-callgrind-meta.json (OUT_DIR: $TBQ_BENCH_OUT, else
# BUILD_DIR/bench-data, with --smoke BUILD_DIR/bench-smoke).
# --smoke: the array reference and tbq-write at 8 bytes, 1000 writes, TAP.
set -eu

smoke=0
if [ "${1:-}" = "--smoke" ]; then
  smoke=1
  shift
fi
build=${1:-build}
records=${2:-100000}
sizes="8 16 32 64"
if [ "$smoke" = 1 ]; then
  records=1000
  sizes=8
  outdir=${3:-${TBQ_BENCH_OUT:-$build/bench-smoke}}
else
  outdir=${3:-${TBQ_BENCH_OUT:-$build/bench-data}}
fi
started=$(date +%Y-%m-%dT%H:%M:%S%z)
bench="$build/tests/bench/lib-bench"
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 2; }

contenders=$("$bench" --list | awk '/^[a-z]/ { print $1 }')
[ "$smoke" = 0 ] || { contenders=tbq-write; echo "1..2"; }
n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

csv="$tmp/out.csv"
echo "contender,size,records,ir_total,ir_per_write,ir_per_write_minus_array" > "$csv"
for size in $sizes; do
  base=""
  for name in array $(echo "$contenders" | grep -vx array); do
    f="$tmp/cg.$name.$size"
    n=$((n + 1))
    if ! LD_BIND_NOW=1 valgrind --tool=callgrind --callgrind-out-file="$f" \
        --toggle-collect='bench_cg_*' \
        "$bench" --callgrind "$name" --size "$size" --records "$records" \
        >"$tmp/log" 2>&1; then
      cat "$tmp/log" >&2
      echo "callgrind run failed: $name ${size}B" >&2
      [ "$smoke" = 0 ] || echo "not ok $n - lib-callgrind $name ${size}B"
      exit 1
    fi
    grep -q "verified=ok" "$tmp/log" || { cat "$tmp/log" >&2
      [ "$smoke" = 0 ] || echo "not ok $n - lib-callgrind $name ${size}B: not verified"
      exit 1; }
    ir=$(awk '/^summary:/ { print $2 }' "$f")
    per=$(awk -v a="$ir" -v n="$records" 'BEGIN { printf "%.2f", a / n }')
    if [ "$name" = array ]; then
      base=$per
      minus=0.00
    else
      minus=$(awk -v a="$per" -v b="$base" 'BEGIN { printf "%.2f", a - b }')
    fi
    echo "$name,$size,$records,$ir,$per,$minus" >> "$csv"
    [ "$smoke" = 0 ] || echo "ok $n - lib-callgrind $name ${size}B: $per instructions per write"
  done
done

[ "$smoke" = 0 ] || exec >&2
echo "Instructions per write (callgrind Ir, $records writes, payload generation included)"
awk -F, 'NR > 1 { v[$1 "," $2] = $5; d[$1 "," $2] = $6; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
  END {
    printf "%-16s %10s %10s %10s %10s\n", "contender", "8B", "16B", "32B", "64B"
    for (i = 1; i <= n; i++) {
      c = order[i]
      printf "%-16s", c
      for (s = 8; s <= 64; s *= 2) printf " %10s", v[c "," s]
      printf "\n"
    }
    printf "minus the array reference (the queue alone):\n"
    for (i = 1; i <= n; i++) {
      c = order[i]
      if (c == "array") continue
      printf "%-16s", c
      for (s = 8; s <= 64; s *= 2) printf " %10s", d[c "," s]
      printf "\n"
    }
  }' "$csv"
mkdir -p "$outdir"
cp "$csv" "$outdir/lib-callgrind-runs.csv"
commit=$(git -C "$(dirname "$0")" rev-parse HEAD 2>/dev/null || echo unknown)
cat > "$outdir/lib-callgrind-meta.json" <<EOM
{
  "tool": "lib-callgrind.sh",
  "benchmark": "lib-callgrind",
  "command": "$0 $build $records $outdir",
  "started": "$started",
  "machine": {
    "git_commit": "$commit",
    "valgrind": "$(valgrind --version)"
  },
  "params": {"records": $records, "sizes": "$sizes"}
}
EOM
echo "wrote $outdir/lib-callgrind-runs.csv"
