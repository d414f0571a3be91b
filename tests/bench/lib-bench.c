/* lib-bench: libtbq against other in-process queues, producer side first.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * USAGE
 *   lib-bench --smoke                     seconds; TAP lines, exit 1 on failure
 *   lib-bench --full --runs 5 --out DIR   the full comparison (minutes)
 *   lib-bench --callgrind NAME --size S [--records N]
 *                                         N writes through one noinline
 *                                         function, for instruction counts
 *                                         (see lib-callgrind.sh)
 *   lib-bench --list                      contenders and how each is driven
 *
 * OPTIONS
 *   --runs N            repetitions of every (size, contender) cell [smoke 1, full 5]
 *   --records N         records per pass [smoke 200000, full 10000000]
 *   --sizes 8,16,...    payload sizes, each 8, 16, 32 or 64 [all four]
 *   --contenders a,b    names from --list [every queue]
 *   --passes LIST       which passes to run: tp,lat,e2e,solo [all four]
 *   --budget BYTES      backlog capacity in payload bytes [8388608 = 8 MiB]
 *   --round-fill F      a round fills F of the capacity [0.8]
 *   --tbq-block BYTES   libtbq source and sink block size [1048576]
 *   --idle-spins N      consumer polls before sleeping [1000]
 *   --idle-sleep-ns N   ring consumers' idle sleep [10000]
 *   --warmup N          records sent and drained before the passes [50000]
 *   --pin               producer on CPU 0, the queue's other threads on CPU 1
 *   --out DIR           where NAME-runs.csv and NAME-meta.json go [the
 *                       environment variable TBQ_BENCH_OUT, else
 *                       BUILD/bench-data, with --smoke BUILD/bench-smoke]
 *   --name NAME         the files' stem [lib]
 *   --tap / --no-tap    TAP lines on stdout [on with --smoke]
 *   --inject-gap        verification self-test: after the warm-up, send one
 *                       record whose sequence number skips one; every cell
 *                       must then fail ("not ok", exit status 1)
 *
 * WHAT IS MEASURED, per contender, payload size and run (one "cell"; each
 * cell opens a fresh queue, cells are interleaved and their order rotates
 * from run to run so that every contender sees the same machine noise):
 *   tp   producer throughput, M records/s: `records` records in rounds of
 *        round-fill x capacity records; only the producer's send phase is
 *        timed (block hand-offs, backpressure waits and the final publish of
 *        each round included) while the real copier/consumer threads run;
 *        each round is drained, untimed, before the next.
 *   lat  write cost: the same rounds, with the average ns per write of
 *        every group of 1000 writes recorded; p50/p99/p999 of those group
 *        averages per run (reported as the mean over runs).
 *   e2e  sustained end-to-end throughput, M records/s delivered: `records`
 *        records in one go, from the first write to the consumer having
 *        verified the last one (backpressure applies; polled every ~20 us).
 *   solo ("alone") producer throughput of one round written into the new,
 *        empty queue before its consumer side is started (first pass of
 *        the cell): the producer's own cost without a concurrent reader of
 *        its memory.  The consumer side then starts and verifies it.
 * The consumer checks every record's sequence number (FIFO position),
 * length and every payload byte; every pass must deliver exactly what was
 * sent.  Writes refused because the queue is full are retried and counted.
 * Any verification failure prints "not ok" and the exit status is 1.
 *
 * OUTPUT: NAME-runs.csv has one line per cell and run (all raw runs);
 * NAME-meta.json the machine, compiler, commit and every parameter.  The
 * table printed at the end has medians per (size, contender) with ratios
 * to ReaderWriterQueue ("rwq") and to the best SPSC ring, each the median
 * of the per-run ratios (tools/bench-report computes the same from the
 * CSV for docs/benchmarks.md).
 */
#include "lib-bench.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_SOURCE_ROOT
#define BENCH_SOURCE_ROOT "."
#endif
#ifndef BENCH_BUILD_ROOT
#define BENCH_BUILD_ROOT "."
#endif
#ifndef BENCH_BUILDTYPE
#define BENCH_BUILDTYPE "unknown"
#endif

#define MAX_CONTENDERS 16
#define MAX_SIZES 4
#define DRAIN_TIMEOUT_NS INT64_C(120000000000)

enum
{ PASS_TP = 1, PASS_LAT = 2, PASS_E2E = 4, PASS_SOLO = 8 };

typedef struct
{
  int smoke;
  int runs;
  uint64_t records;
  unsigned sizes[MAX_SIZES];
  int nsizes;
  int passes;
  uint64_t budget;
  double round_fill;
  size_t tbq_block;
  uint32_t idle_spins;
  int64_t idle_sleep_ns;
  uint64_t warmup;
  int pin;
  const char *out;
  const char *name;
  int tap;
  int inject_gap;
  const char *callgrind;
} Options;

typedef struct
{
  int run;
  unsigned size;
  int contender;
  int order;
  int ok;
  char failure[200];
  double tp_mrps;
  double tp_send_ms;
  double tp_cpu_share;          /* producer CPU time / send wall time */
  uint64_t rounds;
  uint64_t round_records;
  double p50, p99, p999;
  uint64_t groups;
  double e2e_mrps;
  double e2e_ms;
  double solo_mrps;
  BenchCounters counters;
  double load1;
} Cell;

static const BenchContender *all[MAX_CONTENDERS];
static int nall;
static int selected[MAX_CONTENDERS];
static int nsel;
static double ticks_per_ns = 1.0;

static void
die (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  fprintf (stderr, "lib-bench: ");
  vfprintf (stderr, fmt, ap);
  fprintf (stderr, "\n");
  va_end (ap);
  exit (2);
}

/* ---- environment ---------------------------------------------------------- */

static void
read_first_line (const char *cmd, char *buf, size_t size)
{
  FILE *f = popen (cmd, "r");

  buf[0] = '\0';
  if (f == NULL)
    return;
  if (fgets (buf, (int) size, f) == NULL)
    buf[0] = '\0';
  pclose (f);
  buf[strcspn (buf, "\n")] = '\0';
}

