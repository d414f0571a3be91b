/* spill-lib-bench: libtbq's spill layer next to the disk, in one process.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * USAGE
 *   spill-lib-bench [--runs 5] [--mib 512] [--size BYTES] [--dir D] [--cold]
 *                   [--budget BYTES] [--smoke]
 *
 * The spill's own write and read-back throughput, without an element, a
 * producer slower than the disk or a consumer that does work per record:
 *
 *   write  a writer reserves and fills `--size`-byte records (1228800, a
 *          640x480 RGBx frame, by default) until `--mib` MiB are queued,
 *          with no reader taking them and a sink budget of `--budget`
 *          (16 MiB): everything past about three quarters of the budget
 *          goes to the file.  Timed from the first write to the last unit
 *          written (the spill thread's byte count stops growing):
 *          bytes written to the file / that time.
 *   read   then the reader takes every record (checking its sequence
 *          number), reading the file back: bytes read from the file
 *          during the drain / the drain's time.
 *
 * and, side by side in the same run and directory, the file system's own
 * sequential bandwidth for the same bytes, the way dd measures it
 * (`dd bs=1M`, no sync): pwrite() of 1 MiB from one buffer, then pread()
 * of 1 MiB into one buffer, in a loop, and dd itself.  The spill's file is
 * in the page cache as dd's is (no fsync, by design: docs/element.md).
 * Each side's write starts after a sync() (untimed), with nothing dirty
 * left by the one before.
 *
 * The writer runs on the calling thread, the copier and the spill thread
 * on their own: three threads on whatever cores the machine has (printed).
 * Medians over the runs and per-run ratios (the order alternates).
 * Then the unit checksum's own speed: XXH3-64 as libtbq calls it
 * (libxxhash's x86 dispatch where there is one) and libxxhash's default,
 * next to CRC32C with the SSE4.2 instruction and to memcpy, over 1 MiB
 * that stays in the cache and over 256 MiB that does not.  A
 * first, untimed round checks every byte of every record.  Not a test: it
 * asserts nothing but what it delivers (every record, in order), and
 * exits 1 when that fails.  --smoke: one small run, a TAP line.
 */
