/* Timing of large records through libtbq (not a test: it asserts no
 * speed; docs/extents.md quotes its output).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Everything runs in one thread (write, copier step, read), so a figure is
 * the CPU cost of moving a record, without thread wake-ups.  Contenders
 * are interleaved round by round, each round rotating who goes first, and
 * the report gives medians and ratios from the same run:
 *
 *   extent-timing move [ROUNDS]       600 KB and 4 MiB records writer ->
 *       reader (tbq_writer_write, tbq_copier_step, tbq_reader_next), with a
 *       warm extent cache and a cold one, against a memcpy of the same size
 *       into warm memory and into freshly mapped memory;
 *   extent-timing crossover [ROUNDS]  records of 256 B .. 16 KiB, inline
 *       (64 KiB source blocks) against out of line (4 KiB source blocks):
 *       where one copy into an extent starts to beat two copies;
 *   extent-timing mapping [ROUNDS]    a fresh mapping of 600 KB / 4 MiB
 *       filled by memcpy: plain, MAP_POPULATE, MADV_HUGEPAGE;
 *   extent-timing spanning [ROUNDS]   600 KB and 4 MiB frames through the
 *       default geometry with the copier thread and a reader thread: one
 *       record in an extent, against the frame cut into inline records
 *       that fill whole source blocks (what records spanning several
 *       source blocks would cost at the least, before any reassembly):
 *       wall time per frame and the writer's CPU time per frame.
 */
