#!/bin/sh
# Instructions per gst_pad_push on the upstream thread, counted by callgrind
# (deterministic: user-space instructions of the pushing thread only; no
# system calls, futex wake-ups, cache misses or time spent preempted).
#
#   tests/bench/gst/gst-callgrind.sh [--smoke] [--contenders a,b]
#                                    [BUILD_DIR] [PUSHES] [OUT_DIR]
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
# of the count.  A contender is a gst-bench name, with properties as
# NAME:key=value+key=value (e.g. tbqueue:transfer=reference).
# Writes OUT_DIR/callgrind-runs.csv (one line per case; OUT_DIR is
# $TBQ_BENCH_OUT, else BUILD_DIR/bench-data, with --smoke
# BUILD_DIR/bench-smoke), callgrind-breakdown.csv and callgrind-meta.json.
# The CSV splits each total into GStreamer's pad machinery ("pad": stream
# lock, checks, the parent's ref/unref, the call) and the element's own
# chain function ("element").  For tbqueue the chain function's inclusive
# count is read with callgrind_annotate (the largest of its entries: inlined
# header code lists it under more than one file name); the pad machinery
# measured there (total - chain) is the same for any element, so queue's
# and queue2's element part (their chain functions are not in the symbol
# table) is their total minus it.  `bare` has no parent element (no ref
# and unref of one): its chain function is link_chain.  For tbqueue,
# callgrind-breakdown.csv has the inclusive cost per push of the functions
# its chain function spends them in (the upstream buffer's unref; the
# codec's small path, gst_tbq_record_map_small: the one test for a small
# plain buffer and mapping it, and gst_tbq_record_write_small; the codec's
# plan for anything else, gst_tbq_record_plan_copy and
# gst_tbq_record_write_copy; the writer's reserve and commit); the names are
# the codec's and libtbq's of today, and change with them.
# --smoke: queue and tbqueue, one case each, few pushes, TAP lines.
set -eu

smoke=0
contenders="bare,queue,queue2,tbqueue,tbqueue-ref"
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) smoke=1; shift ;;
    --contenders) contenders=$2; shift 2 ;;
    *) break ;;
  esac
done
build=${1:-build}
pushes=${2:-20000}
if [ "$smoke" = 1 ]; then
  outdir=${3:-${TBQ_BENCH_OUT:-$build/bench-smoke}}
else
  outdir=${3:-${TBQ_BENCH_OUT:-$build/bench-data}}
fi
bench="$build/tests/bench/gst/gst-bench"
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 2; }

if [ "$smoke" = 1 ]; then
  cases="queue@up@fresh tbqueue@up@fresh"
  pushes=1000
  echo "1..2"
else
  cases=""
  for alloc in fresh pool; do
    for mode in up stalled; do
      for c in $(echo "$contenders" | tr , ' '); do
        [ "$c" = bare ] && [ "$mode" = stalled ] && continue
        cases="$cases $c@$mode@$alloc"
      done
    done
  done