#include <tbq.h>
#include <xxhash.h>
#ifdef TBQ_HAVE_XXH_DISPATCH
#define XXH_DISPATCH_DISABLE_REPLACE 1
#include <xxh_x86dispatch.h>
#endif
#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
now_s (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static void
die (const char *what)
{
  printf ("not ok - %s\n", what);
  fflush (stdout);
  exit (1);
}

typedef struct
{
  double write, read;           /* MiB/s */
  double written_mib;
} Rates;

/* --cold: each side's bytes go to the disk and come back from it.  The
 * writes are timed until sync() returns (the spill never syncs: this
 * times the disk taking what the spill wrote), the page cache is dropped,
 * and the read back comes from the disk. */
static bool cold;

static void
drop_caches (void)
{
  FILE *f;

  sync ();
  f = fopen ("/proc/sys/vm/drop_caches", "w");
  if (f == NULL || fputs ("3\n", f) < 0 || fclose (f) != 0)
    die ("--cold: cannot write /proc/sys/vm/drop_caches (run as root)");
}

static void
fill (unsigned char *p, uint64_t i, uint32_t size, bool full)
{
  memcpy (p, &i, sizeof i);
  if (full) {
    uint32_t k;

    for (k = sizeof i; k < size; k++)
      p[k] = (unsigned char) (i * 131 + k);
  } else {
    /* A frame's worth of bytes written, as a producer writes them. */
    memset (p + sizeof i, (int) (i & 0xff), size - sizeof i);
  }
}

static bool
check (const unsigned char *p, uint64_t i, uint32_t size, bool full)
{
  uint64_t seq;
  uint32_t k;

  memcpy (&seq, p, sizeof seq);
  if (seq != i)
    return false;
  if (!full)
    return p[size - 1] == (unsigned char) (i & 0xff);
  for (k = sizeof i; k < size; k++)
    if (p[k] != (unsigned char) (i * 131 + k))
      return false;
  return true;
}

static Rates
spill_run (const char *dir, uint64_t total, uint32_t size, uint64_t budget,
    bool full)
{
  TbqConfig cfg;
  TbqSpillConfig sc;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqStats st;
  char tmpl[512], msg[256] = "";
  uint64_t n = (total + size - 1) / size, i, last_bytes = 0, read0;
  double t0, t_last, t2, t3;
  Rates rates;

  tbq_config_init (&cfg);
  cfg.sink.max_blocks = budget / cfg.sink.block_size;
  if (tbq_queue_new (&cfg, &q, msg, sizeof msg) != TBQ_OK)
    die (msg);
  tbq_spill_config_init (&sc);
  snprintf (tmpl, sizeof tmpl, "%s/tbq-spill-bench-XXXXXX", dir);
  sc.temp_template = tmpl;
  if (tbq_queue_enable_spill (q, &sc, msg, sizeof msg) != TBQ_OK)
    die (msg);
  if (tbq_writer_new (q, &w) != TBQ_OK || tbq_reader_new (q, &r) != TBQ_OK
      || tbq_queue_start (q) != TBQ_OK)
    die ("open the queue");
  if (size > tbq_queue_max_record_size (q)
      && size > tbq_queue_max_extent_size (q))
    die ("--size is larger than the queue's largest record");
  /* Every side starts with nothing dirty in the page cache (untimed):
   * the kernel throttles writers, whoever they are, while earlier
   * writes are still being written back. */
  sync ();

  t0 = now_s ();
  for (i = 0; i < n; i++) {
    void *p;
    TbqStatus s = tbq_writer_reserve (w, 1, size, &p);

    if (s != TBQ_OK) {
      snprintf (msg, sizeof msg, "write %" PRIu64 ": %s", i,
          tbq_status_to_string (s));
      die (msg);
    }
    fill (p, i, size, full);
    if (tbq_writer_commit (w) != TBQ_OK)
      die ("commit");
  }
  if (tbq_writer_sync (w, 60 * (int64_t) 1000000000) != TBQ_OK)
    die ("sync");
  /* The last unit is written when the byte count stops growing. */
  t_last = now_s ();
  for (;;) {
    double t;

    tbq_queue_get_stats (q, &st);
    t = now_s ();
    if (st.spill.bytes_written != last_bytes) {
      last_bytes = st.spill.bytes_written;
      t_last = t;
    } else if (t - t_last > 0.05) {
      break;
    }
    usleep (200);
  }
  if (cold) {
    sync ();
    t_last = now_s ();
  }
  rates.written_mib = (double) last_bytes / 1048576.0;
  rates.write = rates.written_mib / (t_last - t0);
  if (cold)
    drop_caches ();

  read0 = st.spill.bytes_read;
  t2 = now_s ();
  for (i = 0; i < n;) {
    TbqRecord rec;
    TbqStatus s = tbq_reader_next (r, &rec);

    if (s == TBQ_EMPTY) {
      tbq_reader_wait (r, 1000000000);
      continue;
    }
    if (s != TBQ_OK || rec.size != size || !check (rec.data, i, size, full)) {
      snprintf (msg, sizeof msg, "record %" PRIu64 ": %s, size %u", i,
          tbq_status_to_string (s), s == TBQ_OK ? rec.size : 0);
      die (msg);
    }
    i++;
  }
  t3 = now_s ();
  tbq_queue_get_stats (q, &st);
  rates.read = (double) (st.spill.bytes_read - read0) / 1048576.0 / (t3 - t2);
  if (st.spill.bytes_read != st.spill.bytes_written)
    die ("not everything written was read back");
  if (getenv ("SPILL_BENCH_VERBOSE"))
    fprintf (stderr, "# extents: %" PRIu64 " allocated, %" PRIu64
        " reused, %" PRIu64 " released; %" PRIu64 " units written, %"
        PRIu64 " read, %" PRIu64 " runs\n", st.extents.allocations,
        st.extents.cache_hits, st.extents.releases, st.spill.units_written,
        st.spill.units_read, st.spill.runs);
  tbq_reader_free (r);
  tbq_writer_close (w);
  tbq_queue_free (q, NULL, NULL);
  return rates;
}

/* The file system's own: 1 MiB pwrite()s from one buffer, then 1 MiB
 * pread()s into one, as `dd bs=1M` does. */
static Rates
plain_run (const char *dir, uint64_t total)
{
  char path[512];
  size_t chunk = 1 << 20;
  unsigned char *buf = malloc (chunk);
  uint64_t off;
  double t0, t1, t2;
  Rates rates;
  int fd;

  snprintf (path, sizeof path, "%s/tbq-plain-bench-XXXXXX", dir);
  fd = mkstemp (path);
  if (fd < 0 || buf == NULL)
    die ("open the plain file");
  unlink (path);
  memset (buf, 0, chunk);
  sync ();
  t0 = now_s ();
  for (off = 0; off < total; off += chunk)
    if (pwrite (fd, buf, chunk, (off_t) off) != (ssize_t) chunk)
      die ("pwrite");
  if (cold)
    sync ();
  t1 = now_s ();
  if (cold)
    drop_caches ();
  for (off = 0; off < total; off += chunk)
    if (pread (fd, buf, chunk, (off_t) off) != (ssize_t) chunk)
      die ("pread");
  t2 = now_s ();
  close (fd);
  free (buf);
  rates.written_mib = (double) total / 1048576.0;
  rates.write = rates.written_mib / (t1 - t0);
  rates.read = rates.written_mib / (t2 - t1);
  return rates;
}

/* dd itself, for the same bytes. */
static Rates
dd_run (const char *dir, uint64_t total)
{
  char path[512], cmd[1200];
  double t0, t1, t2;
  Rates rates;

  snprintf (path, sizeof path, "%s/tbq-dd-bench-%d", dir, (int) getpid ());
  snprintf (cmd, sizeof cmd, "dd if=/dev/zero of=%s bs=1M count=%" PRIu64
      " status=none", path, total >> 20);
  sync ();
  t0 = now_s ();
  if (system (cmd) != 0)
    die ("dd write");
  if (cold)
    sync ();
  t1 = now_s ();
  if (cold)
    drop_caches ();
  snprintf (cmd, sizeof cmd, "dd if=%s of=/dev/null bs=1M status=none", path);
  if (system (cmd) != 0)
    die ("dd read");
  t2 = now_s ();
  unlink (path);
  rates.written_mib = (double) (total >> 20);
  rates.write = rates.written_mib / (t1 - t0);
  rates.read = rates.written_mib / (t2 - t1);
  return rates;
}

/* ---- the checksum ---- */

#if defined(__x86_64__)
__attribute__((target ("sse4.2")))
static uint64_t
crc32c (const void *p, size_t n)
{
  const unsigned char *b = p;
  uint64_t c = ~(uint64_t) 0;
  size_t k;

  for (k = 0; k + 8 <= n; k += 8) {
    uint64_t v;

    memcpy (&v, b + k, sizeof v);
    c = _mm_crc32_u64 (c, v);
  }
  for (; k < n; k++)
    c = _mm_crc32_u8 ((uint32_t) c, b[k]);
  return ~c;
}
#endif

/* XXH3-64 of `n` bytes as the spill computes it: a state, one update. */
static uint64_t
xxh3_with (XXH_errorcode (*update) (XXH3_state_t *, const void *, size_t),
    const void *p, size_t n)
{
  XXH3_state_t *xs = XXH3_createState ();
  uint64_t h;

  XXH3_64bits_reset (xs);
  update (xs, p, n);
  h = XXH3_64bits_digest (xs);
  XXH3_freeState (xs);
  return h;
}

static uint64_t
xxh3_default (const void *p, size_t n)
{
  return xxh3_with (XXH3_64bits_update, p, n);
}

#ifdef TBQ_HAVE_XXH_DISPATCH
static uint64_t
xxh3_dispatch (const void *p, size_t n)
{
  return xxh3_with (XXH3_64bits_update_dispatch, p, n);
}
#endif

static unsigned char *copy_to;

static uint64_t
copy (const void *p, size_t n)
{
  memcpy (copy_to, p, n);
  return copy_to[n - 1];
}

/* GB/s of `f` over `bytes` in 1 MiB calls, `reps` times. */
static double
gbps (uint64_t (*f) (const void *, size_t), const unsigned char *buf,
    size_t bytes, int reps)
{
  size_t chunk = 1 << 20, off;
  volatile uint64_t sink = 0;
  double t0 = now_s ();
  int k;

  for (k = 0; k < reps; k++)
    for (off = 0; off + chunk <= bytes; off += chunk)
      sink += f (buf + off, chunk);
  (void) sink;
  return (double) bytes * reps / (now_s () - t0) / 1e9;
}

static void
checksum_table (void)
{
  size_t big = (size_t) 256 << 20;
  unsigned char *buf = malloc (big);
  struct
  {
    const char *name;
    uint64_t (*f) (const void *, size_t);
  } fs[] = {
#ifdef TBQ_HAVE_XXH_DISPATCH
    {"XXH3-64, libxxhash's x86 dispatch (what libtbq uses)", xxh3_dispatch},
    {"XXH3-64, libxxhash's default", xxh3_default},
#else
    {"XXH3-64, libxxhash (what libtbq uses)", xxh3_default},
#endif
#if defined(__x86_64__)
    {"CRC32C, SSE4.2 instruction, one stream", crc32c},
#endif
    {"memcpy (for scale)", copy},
  };
  size_t i;

  copy_to = malloc (1 << 20);
  if (buf == NULL || copy_to == NULL)
    die ("checksum buffers");
  for (i = 0; i < big; i++)
    buf[i] = (unsigned char) (i * 2654435761u >> 13);
  memset (copy_to, 0, 1 << 20);
  printf ("\n| checksum | GB/s, 1 MiB in cache | GB/s, 256 MiB streamed |\n");
  printf ("|---|---|---|\n");
  for (i = 0; i < sizeof fs / sizeof fs[0]; i++) {
#if defined(__x86_64__)
    if (fs[i].f == crc32c && !__builtin_cpu_supports ("sse4.2"))
      continue;
#endif
    gbps (fs[i].f, buf, 1 << 20, 50);
    printf ("| %s | %.1f | %.1f |\n", fs[i].name,
        gbps (fs[i].f, buf, 1 << 20, 2000), gbps (fs[i].f, buf, big, 4));
  }
  free (copy_to);
  free (buf);
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  double s[64];

  memcpy (s, v, (size_t) n * sizeof *v);
  qsort (s, (size_t) n, sizeof *s, cmp_double);
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void
row (const char *name, double *v, double *ref, int n)
{
  double ratio[64] = { 0 }, lo, hi;
  int k;

  for (k = 0; k < n; k++)
    ratio[k] = v[k] / ref[k];
  lo = hi = ratio[0];
  for (k = 1; k < n; k++) {
    lo = ratio[k] < lo ? ratio[k] : lo;
    hi = ratio[k] > hi ? ratio[k] : hi;
  }
  printf ("| %s | %.0f | %.0f | %.2fx (%.2f-%.2f) |\n", name,
      median (v, n), median (ref, n), median (ratio, n), lo, hi);
}

int
main (int argc, char **argv)
{
  const char *dir = getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp";
  int runs = 5, k;
  uint64_t mib = 512, budget = 16 << 20;
  uint32_t size = 1228800;
  bool smoke = false;
  double sw[64], sr[64], pw[64], pr[64], dw[64], dr[64];
  Rates v;

  for (k = 1; k < argc; k++) {
    if (!strcmp (argv[k], "--smoke")) {
      smoke = true;
    } else if (!strcmp (argv[k], "--cold")) {
      cold = true;
    } else if (k + 1 < argc && !strcmp (argv[k], "--runs")) {
      runs = atoi (argv[++k]);
    } else if (k + 1 < argc && !strcmp (argv[k], "--mib")) {
      mib = strtoull (argv[++k], NULL, 10);
    } else if (k + 1 < argc && !strcmp (argv[k], "--size")) {
      size = (uint32_t) strtoul (argv[++k], NULL, 10);
    } else if (k + 1 < argc && !strcmp (argv[k], "--budget")) {
      budget = strtoull (argv[++k], NULL, 10);
    } else if (k + 1 < argc && !strcmp (argv[k], "--dir")) {
      dir = argv[++k];
    } else {
      fprintf (stderr, "usage: %s [--runs N] [--mib M] [--size BYTES] "
          "[--budget BYTES] [--dir D] [--cold] [--smoke]\n", argv[0]);
      return 2;
    }
  }
  if (smoke) {
    runs = 1;
    mib = 64;
  }
  if (runs < 1 || runs > 64 || mib < 8 || size < 8)
    die ("--runs 1..64, --mib at least 8, --size at least 8");

  /* Untimed: every byte of every record. */
  spill_run (dir, mib << 20, size, budget, true);
  if (smoke) {
    printf ("ok - spill-lib-bench: %" PRIu64 " MiB of %u-byte records "
        "through a %" PRIu64 "-byte budget, every byte back in order\n",
        mib, size, budget);
    return 0;
  }
  for (k = 0; k < runs; k++) {
    if (k % 2 == 0) {
      v = spill_run (dir, mib << 20, size, budget, false);
      sw[k] = v.write, sr[k] = v.read;
      v = plain_run (dir, mib << 20);
      pw[k] = v.write, pr[k] = v.read;
    } else {
      v = plain_run (dir, mib << 20);
      pw[k] = v.write, pr[k] = v.read;
      v = spill_run (dir, mib << 20, size, budget, false);
      sw[k] = v.write, sr[k] = v.read;
    }
    v = dd_run (dir, mib << 20);
    dw[k] = v.write, dr[k] = v.read;
  }
  printf ("# %" PRIu64 " MiB of %u-byte records, budget %" PRIu64
      " bytes, dir %s, %d runs, %ld online CPUs, %s; MiB/s, medians, "
      "per-run ratios (min-max)\n\n", mib, size, budget, dir, runs,
      sysconf (_SC_NPROCESSORS_ONLN), cold ? "to and from the disk "
      "(writes timed to sync(), page cache dropped before reading)"
      : "through the page cache");
  printf ("| | tbqueue spill | reference | spill / reference |\n");
  printf ("|---|---|---|---|\n");
  row ("write, vs pwrite 1 MiB", sw, pw, runs);
  row ("write, vs dd bs=1M", sw, dw, runs);
  row ("read back, vs pread 1 MiB", sr, pr, runs);
  row ("read back, vs dd bs=1M", sr, dr, runs);
  checksum_table ();
  return 0;
}