#include <tbq.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static int64_t
clock_ns (clockid_t clock)
{
  struct timespec ts;

  clock_gettime (clock, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t
now_ns (void)
{
  return clock_ns (CLOCK_MONOTONIC);
}

static int
cmp_i64 (const void *a, const void *b)
{
  int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

  return x < y ? -1 : x > y;
}

static int64_t
median (int64_t * v, int n)
{
  qsort (v, (size_t) n, sizeof *v, cmp_i64);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
fail (const char *what, TbqStatus st)
{
  fprintf (stderr, "%s: %s\n", what, tbq_status_to_string (st));
  exit (1);
}

/* A sink one can sink bytes into, so the compiler keeps every copy. */
static volatile unsigned char sink_byte;
/* The writer's share of the last pipe_move(): the producer's time. */
static int64_t last_write_ns;

/* ---- one queue, stepped by hand ---- */

typedef struct
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqBlock *held[64];           /* cold runs: extents kept from reuse */
  int n_held;
} Pipe;

static void
pipe_open (Pipe * p, size_t source_block)
{
  TbqConfig cfg;
  char msg[256];
  TbqStatus st;

  tbq_config_init (&cfg);
  cfg.source.block_size = source_block;
  /* A batch is written before the copier runs: room for all of it. */
  cfg.source.min_blocks = cfg.source.max_blocks = 64;
  cfg.source.max_idle_blocks = 64;
  cfg.sink.max_blocks = 8192;   /* 512 MiB: room for held extents */
  st = tbq_queue_new (&cfg, &p->q, msg, sizeof msg);
  if (st != TBQ_OK) {
    fprintf (stderr, "%s\n", msg);
    exit (1);
  }
  if ((st = tbq_writer_new (p->q, &p->w)) != TBQ_OK
      || (st = tbq_reader_new (p->q, &p->r)) != TBQ_OK)
    fail ("open", st);
  p->n_held = 0;
}

static void
pipe_release_held (Pipe * p)
{
  while (p->n_held > 0)
    tbq_block_unref (p->held[--p->n_held]);
  /* Let the copier trim what the idle cache does not keep. */
  tbq_copier_step (p->q, 0);
}

static void
pipe_close (Pipe * p)
{
  pipe_release_held (p);
  tbq_queue_free (p->q, NULL, NULL);
}

/* Move `n` records of `size` bytes from `src` to the reader; with `hold`
 * the reader keeps every extent, so the next ones cannot be reused. */
static int64_t
pipe_move (Pipe * p, const unsigned char *src, uint32_t size, int n, bool hold)
{
  int64_t t0 = now_ns ();
  TbqRecord rec;
  TbqStatus st;
  int i;

  for (i = 0; i < n; i++)
    if ((st = tbq_writer_write (p->w, 1, src, size)) != TBQ_OK)
      fail ("write", st);
  last_write_ns = now_ns () - t0;
  tbq_writer_flush (p->w);
  st = tbq_copier_step (p->q, 0);
  if (st != TBQ_OK && st != TBQ_TIMEOUT)
    fail ("copier step", st);
  for (i = 0; i < n; i++) {
    if ((st = tbq_reader_next (p->r, &rec)) != TBQ_OK)
      fail ("read", st);
    if (hold && p->n_held < 64) {
      tbq_block_ref (rec.block);
      p->held[p->n_held++] = rec.block;
    }
  }
  sink_byte = ((const unsigned char *) rec.data)[rec.size - 1];
  /* Drop the reader's reference to the last one. */
  if (tbq_reader_next (p->r, &rec) != TBQ_EMPTY)
    fail ("read", TBQ_OK);
  return now_ns () - t0;
}

/* ---- move: 600 KB and 4 MiB ---- */

enum
{ C_TBQ_WARM, C_TBQ_COLD, C_MEMCPY_WARM, C_MEMCPY_FRESH, C_N };

static const char *const move_names[C_N] = {
  "libtbq, warm extent cache", "libtbq, cold extent (fresh mmap)",
  "memcpy into warm memory", "memcpy into a fresh mapping"
};

static int64_t
memcpy_fresh (const unsigned char *src, size_t size)
{
  int64_t t0 = now_ns (), t;
  unsigned char *dst = mmap (NULL, size, PROT_READ | PROT_WRITE,
      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (dst == MAP_FAILED)
    exit (1);
  memcpy (dst, src, size);
  sink_byte = dst[size - 1];
  t = now_ns () - t0;
  munmap (dst, size);
  return t;
}

static int64_t
move_one (int c, Pipe * warm, Pipe * cold, const unsigned char *src,
    unsigned char *dst, uint32_t size, int64_t * warm_write)
{
  int64_t t0, t;

  switch (c) {
    case C_TBQ_WARM:
      t = pipe_move (warm, src, size, 1, false);
      *warm_write = last_write_ns;
      return t;
    case C_TBQ_COLD:
      return pipe_move (cold, src, size, 1, true);
    case C_MEMCPY_WARM:
      t0 = now_ns ();
      memcpy (dst, src, size);
      sink_byte = dst[size - 1];
      return now_ns () - t0;
    default:
      return memcpy_fresh (src, size);
  }
}

static void
run_move (int rounds)
{
  static const uint32_t sizes[] = { 600 * 1000, 4 * 1024 * 1024 };
  size_t k;

  printf ("move one record writer -> reader (one thread: write, copier "
      "step, read), %d rounds, medians\n", rounds);
  for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    uint32_t size = sizes[k];
    unsigned char *src = malloc (size), *dst = malloc (size);
    int64_t *t[C_N], *ww = calloc ((size_t) rounds, sizeof (int64_t));
    Pipe warm, cold;
    int i, c;

    memset (src, 0x5a, size);
    memset (dst, 0xa5, size);
    pipe_open (&warm, 4096);
    pipe_open (&cold, 4096);
    for (c = 0; c < C_N; c++)
      t[c] = calloc ((size_t) rounds, sizeof (int64_t));
    for (i = 0; i < 3; i++)     /* warm up */
      pipe_move (&warm, src, size, 1, false);
    for (i = 0; i < rounds; i++) {
      for (c = 0; c < C_N; c++) {
        int who = (c + i) % C_N;

        t[who][i] = move_one (who, &warm, &cold, src, dst, size, &ww[i]);
      }
      /* A fresh queue: its extents' idle cache is empty. */
      if (cold.n_held >= 32) {
        pipe_close (&cold);
        pipe_open (&cold, 4096);
      }
    }
    printf ("%u bytes:\n", size);
    {
      int64_t base = median (t[C_MEMCPY_WARM], rounds);

      for (c = 0; c < C_N; c++) {
        int64_t m = median (t[c], rounds);

        printf ("  %-36s %9.1f us  %5.2fx memcpy into warm memory\n",
            move_names[c], (double) m / 1e3, (double) m / (double) base);
      }
      printf ("  (warm: the write alone %.1f us, %.2fx)\n",
          (double) median (ww, rounds) / 1e3,
          (double) median (ww, rounds) / (double) base);
    }
    free (ww);
    for (c = 0; c < C_N; c++)
      free (t[c]);
    pipe_close (&warm);
    pipe_close (&cold);
    free (src);
    free (dst);
  }
}

/* ---- crossover: inline against out of line ---- */

static void
run_crossover (int rounds)
{
  static const uint32_t sizes[] = { 256, 512, 1000, 1024, 2048, 4096, 8192,
    16000
  };
  /* Records per timed batch: enough bytes to time well. */
  const int batch = 64;
  size_t k;

  printf ("records per batch of %d (write, copier step, read), %d rounds, "
      "median ns per record\n", batch, rounds);
  printf ("%8s %12s %12s %8s %14s %14s %8s\n", "size", "inline", "extent",
      "ext/inl", "writer inline", "writer extent", "ext/inl");
  for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    uint32_t size = sizes[k];
    unsigned char *src = malloc (size);
    int64_t *ti = calloc ((size_t) rounds, sizeof (int64_t));
    int64_t *te = calloc ((size_t) rounds, sizeof (int64_t));
    int64_t *wi = calloc ((size_t) rounds, sizeof (int64_t));
    int64_t *we = calloc ((size_t) rounds, sizeof (int64_t));
    Pipe in, out;
    int i;

    memset (src, 0x33, size);
    /* 64 KiB source blocks carry up to 16 KiB inline; 4 KiB ones up to
     * 1000 bytes. */
    pipe_open (&in, 65536);
    pipe_open (&out, 4096);
    if (size > tbq_queue_max_inline_size (in.q)
        || size <= tbq_queue_max_inline_size (out.q)) {
      printf ("%8u (one path only)\n", size);
      goto next;
    }
    for (i = 0; i < 3; i++) {
      pipe_move (&in, src, size, batch, false);
      pipe_move (&out, src, size, batch, false);
    }
    for (i = 0; i < rounds; i++) {
      if (i % 2) {
        ti[i] = pipe_move (&in, src, size, batch, false);
        wi[i] = last_write_ns;
        te[i] = pipe_move (&out, src, size, batch, false);
        we[i] = last_write_ns;
      } else {
        te[i] = pipe_move (&out, src, size, batch, false);
        we[i] = last_write_ns;
        ti[i] = pipe_move (&in, src, size, batch, false);
        wi[i] = last_write_ns;
      }
    }
    {
      int64_t mi = median (ti, rounds), me = median (te, rounds);
      int64_t mwi = median (wi, rounds), mwe = median (we, rounds);

      printf ("%8u %12.0f %12.0f %8.2f %14.0f %14.0f %8.2f\n", size,
          (double) mi / batch, (double) me / batch, (double) me / (double) mi,
          (double) mwi / batch, (double) mwe / batch,
          (double) mwe / (double) mwi);
    }
  next:
    pipe_close (&in);
    pipe_close (&out);
    free (ti);
    free (te);
    free (wi);
    free (we);
    free (src);
  }
}

/* ---- mapping: how a fresh extent is best faulted in ---- */

enum
{ M_PLAIN, M_POPULATE, M_HUGE, M_HUGE_POPULATE, M_N };

static const char *const map_names[M_N] = {
  "mmap, faulted by memcpy", "mmap MAP_POPULATE",
  "mmap MADV_HUGEPAGE (2 MiB aligned)", "the same + MADV_POPULATE_WRITE"
};

/* Each method keeps its last mappings alive, as extents in use are. */
#define MAP_KEEP 16

typedef struct
{
  unsigned char *p[MAP_KEEP];
  size_t len[MAP_KEEP];
  int next;
} Kept;

static void
keep (Kept * k, unsigned char *p, size_t len)
{
  if (k->p[k->next] != NULL)
    munmap (k->p[k->next], k->len[k->next]);
  k->p[k->next] = p;
  k->len[k->next] = len;
  k->next = (k->next + 1) % MAP_KEEP;
}

static int64_t
map_fill (int how, const unsigned char *src, size_t size, Kept * k)
{
  int64_t t0 = now_ns (), t;
  size_t len = size;
  unsigned char *p;

  if (how >= M_HUGE)            /* room to align to 2 MiB */
    len = size + (2u << 20);
  p = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS
      | (how == M_POPULATE ? MAP_POPULATE : 0), -1, 0);
  if (p == MAP_FAILED)
    exit (1);
  if (how >= M_HUGE) {
    unsigned char *a = (unsigned char *) (((uintptr_t) p + (2u << 20) - 1)
        & ~(uintptr_t) ((2u << 20) - 1));

    madvise (a, size, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
    if (how == M_HUGE_POPULATE)
      madvise (a, size, MADV_POPULATE_WRITE);
#endif
    memcpy (a, src, size);
    sink_byte = a[size - 1];
  } else {
    memcpy (p, src, size);
    sink_byte = p[size - 1];
  }
  t = now_ns () - t0;
  keep (k, p, len);
  return t;
}

static void
run_mapping (int rounds)
{
  static const size_t sizes[] = { 600 * 1000, 4 * 1024 * 1024 };
  size_t k;

  printf ("a fresh mapping filled by memcpy, the last %d of each method "
      "kept mapped (unmapped untimed), %d rounds, medians\n", MAP_KEEP, rounds);
  for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    size_t size = sizes[k];
    unsigned char *src = malloc (size);
    int64_t *t[M_N];
    Kept kept[M_N];
    int64_t base;
    int i, m;

    memset (kept, 0, sizeof kept);
    memset (src, 0x77, size);
    for (m = 0; m < M_N; m++)
      t[m] = calloc ((size_t) rounds, sizeof (int64_t));
    for (i = 0; i < rounds; i++)
      for (m = 0; m < M_N; m++) {
        int who = (m + i) % M_N;

        t[who][i] = map_fill (who, src, size, &kept[who]);
      }
    base = median (t[M_PLAIN], rounds);
    printf ("%zu bytes:\n", size);
    for (m = 0; m < M_N; m++) {
      int64_t md = median (t[m], rounds);

      printf ("  %-36s %9.1f us  %5.2fx plain (p90 %.1f us)\n",
          map_names[m], (double) md / 1e3, (double) md / (double) base,
          (double) t[m][rounds * 9 / 10] / 1e3);
    }
    for (m = 0; m < M_N; m++) {
      for (i = 0; i < MAP_KEEP; i++)
        if (kept[m].p[i] != NULL)
          munmap (kept[m].p[i], kept[m].len[i]);
      free (t[m]);
    }
    free (src);
  }
}

