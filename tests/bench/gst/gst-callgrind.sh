#!/bin/sh
# Instructions per gst_pad_push on the upstream thread, counted by callgrind
# (deterministic: user-space instructions of the pushing thread only; no
# system calls, futex wake-ups, cache misses or time spent preempted).
#
#   tests/bench/gst/gst-callgrind.sh [--smoke] [BUILD_DIR] [PUSHES] [OUT_CSV]
#
# For each contender, mode and allocation it runs
#   valgrind --tool=callgrind --toggle-collect=gb_cg_push \
#     BUILD_DIR/tests/bench/gst/gst-bench callgrind --contender NAME \
#       --mode up|stalled --alloc fresh|pool --pushes N
# gb_cg_push() is a noinline function around gst_pad_push(); callgrind
# collects only while the pushing thread is inside it (collection is per
# thread), so the total divided by N is the inclusive cost of one push,
# everything the element does on the upstream thread included (for
# tbqueue transfer=copy: freeing the upstream buffer or returning it to its
# pool).  Buffer allocation and filling happen outside.  2000 warm-up
# pushes run uncounted first.  LD_BIND_NOW=1 keeps lazy symbol binding out
# of the count.  Prints a table; writes CSV to OUT_CSV when given.
# The `bare` case (our src pad linked straight to a chain function that
# verifies and unrefs) also gives the cost of GStreamer's pad machinery
# alone: its total minus the inclusive cost of that chain function
# (link_chain, read with callgrind_annotate; inlined header code makes it
# appear under more than one file name, the largest inclusive count is the
# whole function).  The pad machinery is the
# same for every element, so "element" = total - pad machinery is what the
# element's own chain function costs; both are in the CSV.
# --smoke: queue and tbqueue, one case each, few pushes, TAP lines.
set -eu

smoke=0
if [ "${1:-}" = "--smoke" ]; then
  smoke=1
  shift
fi
build=${1:-build}
pushes=${2:-20000}
out=${3:-}
bench="$build/tests/bench/gst/gst-bench"
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 2; }

if [ "$smoke" = 1 ]; then
  cases="queue:up:fresh tbqueue:up:fresh"
  pushes=1000
else
  cases=""
  for alloc in fresh pool; do
    for mode in up stalled; do
      for c in bare queue queue2 tbqueue tbqueue-ref; do
        [ "$c" = bare ] && [ "$mode" = stalled ] && continue
        cases="$cases $c:$mode:$alloc"
      done
    done
  done
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
csv="$tmp/out.csv"
echo "contender,mode,alloc,size,pushes,ir_total,ir_per_push,pad_ir_per_push,element_ir_per_push" > "$csv"
n=0
status=0
for cse in $cases; do
  c=${cse%%:*}
  rest=${cse#*:}
  mode=${rest%%:*}
  alloc=${rest#*:}
  n=$((n + 1))
  f="$tmp/cg.$c.$mode.$alloc"
  if LD_BIND_NOW=1 valgrind --tool=callgrind --callgrind-out-file="$f" \
      --toggle-collect=gb_cg_push \
      "$bench" callgrind --contender "$c" --mode "$mode" --alloc "$alloc" \
      --pushes "$pushes" >"$tmp/log" 2>&1 \
      && grep -q "verified=ok" "$tmp/log"; then
    ir=$(awk '/^summary:/ { print $2 }' "$f")
    per=$(awk -v a="$ir" -v n="$pushes" 'BEGIN { printf "%.1f", a / n }')
    if [ "$c" = bare ]; then
      chain=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null \
        | awk '/gst-bench-common.c:link_chain( |$)/ { gsub(",", "", $1)
            if ($1 + 0 > m) m = $1 + 0 } END { print m + 0 }')
      pad=$(awk -v a="$ir" -v b="${chain:-0}" -v n="$pushes" \
        'BEGIN { printf "%.1f", (a - b) / n }')
      echo "$alloc $pad" >> "$tmp/pad"
    fi
    echo "$c,$mode,$alloc,32,$pushes,$ir,$per" >> "$tmp/rows"
    [ "$smoke" = 1 ] && echo "ok $n - callgrind $c $mode $alloc: $per instructions per push"
  else
    status=1
    if [ "$smoke" = 1 ]; then
      echo "not ok $n - callgrind $c $mode $alloc"
    fi
    tail -20 "$tmp/log" >&2
    echo "callgrind run failed: $c $mode $alloc" >&2
  fi
done

# Pad machinery per allocation mode, from the bare case (if it ran).
touch "$tmp/pad" "$tmp/rows"
awk -F, 'NR == FNR { split($0, a, " "); pad[a[1]] = a[2]; next }
  { p = ($3 in pad) ? pad[$3] : ""
    e = (p != "") ? sprintf ("%.1f", $7 - p) : ""
    print $0 "," p "," e }' "$tmp/pad" "$tmp/rows" >> "$csv"
if [ "$smoke" = 0 ]; then
  echo "Instructions per gst_pad_push, 32-byte buffers (callgrind Ir, $pushes pushes)"
  printf "%-12s %-8s %-6s %10s %10s %10s\n" contender mode alloc total pad element
  awk -F, 'NR > 1 { printf "%-12s %-8s %-6s %10s %10s %10s\n", $1, $2, $3, $7, $8, $9 }' "$csv"
fi
if [ -n "$out" ]; then
  cp "$csv" "$out"
  echo "wrote $out"
fi
exit $status
