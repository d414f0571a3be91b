#!/bin/sh
# Who wakes whom, and who preempts the pushing thread: a scheduler trace of
# the upstream benchmark (perf sched tracepoints), one contender and
# downstream mode at a time.
#
#   tests/bench/gst/gst-sched-trace.sh [BUILD_DIR] [OUT_CSV] [PUSHES]
#
# For queue, tbqueue and tbqueue-ref, downstream stalled and keeping up, it
# runs
#   perf record -e sched:sched_switch -e sched:sched_wakeup -- \
#     BUILD_DIR/tests/bench/gst/gst-bench upstream --runs 1 --allocs fresh \
#       --modes MODE --rates 0 --contenders NAME --pushes PUSHES
# and counts, for the pushing thread (the process's main thread,
# "gst-bench"):
#   wakeups         wake-ups of the element's threads (copy task, src task)
#                   done by the pushing thread
#   same_cpu        ... of those, onto the CPU the pushing thread runs on
#   preempted       times the pushing thread was switched out while still
#                   runnable (prev_state=R)
#   by_own_threads  ... of those, in favour of the element's own threads
#   slept           times it was switched out to sleep (prev_state S or D)
# Needs perf (Debian: linux-perf) and permission to trace; prints a table,
# writes CSV to OUT_CSV when given.  Exit status 0 also when perf is
# missing (it says so): this is a diagnostic, not a test.
set -eu

build=${1:-build}
out=${2:-}
pushes=${3:-300000}
bench="$build/tests/bench/gst/gst-bench"
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }
if ! command -v perf >/dev/null 2>&1; then
  echo "perf not installed (Debian: linux-perf): no scheduler trace"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
csv="$tmp/out.csv"
echo "contender,mode,pushes,wakeups,same_cpu,preempted,by_own_threads,slept" > "$csv"
for mode in stalled up; do
  for c in queue tbqueue tbqueue-ref; do
    if ! perf record -q -o "$tmp/perf.data" -e sched:sched_switch \
        -e sched:sched_wakeup -- "$bench" upstream --runs 1 --allocs fresh \
        --modes "$mode" --rates 0 --contenders "$c" --pushes "$pushes" \
        --out "$tmp/files" \
        >"$tmp/log" 2>&1; then
      tail -5 "$tmp/log" >&2
      echo "perf record failed for $c $mode" >&2
      exit 1
    fi
    perf script -i "$tmp/perf.data" -F comm,pid,tid,cpu,event,trace \
        2>/dev/null \
      | awk -v c="$c" -v m="$mode" -v n="$pushes" '
        # "comm pid/tid [cpu] event: ..."; the pushing thread is the main
        # thread: tid == pid.
        { split($2, id, "/"); tid = id[2] }
        $1 == "gst-bench" && id[1] == id[2] { main = tid }
        /sched:sched_wakeup:/ && tid == main {
          woken = ""; tcpu = ""
          for (i = 1; i <= NF; i++) {
            if ($i ~ /^comm=/) woken = substr($i, 6)
            if ($i ~ /^target_cpu=/) tcpu = substr($i, 12) + 0
          }
          if (woken ~ /:(copier|src)$/) {
            wake++
            cpu = $3; gsub(/[\[\]]/, "", cpu)
            if (cpu + 0 == tcpu) same++
          }
        }
        /sched:sched_switch:/ && tid == main {
          st = ""; nc = ""
          for (i = 1; i <= NF; i++) {
            if ($i ~ /^prev_state=/) st = substr($i, 12)
            if ($i ~ /^next_comm=/) nc = substr($i, 11)
          }
          if (st == "R" || st == "R+") {
            pre++
            if (nc ~ /:(copier|src)$/) own++
          } else {
            slept++
          }
        }
        END { printf "%s,%s,%d,%d,%d,%d,%d,%d\n", c, m, n, wake, same, pre,
          own, slept }' >> "$csv"
  done
done
echo "Scheduler trace of the pushing thread (upstream benchmark, fresh buffers, $pushes timed pushes + 20000 warm-up)"
printf "%-12s %-8s %8s %9s %10s %15s %7s\n" contender mode wakeups same_cpu \
  preempted by_own_threads slept
awk -F, 'NR > 1 { printf "%-12s %-8s %8s %9s %10s %15s %7s\n", $1, $2, $4, $5, $6, $7, $8 }' "$csv"
if [ -n "$out" ]; then
  cp "$csv" "$out"
  echo "wrote $out"
fi