static void
cpu_model (char *buf, size_t size)
{
  FILE *f = fopen ("/proc/cpuinfo", "r");
  char line[512];

  snprintf (buf, size, "unknown");
  if (f == NULL)
    return;
  while (fgets (line, sizeof line, f)) {
    if (strncmp (line, "model name", 10) == 0) {
      char *p = strchr (line, ':');

      if (p != NULL) {
        p++;
        while (*p == ' ')
          p++;
        p[strcspn (p, "\n")] = '\0';
        snprintf (buf, size, "%s", p);
      }
      break;
    }
  }
  fclose (f);
}

static double
load_average (void)
{
  double l = -1;
  FILE *f = fopen ("/proc/loadavg", "r");

  if (f != NULL) {
    if (fscanf (f, "%lf", &l) != 1)
      l = -1;
    fclose (f);
  }
  return l;
}

static int64_t
thread_cpu_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
calibrate_ticks (int64_t span_ns)
{
#ifdef BENCH_HAVE_TSC
  int64_t t0 = bench_now_ns (), t1;
  uint64_t k0 = bench_ticks (), k1;

  do {
    t1 = bench_now_ns ();
  } while (t1 - t0 < span_ns);
  k1 = bench_ticks ();
  ticks_per_ns = (double) (k1 - k0) / (double) (t1 - t0);
#else
  (void) span_ns;
  ticks_per_ns = 1.0;
#endif
}

static void
pin_self (int cpu)
{
  cpu_set_t set;
  long n = sysconf (_SC_NPROCESSORS_ONLN);
  int i;

  CPU_ZERO (&set);
  if (cpu < 0) {
    for (i = 0; i < n && i < CPU_SETSIZE; i++)
      CPU_SET (i, &set);
  } else {
    CPU_SET (cpu, &set);
  }
  pthread_setaffinity_np (pthread_self (), sizeof set, &set);
}

/* ---- statistics ------------------------------------------------------------ */

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values. */
static uint64_t
percentile_u64 (const uint64_t * v, uint64_t n, double p)
{
  uint64_t k = (uint64_t) ceil (p * (double) n);

  if (k < 1)
    k = 1;
  if (k > n)
    k = n;
  return v[k - 1];
}