fi
started=$(date +%Y-%m-%dT%H:%M:%S%z)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
csv="$tmp/out.csv"
echo "contender,mode,alloc,size,pushes,ir_total,ir_per_push,pad_ir_per_push,element_ir_per_push" > "$csv"
n=0
status=0
for cse in $cases; do
  c=${cse%%@*}
  rest=${cse#*@}
  mode=${rest%%@*}
  alloc=${rest#*@}
  n=$((n + 1))
  f="$tmp/cg.$c.$mode.$alloc"
  if LD_BIND_NOW=1 valgrind --tool=callgrind --callgrind-out-file="$f" \
      --toggle-collect=gb_cg_push \
      "$bench" callgrind --contender "$c" --mode "$mode" --alloc "$alloc" \
      --pushes "$pushes" >"$tmp/log" 2>&1 \
      && grep -q "verified=ok" "$tmp/log"; then
    ir=$(awk '/^summary:/ { print $2 }' "$f")
    per=$(awk -v a="$ir" -v n="$pushes" 'BEGIN { printf "%.1f", a / n }')
    chain=""
    case $c in
      bare) fn=link_chain ;;
      tbqueue*) fn=gst_tbqueue_chain ;;
      *) fn="" ;;
    esac
    if [ -n "$fn" ]; then
      chain=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null \
        | awk -v fn="$fn" '{ x = $0; sub(/ \[.*$/, "", x) }
            x ~ (":" fn "$") { v = $1; gsub(",", "", v)
              if (v + 0 > m) m = v + 0 } END { print m + 0 }')
      chain=$(awk -v b="$chain" -v n="$pushes" 'BEGIN { printf "%.1f", b / n }')
      if [ "$c" = tbqueue-ref ]; then
        echo "$mode:$alloc $(awk -v a="$per" -v b="$chain" 'BEGIN { printf "%.1f", a - b }')" >> "$tmp/pad"
      fi
    fi
    echo "$c,$mode,$alloc,32,$pushes,$ir,$per,$chain" >> "$tmp/rows"
    # Where tbqueue's instructions go (inclusive, per push).
    if [ "$c" = tbqueue ] || [ "$c" = tbqueue-ref ]; then
      callgrind_annotate --inclusive=yes "$f" 2>/dev/null | awk -v c="$c" \
          -v m="$mode" -v a="$alloc" -v n="$pushes" '
        { fn = $0; sub(/^ *[0-9,]+ +\([ 0-9.%]+\) +/, "", fn)
          sub(/ \[.*$/, "", fn); sub(/^.*:/, "", fn)
          v = $1; gsub(",", "", v) }
        fn ~ /^(gst_tbqueue_chain|gst_mini_object_unref|gst_buffer_pool_release_buffer|gst_tbq_record_map_small|gst_tbq_record_write_small|gst_tbq_record_plan_copy|gst_tbq_record_write_copy|tbq_writer_reserve|tbq_writer_commit|gst_memory_map|gst_memory_unmap)$/ {
          if (v + 0 > best[fn]) best[fn] = v + 0 }
        END { for (f in best) printf "%s,%s,%s,%s,%.1f\n", c, m, a, f, best[f] / n }' \
        >> "$tmp/breakdown"
    fi
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

# Pad machinery per mode and allocation, from the tbqueue-ref case (if it
# ran: total minus its chain function).
touch "$tmp/pad" "$tmp/rows"
awk -F, 'FILENAME == ARGV[1] { split($0, a, " "); pad[a[1]] = a[2]; next }
  { k = $2 ":" $3
    if ($8 != "") { e = $8 } else if (k in pad) { e = sprintf ("%.1f", $7 - pad[k]) } else { e = "" }
    p = (e != "") ? sprintf ("%.1f", $7 - e) : ""
    print $1 "," $2 "," $3 "," $4 "," $5 "," $6 "," $7 "," p "," e }' \
  "$tmp/pad" "$tmp/rows" >> "$csv"
if [ "$smoke" = 0 ]; then
  echo "Instructions per gst_pad_push, 32-byte buffers (callgrind Ir, $pushes pushes)"
  printf "%-12s %-8s %-6s %10s %10s %10s\n" contender mode alloc total pad element
  awk -F, 'NR > 1 { printf "%-12s %-8s %-6s %10s %10s %10s\n", $1, $2, $3, $7, $8, $9 }' "$csv"
fi
mkdir -p "$outdir"
cp "$csv" "$outdir/callgrind-runs.csv"
{ echo "contender,mode,alloc,function,inclusive_ir_per_push"
  sort "$tmp/breakdown" 2>/dev/null || true; } > "$outdir/callgrind-breakdown.csv"
commit=$(git -C "$(dirname "$0")" rev-parse HEAD 2>/dev/null || echo unknown)
cat > "$outdir/callgrind-meta.json" <<EOM
{
  "tool": "gst-callgrind.sh",
  "benchmark": "callgrind",
  "command": "$0 $(if [ "$smoke" = 1 ]; then echo --smoke; fi) $build $pushes $outdir",
  "smoke": $(if [ "$smoke" = 1 ]; then echo true; else echo false; fi),
  "started": "$started",
  "machine": {
    "git_commit": "$commit",
    "valgrind": "$(valgrind --version)"
  },
  "params": {"pushes": $pushes, "size": 32}
}
EOM
[ "$smoke" = 1 ] || echo "wrote $outdir/callgrind-runs.csv"
exit $status