/* ---- spanning: one extent against a frame cut into block-filling
 * inline records, with real threads ---- */

typedef struct
{
  TbqReader *r;
  _Atomic uint64_t got;         /* records taken */
  _Atomic int stop;
} Drain;

static void *
drain_main (void *arg)
{
  Drain *d = arg;
  TbqRecord rec;

  while (!atomic_load_explicit (&d->stop, memory_order_relaxed)) {
    if (tbq_reader_next (d->r, &rec) == TBQ_OK) {
      sink_byte = ((const unsigned char *) rec.data)[rec.size - 1];
      /* Release: the sender that sees the count is done with the round
       * (nothing is read after it; a plain count would do as well). */
      atomic_fetch_add_explicit (&d->got, 1, memory_order_release);
    } else {
      tbq_reader_wait (d->r, 10000000);
    }
  }
  return NULL;
}

static int64_t
thread_cpu_ns (void)
{
  return clock_ns (CLOCK_THREAD_CPUTIME_ID);
}

/* Send `frames` frames of `size` bytes as records of at most `piece`
 * bytes; wall time until the reader has them all, writer CPU in *cpu. */
static int64_t
span_send (TbqWriter * w, Drain * d, const unsigned char *src, uint32_t size,
    uint32_t piece, int frames, int64_t * cpu)
{
  uint64_t want = atomic_load (&d->got);
  int64_t t0 = now_ns (), c0 = thread_cpu_ns ();
  int f;

  for (f = 0; f < frames; f++) {
    uint32_t off;

    for (off = 0; off < size; off += piece) {
      uint32_t n = size - off < piece ? size - off : piece;
      TbqStatus st = tbq_writer_write (w, 1, src + off, n);

      if (st != TBQ_OK)
        fail ("write", st);
      want++;
    }
  }
  tbq_writer_flush (w);
  *cpu = thread_cpu_ns () - c0;
  /* Acquire: pairs with drain_main()'s count. */
  while (atomic_load_explicit (&d->got, memory_order_acquire) < want) {
  }
  return now_ns () - t0;
}

