#!/bin/sh
# Instructions per write, per contender and payload size, counted by
# callgrind (deterministic: user-space instructions only; no syscalls,
# futex wake-ups or cache misses).
#
#   tests/bench/lib-callgrind.sh [BUILD_DIR] [RECORDS] [OUT_CSV]
#
# For each contender and size it runs
#   valgrind --tool=callgrind --toggle-collect='bench_cg_*' \
#     BUILD_DIR/tests/bench/lib-bench --callgrind NAME --size S --records N
# where bench_cg_NAME is a noinline function doing N writes (payload
# generation included, consumer side not yet started, so nothing but the
# producer runs), then divides the collected Ir by N.  The "array"
# reference does the same loop storing into a plain array: the difference
# is the queue's own cost.  LD_BIND_NOW=1 keeps lazy symbol binding out of
# the count.  Prints a table; writes CSV to OUT_CSV when given.
set -eu

build=${1:-build}
records=${2:-100000}
out=${3:-}
bench="$build/tests/bench/lib-bench"
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 2; }

contenders=$("$bench" --list | awk '/^[a-z]/ { print $1 }')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

csv="$tmp/out.csv"
echo "contender,size,records,ir_total,ir_per_write,ir_per_write_minus_array" > "$csv"
for size in 8 16 32 64; do
  base=""
  for name in array $(echo "$contenders" | grep -vx array); do
    f="$tmp/cg.$name.$size"
    if ! LD_BIND_NOW=1 valgrind --tool=callgrind --callgrind-out-file="$f" \
        --toggle-collect='bench_cg_*' \
        "$bench" --callgrind "$name" --size "$size" --records "$records" \
        >"$tmp/log" 2>&1; then
      cat "$tmp/log" >&2
      echo "callgrind run failed: $name ${size}B" >&2
      exit 1
    fi
    grep -q "verified=ok" "$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
    ir=$(awk '/^summary:/ { print $2 }' "$f")
    per=$(awk -v a="$ir" -v n="$records" 'BEGIN { printf "%.2f", a / n }')
    if [ "$name" = array ]; then
      base=$per
      minus=0.00
    else
      minus=$(awk -v a="$per" -v b="$base" 'BEGIN { printf "%.2f", a - b }')
    fi
    echo "$name,$size,$records,$ir,$per,$minus" >> "$csv"
  done
done

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
if [ -n "$out" ]; then
  cp "$csv" "$out"
  echo "wrote $out"
fi