static double
median (double *v, int n)
{
  if (n == 0)
    return NAN;
  qsort (v, (size_t) n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
mean (const double *v, int n)
{
  double s = 0;
  int i;

  if (n == 0)
    return NAN;
  for (i = 0; i < n; i++)
    s += v[i];
  return s / n;
}

/* ---- one cell ---------------------------------------------------------------- */

static void
queue_config (const Options * o, unsigned size, BenchQueueConfig * qc)
{
  memset (qc, 0, sizeof *qc);
  qc->size = size;
  qc->capacity = o->budget / size;
  qc->tbq_block_size = o->tbq_block;
  qc->idle_spins = o->idle_spins;
  qc->idle_sleep_ns = o->idle_sleep_ns;
}

static uint64_t
round_records (const Options * o, unsigned size)
{
  uint64_t r = (uint64_t) (o->round_fill * (double) (o->budget / size));

  r -= r % BENCH_GROUP;
  return r < BENCH_GROUP ? BENCH_GROUP : r;
}

/* Wait, untimed, until the consumer has verified `target` records.  Returns
 * the time it was seen, or -1 on timeout. */
static int64_t
drain (const BenchContender * bc, void *ctx, uint64_t target)
{
  int64_t start = bench_now_ns ();
  struct timespec ts = { 0, 20000 };

  for (;;) {
    uint64_t got = bc->received (ctx);
    int64_t now = bench_now_ns ();

    if (got >= target)
      return now;
    if (now - start > DRAIN_TIMEOUT_NS)
      return -1;
    nanosleep (&ts, NULL);
  }
}

static int
check_counters (const BenchContender * bc, void *ctx, uint64_t expect,
    Cell * cell, const char *when)
{
  BenchCounters c;

  bc->counters (ctx, &c);
  cell->counters = c;
  if (c.errors != 0) {
    snprintf (cell->failure, sizeof cell->failure,
        "%s: %" PRIu64 " records failed verification (first: expected seq %"
        PRIu64 ", got %" PRIu64 ")", when, c.errors, c.first_error_expected,
        c.first_error_got);
    return 0;
  }
  if (c.sent != expect || c.received != expect) {
    snprintf (cell->failure, sizeof cell->failure,
        "%s: sent %" PRIu64 ", received %" PRIu64 ", expected %" PRIu64,
        when, c.sent, c.received, expect);
    return 0;
  }
  return 1;
}

static void
run_cell (const Options * o, const BenchContender * bc, Cell * cell)
{
  BenchQueueConfig qc;
  char err[256] = "";
  void *ctx;
  uint64_t seq = 0, rr = round_records (o, cell->size), left;
  int64_t t0, t1;

  queue_config (o, cell->size, &qc);
  cell->round_records = rr;
  cell->rounds = (o->records + rr - 1) / rr;
  cell->ok = 1;
  cell->load1 = load_average ();
  cell->tp_mrps = cell->e2e_mrps = cell->p50 = cell->p99 = cell->p999 = NAN;
  cell->tp_cpu_share = NAN;

  cell->solo_mrps = NAN;
  qc.defer_start = (o->passes & PASS_SOLO) != 0;
  if (o->pin)
    pin_self (1);
  ctx = bc->open (&qc, err, sizeof err);
  if (ctx == NULL) {
    if (o->pin)
      pin_self (-1);
    cell->ok = 0;
    snprintf (cell->failure, sizeof cell->failure, "open: %s", err);
    return;
  }
  if (o->passes & PASS_SOLO) {
    /* Producer alone: one round into the empty queue before its consumer
     * side exists (the first writes of this queue), then start it. */
    if (o->pin)
      pin_self (0);
    t0 = bench_now_ns ();
    bc->send (ctx, seq, rr, NULL);
    t1 = bench_now_ns ();
    seq += rr;
    cell->solo_mrps = (double) rr / ((double) (t1 - t0) / 1e9) / 1e6;
    if (o->pin)
      pin_self (1);
    bc->start (ctx);
    if (drain (bc, ctx, seq) < 0)
      goto timeout;
  }
  if (o->pin)
    pin_self (0);

  /* Warm-up: code, caches, the consumer's first wake-ups. */
  if (o->warmup > 0) {
    bc->send (ctx, seq, o->warmup, NULL);
    seq += o->warmup;
    if (drain (bc, ctx, seq) < 0)
      goto timeout;
  }

  /* Verification self-test: one record with the next sequence number
   * skipped; every consumer must report it. */
  if (o->inject_gap) {
    bc->send (ctx, seq + 1, 1, NULL);
    seq++;
    if (drain (bc, ctx, seq) < 0)
      goto timeout;
    if (!check_counters (bc, ctx, seq, cell, "injected gap"))
      goto fail;
  }

  if (o->passes & PASS_TP) {
    int64_t sum = 0, cpu = 0;

    for (left = o->records; left > 0;) {
      uint64_t n = left < rr ? left : rr;
      int64_t c0 = thread_cpu_ns (), c1;

      t0 = bench_now_ns ();
      bc->send (ctx, seq, n, NULL);
      t1 = bench_now_ns ();
      c1 = thread_cpu_ns ();
      sum += t1 - t0;
      cpu += c1 - c0;
      seq += n;
      left -= n;
      if (drain (bc, ctx, seq) < 0)
        goto timeout;
    }
    cell->tp_send_ms = (double) sum / 1e6;
    cell->tp_cpu_share = sum > 0 ? (double) cpu / (double) sum : NAN;
    cell->tp_mrps = (double) o->records / ((double) sum / 1e9) / 1e6;
    if (!check_counters (bc, ctx, seq, cell, "throughput pass"))
      goto fail;
  }

  if (o->passes & PASS_LAT) {
    uint64_t cap = o->records / BENCH_GROUP + cell->rounds + 1;
    uint64_t *ticks = malloc (cap * sizeof *ticks);
    uint64_t ng = 0, i;

    if (ticks == NULL)
      die ("out of memory");
    for (left = o->records; left > 0;) {
      uint64_t n = left < rr ? left : rr;

      bc->send (ctx, seq, n, ticks + ng);
      ng += n / BENCH_GROUP;
      seq += n;
      left -= n;
      if (drain (bc, ctx, seq) < 0) {
        free (ticks);
        goto timeout;
      }
    }
    cell->groups = ng;
    if (ng > 0) {
      qsort (ticks, ng, sizeof *ticks, cmp_u64);
      /* Ticks per group -> ns per write. */
      cell->p50 = (double) percentile_u64 (ticks, ng, 0.50)
          / ticks_per_ns / BENCH_GROUP;
      cell->p99 = (double) percentile_u64 (ticks, ng, 0.99)
          / ticks_per_ns / BENCH_GROUP;
      cell->p999 = (double) percentile_u64 (ticks, ng, 0.999)
          / ticks_per_ns / BENCH_GROUP;
    }
    (void) i;
    free (ticks);
    if (!check_counters (bc, ctx, seq, cell, "write-cost pass"))
      goto fail;
  }

  if (o->passes & PASS_E2E) {
    t0 = bench_now_ns ();
    bc->send (ctx, seq, o->records, NULL);
    seq += o->records;
    t1 = drain (bc, ctx, seq);
    if (t1 < 0)
      goto timeout;
    cell->e2e_ms = (double) (t1 - t0) / 1e6;
    cell->e2e_mrps = (double) o->records / ((double) (t1 - t0) / 1e9) / 1e6;
    if (!check_counters (bc, ctx, seq, cell, "end-to-end pass"))
      goto fail;
  }

  if (!(o->passes & (PASS_TP | PASS_LAT | PASS_E2E))
      && !check_counters (bc, ctx, seq, cell, "warm-up"))
    goto fail;

  bc->close (ctx);
  if (o->pin)
    pin_self (-1);
  return;

timeout:
  {
    BenchCounters c;

    bc->counters (ctx, &c);
    cell->counters = c;
    cell->ok = 0;
    snprintf (cell->failure, sizeof cell->failure,
        "consumer stuck: %" PRIu64 " of %" PRIu64 " records after 120 s "
        "(errors %" PRIu64 ")", c.received, seq, c.errors);
    /* The queue may be wedged: do not wait on it again. */
    return;
  }
fail:
  cell->ok = 0;
  bc->close (ctx);
  if (o->pin)
    pin_self (-1);
}

/* ---- output ------------------------------------------------------------------ */

static void
json_string (FILE * f, const char *s)
{
  fputc ('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf (f, "\\%c", *s);
    else if ((unsigned char) *s < 0x20)
      fprintf (f, "\\u%04x", *s);
    else
      fputc (*s, f);
  }
  fputc ('"', f);
}

typedef struct
{
  char commit[64];
  int dirty;
  char cpu[256];
  char kernel[256];
  char started[64];
  char finished[64];
  double load_start, load_end;
  long cpus;
} Env;

static void
iso_now (char *buf, size_t size)
{
  time_t t = time (NULL);
  struct tm tm;

  localtime_r (&t, &tm);
  strftime (buf, size, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

static void
env_collect (Env * e)
{
  char buf[512];
  struct utsname u;
  const char *c = getenv ("BENCH_GIT_COMMIT");

  memset (e, 0, sizeof *e);
  if (c != NULL) {
    snprintf (e->commit, sizeof e->commit, "%s", c);
  } else {
    read_first_line ("git -C '" BENCH_SOURCE_ROOT
        "' rev-parse HEAD 2>/dev/null", e->commit, sizeof e->commit);
    read_first_line ("git -C '" BENCH_SOURCE_ROOT
        "' status --porcelain --untracked-files=no -- lib tests/bench "
        "2>/dev/null | head -1", buf, sizeof buf);
    e->dirty = buf[0] != '\0';
  }
  if (e->commit[0] == '\0')
    snprintf (e->commit, sizeof e->commit, "unknown");
  cpu_model (e->cpu, sizeof e->cpu);
  if (uname (&u) == 0)
    snprintf (e->kernel, sizeof e->kernel, "%s %s %s", u.sysname, u.release,
        u.machine);
  e->cpus = sysconf (_SC_NPROCESSORS_ONLN);
  iso_now (e->started, sizeof e->started);
  e->load_start = load_average ();
}

static const char *
passes_string (int p, char *buf, size_t size)
{
  static const char *names[] = { "tp", "lat", "e2e", "solo" };
  size_t len = 0;
  int i;

  buf[0] = '\0';
  for (i = 0; i < 4; i++)
    if (p & (1 << i))
      len += (size_t) snprintf (buf + len, len < size ? size - len : 0, "%s%s",
          len ? "," : "", names[i]);
  return buf;
}

static void
write_meta (const Options * o, const Env * e, const char *path, int ok)
{
  FILE *f = fopen (path, "w");
  char pb[32];
  int i, k;

  if (f == NULL)
    die ("cannot write %s: %s", path, strerror (errno));
  fprintf (f, "{\n  \"tool\": \"lib-bench\",\n  \"format\": 1,\n");
  fprintf (f, "  \"started\": \"%s\",\n  \"finished\": \"%s\",\n",
      e->started, e->finished);
  fprintf (f, "  \"git_commit\": \"%s\",\n"
      "  \"git_dirty_lib_or_bench\": %s,\n", e->commit,
      e->dirty ? "true" : "false");
  fprintf (f, "  \"cpu_model\": ");
  json_string (f, e->cpu);
  fprintf (f, ",\n  \"cpus_online\": %ld,\n  \"kernel\": ", e->cpus);
  json_string (f, e->kernel);
  fprintf (f, ",\n  \"compiler_c\": ");
  json_string (f, "gcc " __VERSION__);
  fprintf (f, ",\n  \"compiler_cpp\": ");
  json_string (f, bench_cpp_compiler ());
  fprintf (f, ",\n  \"buildtype\": \"%s\",\n", BENCH_BUILDTYPE);
  fprintf (f, "  \"load_average_1min\": {\"start\": %.2f, \"end\": %.2f},\n",
      e->load_start, e->load_end);
  fprintf (f, "  \"tsc_ticks_per_ns\": %.6f,\n", ticks_per_ns);
  fprintf (f, "  \"verification\": \"%s\",\n", ok ? "passed" : "FAILED");
  fprintf (f, "  \"params\": {\n");
  fprintf (f, "    \"runs\": %d,\n    \"records_per_pass\": %" PRIu64 ",\n",
      o->runs, o->records);
  fprintf (f, "    \"sizes\": [");
  for (i = 0; i < o->nsizes; i++)
    fprintf (f, "%s%u", i ? ", " : "", o->sizes[i]);
  fprintf (f, "],\n    \"passes\": \"%s\",\n",
      passes_string (o->passes, pb, sizeof pb));
  fprintf (f, "    \"capacity_payload_bytes\": %" PRIu64 ",\n", o->budget);
  fprintf (f, "    \"capacity_records\": {");
  for (i = 0; i < o->nsizes; i++)
    fprintf (f, "%s\"%u\": %" PRIu64, i ? ", " : "", o->sizes[i],
        o->budget / o->sizes[i]);
  fprintf (f, "},\n    \"round_fill\": %.3f,\n    \"round_records\": {",
      o->round_fill);
  for (i = 0; i < o->nsizes; i++)
    fprintf (f, "%s\"%u\": %" PRIu64, i ? ", " : "", o->sizes[i],
        round_records (o, o->sizes[i]));
  fprintf (f, "},\n    \"write_group\": %u,\n", BENCH_GROUP);
  fprintf (f, "    \"warmup_records\": %" PRIu64 ",\n", o->warmup);
  fprintf (f, "    \"tbq_block_size\": %zu,\n", o->tbq_block);
  fprintf (f, "    \"idle_spins\": %u,\n    \"idle_sleep_ns\": %" PRId64 ",\n",
      o->idle_spins, o->idle_sleep_ns);
  fprintf (f, "    \"pinned\": %s\n  },\n", o->pin ? "true" : "false");
  fprintf (f, "  \"contenders\": [\n");
  for (k = 0; k < nsel; k++) {
    const BenchContender *c = all[selected[k]];

    fprintf (f, "    {\"name\": \"%s\", \"label\": ", c->name);
    json_string (f, c->label);
    fprintf (f, ", \"threads\": %d, \"spsc\": %s, \"notes\": ", c->threads,
        c->spsc ? "true" : "false");
    json_string (f, c->notes);
    fprintf (f, "}%s\n", k + 1 < nsel ? "," : "");
  }
  fprintf (f, "  ]\n}\n");
  fclose (f);
}

static void
write_runs_csv (const char *path, const Cell * cells, int ncells)
{
  FILE *f = fopen (path, "w");
  int i;

  if (f == NULL)
    die ("cannot write %s: %s", path, strerror (errno));
  fprintf (f,
      "run,size,contender,order,ok,tp_mrps,tp_send_ms,tp_cpu_share,rounds,"
      "round_records,p50_ns,p99_ns,p999_ns,groups,e2e_mrps,e2e_ms,solo_mrps,sent,"
      "verified,errors,failed_attempts,pressured,pressure_waits,handoffs,"
      "copier_wakeups,consumer_sleeps,load1\n");
  for (i = 0; i < ncells; i++) {
    const Cell *c = &cells[i];
    const BenchCounters *k = &c->counters;

    fprintf (f, "%d,%u,%s,%d,%d,%.3f,%.3f,%.3f,%" PRIu64 ",%" PRIu64
        ",%.4f,%.4f,%.4f,%" PRIu64 ",%.3f,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%"
        PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
        ",%" PRIu64 ",%.2f\n", c->run, c->size, all[c->contender]->name,
        c->order, c->ok, c->tp_mrps, c->tp_send_ms, c->tp_cpu_share, c->rounds,
        c->round_records, c->p50, c->p99, c->p999, c->groups, c->e2e_mrps,
        c->e2e_ms, c->solo_mrps, k->sent, k->received, k->errors,
        k->failed_attempts, k->pressured, k->pressure_waits, k->handoffs,
        k->copier_wakeups, k->consumer_sleeps, c->load1);
  }
  fclose (f);
}

typedef struct
{
  unsigned size;
  int contender;
  int runs;
  double tp_med, tp_mean, tp_min, tp_max;
  double tp_ratio_rwq, tp_ratio_best;
  const char *best_name;
  double e2e_med, e2e_mean, e2e_min, e2e_max;
  double e2e_ratio_rwq, e2e_ratio_best;
  double p50, p99, p999;        /* mean over runs */
  double solo_med, solo_ratio_rwq;
  double cpu_share;             /* median producer CPU share in tp */
  uint64_t failed_attempts, pressure_waits;
} Summary;

static const Cell *
find_cell (const Cell * cells, int ncells, int run, unsigned size, int cont)
{
  int i;

  for (i = 0; i < ncells; i++)
    if (cells[i].run == run && cells[i].size == size
        && cells[i].contender == cont)
      return &cells[i];
  return NULL;
}

static int
find_contender (const char *name)
{
  int i;

  for (i = 0; i < nall; i++)
    if (strcmp (all[i]->name, name) == 0)
      return i;
  return -1;
}

/* 0: producer throughput, 1: end-to-end, 2: producer alone. */
static double
metric (const Cell * c, int which)
{
  return which == 0 ? c->tp_mrps : which == 1 ? c->e2e_mrps : c->solo_mrps;
}

/* Median over runs of this cell's value / the reference's in the same run.
 * ref < 0: the best SPSC ring of that run. */
static double
ratio_median (const Options * o, const Cell * cells, int ncells,
    unsigned size, int cont, int ref, int e2e)
{
  double r[256];
  int n = 0, run, k;

  for (run = 0; run < o->runs && n < 256; run++) {
    const Cell *a = find_cell (cells, ncells, run, size, cont);
    double va, vb = NAN;

    if (a == NULL || !a->ok)
      continue;
    va = metric (a, e2e);
    if (ref >= 0) {
      const Cell *b = find_cell (cells, ncells, run, size, ref);

      if (b != NULL && b->ok)
        vb = metric (b, e2e);
    } else {
      for (k = 0; k < nsel; k++) {
        const Cell *b;
        double v;

        if (!all[selected[k]]->spsc)
          continue;
        b = find_cell (cells, ncells, run, size, selected[k]);
        if (b == NULL || !b->ok)
          continue;
        v = metric (b, e2e);
        if (isnan (vb) || v > vb)
          vb = v;
      }
    }
    if (!isnan (va) && !isnan (vb) && vb > 0)
      r[n++] = va / vb;
  }
  return median (r, n);
}

static void
summarize (const Options * o, const Cell * cells, int ncells, Summary * out,
    int *nout)
{
  int s, k, run, n = 0;
  int rwq = find_contender ("rwq");

  for (s = 0; s < o->nsizes; s++) {
    /* The best SPSC ring at this size, by median producer throughput. */
    const char *best = NULL;
    double best_v = -1;

    for (k = 0; k < nsel; k++) {
      double v[256];
      int m = 0;

      if (!all[selected[k]]->spsc)
        continue;
      for (run = 0; run < o->runs; run++) {
        const Cell *c = find_cell (cells, ncells, run, o->sizes[s],
            selected[k]);

        if (c && c->ok && !isnan (c->tp_mrps))
          v[m++] = c->tp_mrps;
      }
      if (m > 0 && median (v, m) > best_v) {
        best_v = median (v, m);
        best = all[selected[k]]->name;
      }
    }
    for (k = 0; k < nsel; k++) {
      Summary *sm = &out[n++];
      double tp[256], e2e[256], p50[256], p99[256], p999[256], solo[256];
      double cs[256];
      int m = 0, me = 0, ml = 0, ms = 0, mc = 0;

      memset (sm, 0, sizeof *sm);
      sm->size = o->sizes[s];
      sm->contender = selected[k];
      sm->best_name = best;
      for (run = 0; run < o->runs; run++) {
        const Cell *c = find_cell (cells, ncells, run, o->sizes[s],
            selected[k]);

        if (c == NULL || !c->ok)
          continue;
        sm->runs++;
        sm->failed_attempts += c->counters.failed_attempts;
        sm->pressure_waits += c->counters.pressure_waits;
        if (!isnan (c->tp_mrps))
          tp[m++] = c->tp_mrps;
        if (!isnan (c->e2e_mrps))
          e2e[me++] = c->e2e_mrps;
        if (!isnan (c->solo_mrps))
          solo[ms++] = c->solo_mrps;
        if (!isnan (c->tp_cpu_share))
          cs[mc++] = c->tp_cpu_share;
        if (!isnan (c->p50)) {
          p50[ml] = c->p50;
          p99[ml] = c->p99;
          p999[ml++] = c->p999;
        }
      }
      sm->tp_mean = mean (tp, m);
      sm->tp_med = median (tp, m);
      sm->tp_min = m ? tp[0] : NAN;
      sm->tp_max = m ? tp[m - 1] : NAN;
      sm->e2e_mean = mean (e2e, me);
      sm->e2e_med = median (e2e, me);
      sm->e2e_min = me ? e2e[0] : NAN;
      sm->e2e_max = me ? e2e[me - 1] : NAN;
      sm->p50 = mean (p50, ml);
      sm->p99 = mean (p99, ml);
      sm->p999 = mean (p999, ml);
      sm->solo_med = median (solo, ms);
      sm->cpu_share = median (cs, mc);
      sm->solo_ratio_rwq = rwq >= 0 ? ratio_median (o, cells, ncells,
          o->sizes[s], selected[k], rwq, 2) : NAN;
      sm->tp_ratio_rwq = rwq >= 0 ? ratio_median (o, cells, ncells,
          o->sizes[s], selected[k], rwq, 0) : NAN;
      sm->tp_ratio_best = ratio_median (o, cells, ncells, o->sizes[s],
          selected[k], -1, 0);
      sm->e2e_ratio_rwq = rwq >= 0 ? ratio_median (o, cells, ncells,
          o->sizes[s], selected[k], rwq, 1) : NAN;
      sm->e2e_ratio_best = ratio_median (o, cells, ncells, o->sizes[s],
          selected[k], -1, 1);
    }
  }
  *nout = n;
}

static void
print_table (FILE * f, const Options * o, const Env * e, const Summary * sm,
    int n)
{
  int i;
  char pb[32];

  fprintf (f, "lib-bench: %s, %ld CPUs, %s; commit %.12s%s; %d run(s) x %"
      PRIu64 " records per pass; passes %s; capacity %" PRIu64
      " payload bytes; %s\n", e->cpu, e->cpus, BENCH_BUILDTYPE, e->commit,
      e->dirty ? " (dirty)" : "", o->runs, o->records,
      passes_string (o->passes, pb, sizeof pb), o->budget,
      o->pin ? "pinned (producer CPU 0, other threads CPU 1)" : "unpinned");
  fprintf (f, "producer M rec/s: median [min-max] over runs; ratios: median "
      "of per-run ratios; write cost: ns per write, group-average "
      "percentiles, mean over runs\n");
  fprintf (f, "%-5s %-16s %9s %-13s %6s %6s %4s %8s %6s %7s %7s %7s %8s "
      "%6s %3s\n", "size", "contender", "producer", " [min-max]", "x rwq",
      "x best", "cpu%", "e2e", "x rwq", "p50", "p99", "p999", "alone",
      "x rwq", "thr");
  for (i = 0; i < n; i++) {
    const Summary *s = &sm[i];
    char range[40];

    snprintf (range, sizeof range, "[%.0f-%.0f]", s->tp_min, s->tp_max);
    fprintf (f, "%-5u %-16s %9.1f %-13s %6.2f %6.2f %4.0f %8.1f %6.2f %7.3f "
        "%7.3f %7.3f %8.1f %6.2f %3d\n", s->size, all[s->contender]->name,
        s->tp_med, range, s->tp_ratio_rwq, s->tp_ratio_best,
        100 * s->cpu_share, s->e2e_med,
        s->e2e_ratio_rwq, s->p50, s->p99, s->p999, s->solo_med,
        s->solo_ratio_rwq, all[s->contender]->threads);
  }
  fprintf (f, "(cpu%% = producer's CPU time / wall time of its timed sends, "
      "median; alone = producer throughput of one round written into the new "
      "queue before its consumer side starts; thr = threads per queue, "
      "producer included; this machine has %ld CPUs)\n", e->cpus);
}

/* The same summary as Markdown tables (for docs). */
static int
run_callgrind (const Options * o)
{
  int k = find_contender (o->callgrind);
  const BenchContender *bc;
  BenchQueueConfig qc;
  char err[256] = "", sym[64];
  void *ctx;
  Cell cell;
  size_t i;

  if (k < 0)
    die ("unknown contender '%s' (see --list)", o->callgrind);
  if (o->nsizes != 1)
    die ("--callgrind needs exactly one --size");
  bc = all[k];
  queue_config (o, o->sizes[0], &qc);
  qc.defer_start = 1;
  if (o->records >= qc.capacity)
    die ("--records %" PRIu64 " must stay below the capacity (%" PRIu64
        " records): nothing is consumed during the measured call",
        o->records, qc.capacity);
  ctx = bc->open (&qc, err, sizeof err);
  if (ctx == NULL)
    die ("open %s: %s", bc->name, err);
  /* The measured call: its consumer side has not started, so the count is
   * the producer's alone and repeatable. */
  bc->cg_send (ctx, 0, o->records);
  bc->start (ctx);
  memset (&cell, 0, sizeof cell);
  if (drain (bc, ctx, o->records) < 0)
    die ("%s: consumer stuck", bc->name);
  snprintf (sym, sizeof sym, "bench_cg_%s", bc->name);
  for (i = 0; sym[i]; i++)
    if (sym[i] == '-')
      sym[i] = '_';
  if (!check_counters (bc, ctx, o->records, &cell, "callgrind")) {
    printf ("not ok - callgrind %uB %s: %s\n", o->sizes[0], bc->name,
        cell.failure);
    return 1;
  }
  bc->close (ctx);
  printf ("callgrind contender=%s size=%u records=%" PRIu64 " function=%s "
      "verified=ok\n", bc->name, o->sizes[0], o->records, sym);
  return 0;
}

/* ---- main ------------------------------------------------------------------ */

/* --out, else $TBQ_BENCH_OUT, else the build tree's bench-data/
 * (bench-smoke/ with --smoke). */
static const char *
out_dir (const Options * o)
{
  const char *env = getenv ("TBQ_BENCH_OUT");

  if (o->out)
    return o->out;
  if (env && *env)
    return env;
  return o->smoke ? BENCH_BUILD_ROOT "/bench-smoke" :
      BENCH_BUILD_ROOT "/bench-data";
}

static void
usage (FILE * f)
{
  fprintf (f, "usage: lib-bench [--smoke | --full] [--runs N] [--records N] "
      "[--sizes 8,16,32,64]\n"
      "                 [--contenders a,b] [--passes tp,lat,e2e] "
      "[--budget BYTES] [--round-fill F]\n"
      "                 [--tbq-block BYTES] [--idle-spins N] "
      "[--idle-sleep-ns N] [--warmup N]\n"
      "                 [--pin] [--out DIR] [--name NAME] [--tap | --no-tap]\n"
      "       lib-bench --callgrind NAME --size S [--records N]\n"
      "       lib-bench --list\n"
      "See the comment at the top of tests/bench/lib-bench.c.\n");
}

static uint64_t
parse_u64 (const char *opt, const char *s)
{
  char *end;
  unsigned long long v;

  errno = 0;
  v = strtoull (s, &end, 10);
  if (errno || *end || end == s)
    die ("%s: not a number: '%s'", opt, s);
  return v;
}

static void
parse_list (const char *s, char out[][32], int max, int *n)
{
  const char *p = s;

  *n = 0;
  while (*p && *n < max) {
    size_t len = strcspn (p, ",");

    if (len > 0 && len < 32) {
      memcpy (out[*n], p, len);
      out[*n][len] = '\0';
      (*n)++;
    }
    p += len;
    if (*p == ',')
      p++;
  }
}

int
main (int argc, char **argv)
{
  Options o;
  Env env;
  char names[MAX_CONTENDERS][32];
  int nnames = -1, i, k, run, s, ncells = 0, failures = 0, list = 0, full = 0;
  int runs_set = 0, records_set = 0, tapn = 0;
  size_t nc, ncpp;
  const BenchContender *cc = bench_c_contenders (&nc);
  const BenchContender *cpp = bench_cpp_contenders (&ncpp);
  Cell *cells;
  Summary *sm;
  int nsm;

  for (i = 0; i < (int) nc && nall < MAX_CONTENDERS; i++)
    all[nall++] = &cc[i];
  for (i = 0; i < (int) ncpp && nall < MAX_CONTENDERS; i++)
    all[nall++] = &cpp[i];

  memset (&o, 0, sizeof o);
  o.runs = 1;
  o.records = 200000;
  o.passes = PASS_TP | PASS_LAT | PASS_E2E | PASS_SOLO;
  o.budget = 8u << 20;
  o.round_fill = 0.8;
  o.tbq_block = 1u << 20;
  o.idle_spins = 1000;
  o.idle_sleep_ns = 10000;
  o.warmup = 50000;
  o.sizes[0] = 8;
  o.sizes[1] = 16;
  o.sizes[2] = 32;
  o.sizes[3] = 64;
  o.nsizes = 4;
  o.tap = -1;
  o.name = "lib";

  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;

#define NEED_ARG() do { if (v == NULL) die ("%s needs a value", a); i++; } while (0)
    if (strcmp (a, "--smoke") == 0) {
      o.smoke = 1;
    } else if (strcmp (a, "--full") == 0) {
      full = 1;
    } else if (strcmp (a, "--runs") == 0) {
      NEED_ARG ();
      o.runs = (int) parse_u64 (a, v);
      runs_set = 1;
    } else if (strcmp (a, "--records") == 0) {
      NEED_ARG ();
      o.records = parse_u64 (a, v);
      records_set = 1;
    } else if (strcmp (a, "--sizes") == 0 || strcmp (a, "--size") == 0) {
      char l[MAX_SIZES][32];
      int n, j;

      NEED_ARG ();
      parse_list (v, l, MAX_SIZES, &n);
      for (j = 0; j < n; j++) {
        o.sizes[j] = (unsigned) parse_u64 (a, l[j]);
        if (o.sizes[j] != 8 && o.sizes[j] != 16 && o.sizes[j] != 32
            && o.sizes[j] != 64)
          die ("%s: sizes are 8, 16, 32 or 64", a);
      }
      o.nsizes = n;
    } else if (strcmp (a, "--contenders") == 0) {
      NEED_ARG ();
      parse_list (v, names, MAX_CONTENDERS, &nnames);
    } else if (strcmp (a, "--passes") == 0) {
      char l[4][32];
      int n, j;

      NEED_ARG ();
      parse_list (v, l, 4, &n);
      o.passes = 0;
      for (j = 0; j < n; j++) {
        if (strcmp (l[j], "tp") == 0)
          o.passes |= PASS_TP;
        else if (strcmp (l[j], "lat") == 0)
          o.passes |= PASS_LAT;
        else if (strcmp (l[j], "e2e") == 0)
          o.passes |= PASS_E2E;
        else if (strcmp (l[j], "solo") == 0)
          o.passes |= PASS_SOLO;
        else
          die ("--passes: tp, lat, e2e or solo");
      }
    } else if (strcmp (a, "--budget") == 0) {
      NEED_ARG ();
      o.budget = parse_u64 (a, v);
    } else if (strcmp (a, "--round-fill") == 0) {
      NEED_ARG ();
      o.round_fill = atof (v);
      if (o.round_fill <= 0 || o.round_fill > 1)
        die ("--round-fill: 0 < F <= 1");
    } else if (strcmp (a, "--tbq-block") == 0) {
      NEED_ARG ();
      o.tbq_block = (size_t) parse_u64 (a, v);
    } else if (strcmp (a, "--idle-spins") == 0) {
      NEED_ARG ();
      o.idle_spins = (uint32_t) parse_u64 (a, v);
    } else if (strcmp (a, "--idle-sleep-ns") == 0) {
      NEED_ARG ();
      o.idle_sleep_ns = (int64_t) parse_u64 (a, v);
    } else if (strcmp (a, "--warmup") == 0) {
      NEED_ARG ();
      o.warmup = parse_u64 (a, v);
    } else if (strcmp (a, "--pin") == 0) {
      o.pin = 1;
    } else if (strcmp (a, "--out") == 0) {
      NEED_ARG ();
      o.out = v;
    } else if (strcmp (a, "--name") == 0) {
      NEED_ARG ();
      o.name = v;
    } else if (strcmp (a, "--tap") == 0) {
      o.tap = 1;
    } else if (strcmp (a, "--no-tap") == 0) {
      o.tap = 0;
    } else if (strcmp (a, "--callgrind") == 0) {
      NEED_ARG ();
      o.callgrind = v;
    } else if (strcmp (a, "--inject-gap") == 0) {
      o.inject_gap = 1;
    } else if (strcmp (a, "--list") == 0) {
      list = 1;
    } else if (strcmp (a, "--help") == 0 || strcmp (a, "-h") == 0) {
      usage (stdout);
      return 0;
    } else {
      usage (stderr);
      return 2;
    }
#undef NEED_ARG
  }

  if (list) {
    for (k = 0; k < nall; k++)
      printf ("%-16s %d threads%s%s\n    %s\n    %s\n", all[k]->name,
          all[k]->threads, all[k]->spsc ? ", SPSC ring" : "",
          all[k]->reference ? ", reference (only when asked for)" : "",
          all[k]->label, all[k]->notes);
    return 0;
  }
  if (o.callgrind) {
    if (!records_set)
      o.records = 100000;
    return run_callgrind (&o);
  }
  if (full) {
    if (!runs_set)
      o.runs = 5;
    if (!records_set)
      o.records = 10000000;
  } else if (o.smoke) {
    if (!records_set)
      o.records = 200000;
    o.warmup = o.warmup > 20000 ? 20000 : o.warmup;
  }
  if (o.tap < 0)
    o.tap = o.smoke;
  if (o.runs < 1 || o.runs > 256)
    die ("--runs: 1..256");
  if (o.records == 0)
    die ("--records must be positive");
  for (s = 0; s < o.nsizes; s++)
    if (o.budget / o.sizes[s] < 2 * BENCH_GROUP)
      die ("--budget too small");

  if (nnames < 0) {
    for (k = 0; k < nall; k++)
      if (!all[k]->reference)
        selected[nsel++] = k;
  } else {
    for (i = 0; i < nnames; i++) {
      k = find_contender (names[i]);
      if (k < 0)
        die ("unknown contender '%s' (see --list)", names[i]);
      selected[nsel++] = k;
    }
  }
  if (nsel == 0)
    die ("no contender selected");

  env_collect (&env);
  calibrate_ticks (o.smoke ? 20000000 : 200000000);

  cells = calloc ((size_t) o.runs * (size_t) o.nsizes * (size_t) nsel,
      sizeof *cells);
  sm = calloc ((size_t) o.nsizes * (size_t) nsel, sizeof *sm);
  if (cells == NULL || sm == NULL)
    die ("out of memory");

  fprintf (stderr, "lib-bench: %d run(s), %d size(s), %d contender(s), %"
      PRIu64 " records per pass\n", o.runs, o.nsizes, nsel, o.records);

  /* Interleave: every run visits every size and contender; the contender
   * order rotates with the run and the size. */
  for (run = 0; run < o.runs; run++) {
    for (s = 0; s < o.nsizes; s++) {
      for (k = 0; k < nsel; k++) {
        int idx = (k + run + s) % nsel;
        Cell *c = &cells[ncells++];

        memset (c, 0, sizeof *c);
        c->run = run;
        c->size = o.sizes[s];
        c->contender = selected[idx];
        c->order = k;
        run_cell (&o, all[c->contender], c);
        if (c->ok)
          fprintf (stderr, "  run %d %2uB %-16s tp %8.1f M/s  e2e %7.1f M/s"
              "  p50 %.3f p99 %.3f p999 %.3f ns  alone %7.1f M/s\n", run,
              c->size, all[c->contender]->name, c->tp_mrps, c->e2e_mrps,
              c->p50, c->p99, c->p999, c->solo_mrps);
        else
          fprintf (stderr, "  run %d %2uB %-16s FAILED: %s\n", run, c->size,
              all[c->contender]->name, c->failure);
        if (!c->ok)
          failures++;
        if (!c->ok && strncmp (c->failure, "consumer stuck", 14) == 0)
          goto done;
      }
    }
  }
done:
  iso_now (env.finished, sizeof env.finished);
  env.load_end = load_average ();
  summarize (&o, cells, ncells, sm, &nsm);

  if (o.tap) {
    static const struct
    {
      int pass;
      const char *name;
    } metrics[] = {
      {PASS_TP, "lib-throughput"}, {PASS_E2E, "lib-e2e"},
      {PASS_LAT, "lib-write-cost"},
    };
    int m, plan = 0;

    for (m = 0; m < 3; m++)
      if (o.passes & metrics[m].pass)
        plan += o.nsizes * nsel;
    printf ("1..%d\n", plan);
    for (m = 0; m < 3; m++) {
      if (!(o.passes & metrics[m].pass))
        continue;
      for (s = 0; s < o.nsizes; s++) {
        for (k = 0; k < nsel; k++) {
          const char *why = NULL;
          const Summary *x = NULL;

          for (run = 0; run < o.runs; run++) {
            const Cell *c = find_cell (cells, ncells, run, o.sizes[s],
                selected[k]);

            if (c == NULL)
              why = "not run";
            else if (!c->ok)
              why = c->failure;
            if (why)
              break;
          }
          for (i = 0; i < nsm; i++)
            if (sm[i].size == o.sizes[s] && sm[i].contender == selected[k])
              x = &sm[i];
          if (why) {
            printf ("not ok %d - %s %uB %s # %s\n", ++tapn, metrics[m].name,
                o.sizes[s], all[selected[k]]->name, why);
          } else if (metrics[m].pass == PASS_TP) {
            printf ("ok %d - %s %uB %s # %.1f M/s, %.2fx rwq\n", ++tapn,
                metrics[m].name, o.sizes[s], all[selected[k]]->name,
                x->tp_med, x->tp_ratio_rwq);
          } else if (metrics[m].pass == PASS_E2E) {
            printf ("ok %d - %s %uB %s # %.1f M/s\n", ++tapn,
                metrics[m].name, o.sizes[s], all[selected[k]]->name,
                x->e2e_med);
          } else {
            printf ("ok %d - %s %uB %s # p50 %.3f p99 %.3f p999 %.3f ns\n",
                ++tapn, metrics[m].name, o.sizes[s], all[selected[k]]->name,
                x->p50, x->p99, x->p999);
          }
        }
      }
    }
  }
  fflush (stdout);
  print_table (o.tap ? stderr : stdout, &o, &env, sm, nsm);

  {
    char path[4096];
    const char *dir = out_dir (&o);

    if (mkdir (dir, 0755) != 0 && errno != EEXIST)
      die ("cannot create %s: %s", dir, strerror (errno));
    snprintf (path, sizeof path, "%s/%s-runs.csv", dir, o.name);
    write_runs_csv (path, cells, ncells);
    snprintf (path, sizeof path, "%s/%s-meta.json", dir, o.name);
    write_meta (&o, &env, path, failures == 0);
  }
  if (failures)
    fprintf (stderr, "lib-bench: %d cell(s) FAILED verification\n", failures);
  free (cells);
  free (sm);
  return failures ? 1 : 0;
}