static void
run_spanning (int rounds)
{
  static const uint32_t sizes[] = { 600 * 1000, 4 * 1024 * 1024 };
  const int frames = 4;
  size_t k;

  printf ("frames through the default geometry (4 x 4 KiB source blocks), "
      "copier and reader threads, %d frames per round, %d rounds, medians "
      "per frame\n", frames, rounds);
  for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    uint32_t size = sizes[k];
    unsigned char *src = malloc (size);
    int64_t *wall[2], *cpu[2];
    TbqConfig cfg;
    TbqQueue *q;
    TbqWriter *w;
    Drain d;
    pthread_t th;
    uint32_t piece[2];
    int i, c;

    memset (src, 0x44, size);
    tbq_config_init (&cfg);
    if (tbq_queue_new (&cfg, &q, NULL, 0) != TBQ_OK
        || tbq_writer_new (q, &w) != TBQ_OK)
      exit (1);
    memset (&d, 0, sizeof d);
    tbq_reader_new (q, &d.r);
    tbq_queue_start (q);
    pthread_create (&th, NULL, drain_main, &d);
    piece[0] = size;            /* one record, out of line */
    piece[1] = tbq_queue_max_inline_size (q);   /* 4 fill a source block */
    for (c = 0; c < 2; c++) {
      wall[c] = calloc ((size_t) rounds, sizeof (int64_t));
      cpu[c] = calloc ((size_t) rounds, sizeof (int64_t));
      span_send (w, &d, src, size, piece[c], frames, &cpu[c][0]);
    }
    for (i = 0; i < rounds; i++)
      for (c = 0; c < 2; c++) {
        int who = (c + i) % 2;

        wall[who][i] = span_send (w, &d, src, size, piece[who], frames,
            &cpu[who][i]) / frames;
        cpu[who][i] /= frames;
      }
    printf ("%u bytes:\n", size);
    for (c = 0; c < 2; c++) {
      int64_t mw = median (wall[c], rounds), mc = median (cpu[c], rounds);

      printf ("  %-44s wall %8.1f us (%4.2fx)  writer CPU %8.1f us "
          "(%4.2fx)\n", c == 0 ? "one record in an extent"
          : "cut into block-filling inline records", (double) mw / 1e3,
          (double) mw / (double) median (wall[0], rounds), (double) mc / 1e3,
          (double) mc / (double) median (cpu[0], rounds));
    }
    atomic_store (&d.stop, 1);
    pthread_join (th, NULL);
    for (c = 0; c < 2; c++) {
      free (wall[c]);
      free (cpu[c]);
    }
    tbq_queue_free (q, NULL, NULL);
    free (src);
  }
}

int
main (int argc, char **argv)
{
  const char *what = argc > 1 ? argv[1] : "move";
  int rounds = argc > 2 ? atoi (argv[2]) : 200;

  if (rounds < 1)
    rounds = 1;
  setvbuf (stdout, NULL, _IOLBF, 0);
  if (strcmp (what, "move") == 0)
    run_move (rounds);
  else if (strcmp (what, "crossover") == 0)
    run_crossover (rounds);
  else if (strcmp (what, "mapping") == 0)
    run_mapping (rounds);
  else if (strcmp (what, "spanning") == 0)
    run_spanning (rounds);
  else {
    fprintf (stderr, "usage: %s move|crossover|mapping|spanning [ROUNDS]\n",
        argv[0]);
    return 2;
  }
  return 0;
}
