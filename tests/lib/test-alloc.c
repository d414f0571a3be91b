/* The writer's steady state allocates nothing.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * This executable defines malloc, calloc, realloc, free, aligned_alloc,
 * posix_memalign, memalign, valloc, mmap and munmap itself.  Symbols of the
 * executable come first in symbol lookup, so libtbq's calls land here; each
 * wrapper counts the call if the calling thread has set its `counting` flag
 * and forwards to the next definition (libc's, or the sanitizer's
 * interceptor in a sanitizer build) found with dlsym (RTLD_NEXT).
 *
 * The wrappers also run inside the sanitizer runtimes' own start-up, before
 * those can handle instrumented code, so they are built without sanitizer
 * instrumentation and use no atomics: only the thread that sets `counting`
 * ever touches the counters.
 *
 * Each test first checks that the counter does see libtbq's allocations
 * (opening a writer, growing a pool), so a zero in the hot loop means "no
 * allocation", not "not intercepted".  Large records (extents) allocate
 * only until the extents' idle cache holds what a stream of them needs.
 */
#include "lib-test.h"

#include <dlfcn.h>
#include <sys/mman.h>

enum
{ K_MALLOC, K_CALLOC, K_REALLOC, K_FREE, K_ALIGNED, K_POSIX_MEMALIGN,
  K_MEMALIGN, K_VALLOC, K_MMAP, K_MUNMAP, K_KINDS
};

static const char *const kind_names[K_KINDS] = {
  "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign",
  "memalign", "valloc", "mmap", "munmap"
};

#define NO_SANITIZE \
  __attribute__ ((no_sanitize_address, no_sanitize_thread, \
          no_sanitize_undefined))

/* Set by the thread under observation, which alone updates `counts`. */
static __thread int counting;
static uint64_t counts[K_KINDS];

NO_SANITIZE static inline void
note (int kind)
{
  if (counting)
    counts[kind]++;
}

/* ---- forwarding ---- */

static void *(*real_malloc) (size_t);
static void *(*real_calloc) (size_t, size_t);
static void *(*real_realloc) (void *, size_t);
static void (*real_free) (void *);
static void *(*real_aligned_alloc) (size_t, size_t);
static int (*real_posix_memalign) (void **, size_t, size_t);
static void *(*real_memalign) (size_t, size_t);
static void *(*real_valloc) (size_t);
static void *(*real_mmap) (void *, size_t, int, int, int, off_t);
static int (*real_munmap) (void *, size_t);

/* dlsym itself may allocate: serve that from a static arena, never freed. */
static _Alignas (64) unsigned char boot[16384];
static size_t boot_used;
/* Process start-up is single-threaded: that is when resolving happens. */
static int resolving;

NO_SANITIZE static void *
boot_alloc (size_t n)
{
  void *p;

  n = (n + 63) & ~(size_t) 63;
  if (boot_used + n > sizeof boot)
    abort ();
  p = boot + boot_used;
  boot_used += n;
  return p;
}

NO_SANITIZE static bool
is_boot (const void *p)
{
  return (const unsigned char *) p >= boot
      && (const unsigned char *) p < boot + sizeof boot;
}

NO_SANITIZE static void
resolve (void)
{
  resolving = 1;
  real_malloc = (void *(*)(size_t)) dlsym (RTLD_NEXT, "malloc");
  real_calloc = (void *(*)(size_t, size_t)) dlsym (RTLD_NEXT, "calloc");
  real_realloc = (void *(*)(void *, size_t)) dlsym (RTLD_NEXT, "realloc");
  real_free = (void (*)(void *)) dlsym (RTLD_NEXT, "free");
  real_aligned_alloc = (void *(*)(size_t, size_t)) dlsym (RTLD_NEXT,
      "aligned_alloc");
  real_posix_memalign = (int (*)(void **, size_t, size_t)) dlsym (RTLD_NEXT,
      "posix_memalign");
  real_memalign = (void *(*)(size_t, size_t)) dlsym (RTLD_NEXT, "memalign");
  real_valloc = (void *(*)(size_t)) dlsym (RTLD_NEXT, "valloc");
  real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))
      dlsym (RTLD_NEXT, "mmap");
  real_munmap = (int (*)(void *, size_t)) dlsym (RTLD_NEXT, "munmap");
  resolving = 0;
}

/* True when the caller must use the arena (we are inside resolve()). */
NO_SANITIZE static bool
need_boot (void *fn)
{
  if (fn != NULL)
    return false;
  if (resolving)
    return true;
  resolve ();
  return false;
}

NO_SANITIZE void *
malloc (size_t n)
{
  note (K_MALLOC);
  if (need_boot ((void *) real_malloc))
    return boot_alloc (n);
  return real_malloc (n);
}

NO_SANITIZE void *
calloc (size_t a, size_t b)
{
  note (K_CALLOC);
  if (need_boot ((void *) real_calloc))
    return boot_alloc (a * b);  /* static: already zero */
  return real_calloc (a, b);
}

NO_SANITIZE void *
realloc (void *p, size_t n)
{
  note (K_REALLOC);
  if (is_boot (p)) {
    unsigned char *np = malloc (n);
    size_t i;

    /* Byte loop, not memcpy: no interceptor in here. */
    for (i = 0; np != NULL && i < n && (const unsigned char *) p + i
        < boot + sizeof boot; i++)
      np[i] = ((const unsigned char *) p)[i];
    return np;
  }
  if (need_boot ((void *) real_realloc))
    return boot_alloc (n);
  return real_realloc (p, n);
}

NO_SANITIZE void
free (void *p)
{
  note (K_FREE);
  if (p == NULL || is_boot (p))
    return;
  if (real_free == NULL)
    resolve ();
  real_free (p);
}

NO_SANITIZE void *
aligned_alloc (size_t align, size_t n)
{
  note (K_ALIGNED);
  if (need_boot ((void *) real_aligned_alloc))
    return boot_alloc (n);
  return real_aligned_alloc (align, n);
}

NO_SANITIZE int
posix_memalign (void **out, size_t align, size_t n)
{
  note (K_POSIX_MEMALIGN);
  if (need_boot ((void *) real_posix_memalign)) {
    *out = boot_alloc (n);
    return 0;
  }
  return real_posix_memalign (out, align, n);
}

NO_SANITIZE void *
memalign (size_t align, size_t n)
{
  note (K_MEMALIGN);
  if (need_boot ((void *) real_memalign))
    return boot_alloc (n);
  return real_memalign (align, n);
}

NO_SANITIZE void *
valloc (size_t n)
{
  note (K_VALLOC);
  if (need_boot ((void *) real_valloc))
    return boot_alloc (n);
  return real_valloc (n);
}

NO_SANITIZE void *
mmap (void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
  note (K_MMAP);
  if (real_mmap == NULL)
    resolve ();
  return real_mmap (addr, len, prot, flags, fd, off);
}

NO_SANITIZE int
munmap (void *addr, size_t len)
{
  note (K_MUNMAP);
  if (real_munmap == NULL)
    resolve ();
  return real_munmap (addr, len);
}

/* ---- counting ---- */

static void
counts_reset (void)
{
  memset (counts, 0, sizeof counts);
}

static uint64_t
counts_total (void)
{
  uint64_t n = 0;
  int k;

  for (k = 0; k < K_KINDS; k++)
    n += counts[k];
  return n;
}

static void
counts_print (const char *when)
{
  int k;

  for (k = 0; k < K_KINDS; k++)
    if (counts[k] != 0)
      printf ("# %s: %" PRIu64 " x %s\n", when, counts[k], kind_names[k]);
}

/* The wrappers see libtbq's allocations (heap and mmap) on this thread. */
static void
check_interposition (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  static unsigned char buf[4096];
  int i;

  tbq_config_init (&cfg);
  cfg.source.min_blocks = 1;    /* page-sized blocks: the pool mmaps them */
  q = queue_new_or_fail (&cfg);
  counts_reset ();
  counting = 1;
  CHECK_OK (tbq_writer_new (q, &w));
  /* Five blocks' worth: the pool grows by a block. */
  for (i = 0; i < 5; i++)
    CHECK_OK (tbq_writer_write (w, 0, buf, tbq_queue_max_inline_size (q)));
  counting = 0;
  counts_print ("opening a writer and growing its pool");
  CHECK (counts[K_ALIGNED] + counts[K_MALLOC] + counts[K_CALLOC]
      + counts[K_POSIX_MEMALIGN] >= 1);
  CHECK (counts[K_MMAP] >= 1);
  tbq_queue_free (q, NULL, NULL);
}

typedef struct
{
  uint64_t got;
} Consumer;

static void
consume_cb (const TbqRecord * rec, void *user_data)
{
  Consumer *c = user_data;

  (void) rec;
  c->got++;
}

/* Writes, reserve/commit, sessions and flushes on a warmed-up writer, with
 * the copier thread and a callback consumer running: nothing allocated on
 * the producer thread. */
static void
hot_loop_allocates_nothing (const TbqConfig * cfg, uint64_t n)
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  Consumer c = { 0 };
  unsigned char buf[256];
  uint64_t i;
  uint32_t max;
  TbqStats st;

  check_interposition ();
  q = queue_new_or_fail (cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  memset (buf, 0xab, sizeof buf);
  /* Small records: the ones that travel inline. */
  max = tbq_queue_max_inline_size (q);
  if (max >= sizeof buf)
    max = sizeof buf - 1;
  /* The source pool at its largest before anything runs: how far it
   * grows with the copier running depends on how far the copier lags,
   * which is the schedule's.  With no copier, writes fill it until one
   * is refused; it keeps its blocks (max_idle_blocks is max_blocks). */
  CHECK_OK (tbq_writer_set_backpressure (w, TBQ_BACKPRESSURE_DROP, 0));
  for (i = 0; tbq_writer_write (w, 0, buf, max) != TBQ_DROPPED; i++)
    CHECK (i < 10000000);
  CHECK_EQ (stats_of (q).source.blocks_total, cfg->source.max_blocks);
  CHECK_EQ (cfg->source.max_idle_blocks, cfg->source.max_blocks);
  CHECK_OK (tbq_writer_set_backpressure (w, cfg->backpressure,
          cfg->block_timeout_ns));
  CHECK_OK (tbq_queue_start (q));
  CHECK_OK (tbq_consumer_start (r, consume_cb, &c));

  /* Warm up: let every pool reach its working size. */
  for (i = 0; i < 100000; i++) {
    TbqStatus s = tbq_writer_write (w, 0, buf, (uint32_t) (i % (max + 1)));

    if (s != TBQ_DROPPED)
      CHECK_OK (s);
  }

  counts_reset ();
  counting = 1;
  for (i = 0; i < n; i++) {
    uint32_t size = (uint32_t) (mix64 (i) % (max + 1));
    TbqStatus s = TBQ_OK;

    switch (i % 8) {
      case 0:{
        void *p;

        s = tbq_writer_reserve (w, 1, size, &p);
        if (s == TBQ_OK) {
          memcpy (p, buf, size);
          tbq_writer_commit (w);
        }
        break;
      }
      case 1:{
        TbqSession ses;
        int k;

        tbq_session_begin (w, &ses);
        for (k = 0; k < 16; k++) {
          if (tbq_session_write (&ses, 2, buf, size) == TBQ_NO_SPACE) {
            s = tbq_session_next_block (&ses);
            if (s != TBQ_OK)
              break;
            CHECK_OK (tbq_session_write (&ses, 2, buf, size));
          }
        }
        tbq_session_end (&ses);
        break;
      }
      case 2:
        if (i % 1024 == 2)
          tbq_writer_flush (w);
        /* fall through */
      default:
        s = tbq_writer_write (w, 0, buf, size);
        break;
    }
    if (s != TBQ_DROPPED)
      CHECK_OK (s);
  }
  counting = 0;
  counts_print ("hot loop");
  CHECK_EQ (counts_total (), 0);

  tbq_writer_flush (w);
  tbq_consumer_stop (r);
  st = stats_of (q);
  /* The loop did real work through every layer. */
  CHECK (c.got > 0);
  CHECK_EQ (c.got, st.records_out);
  CHECK (st.handoffs > 0);
  printf ("# %" PRIu64 " records written, %" PRIu64 " delivered, %" PRIu64
      " dropped\n", st.records_in, c.got, st.records_dropped);
  tbq_queue_free (q, NULL, NULL);
}

static void
writer_steady_state_allocates_nothing (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  hot_loop_allocates_nothing (&cfg, scaled (300000));
}

static void
writer_allocates_nothing_once_its_pool_has_grown (void)
{
  TbqConfig cfg;

  /* One block pre-allocated, growth to eight: the pool grows before the
   * warm-up, then keeps its blocks (max_idle_blocks covers them all). */
  tbq_config_init (&cfg);
  cfg.source.min_blocks = 1;
  cfg.source.max_blocks = 8;
  cfg.source.max_idle_blocks = 8;
  hot_loop_allocates_nothing (&cfg, scaled (300000));
}

static void
writer_allocates_nothing_with_coalescing_and_batched_publish (void)
{
  TbqConfig cfg;

  small_config (&cfg, 1024);
  cfg.source.max_blocks = 4;
  cfg.source.max_idle_blocks = 4;
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  cfg.max_coalesce_ns = 200000;
  cfg.publish = TBQ_PUBLISH_EVERY_N;
  cfg.publish_every = 16;
  hot_loop_allocates_nothing (&cfg, scaled (300000));
}

static void
writer_allocates_nothing_when_dropping (void)
{
  TbqConfig cfg;

  small_config (&cfg, 512);
  cfg.backpressure = TBQ_BACKPRESSURE_DROP;
  hot_loop_allocates_nothing (&cfg, scaled (200000));
}

static void
writer_allocates_nothing_while_waiting_for_space (void)
{
  TbqConfig cfg;

  /* Tiny pools: the writer waits for source blocks all the time. */
  small_config (&cfg, 256);
  cfg.sink.max_blocks = 3;
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  hot_loop_allocates_nothing (&cfg, scaled (100000));
}

/* Large records of one size (heap-sized and page-sized extents), by
 * write, reserve/commit and sessions, read as they come (one thread steps
 * the copier): after the first two, every extent comes from the idle
 * cache. */
static void
same_size_large_records_allocate_nothing_once_warm (void)
{
  static const uint32_t sizes[] = { 3000, 600 * 1000 };
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;
  unsigned char *buf;
  size_t k;
  uint64_t i, n = scaled (2000);

  check_interposition ();
  tbq_config_init (&cfg);
  q = open_queue (&cfg, &w, &r);
  buf = calloc (1, sizes[1]);
  CHECK (buf != NULL);
  for (k = 0; k < 2; k++) {
    uint64_t allocated = stats_of (q).extents.allocations;

    counts_reset ();
    counting = 1;
    for (i = 0; i < n + 4; i++) {
      TbqSession s;
      void *p;

      if (i == 4) {             /* warm: count from here */
        counting = 0;
        counts_print ("warming up");
        CHECK (counts_total () > 0);
        counts_reset ();
        counting = 1;
      }
      if (i % 3 == 0) {
        CHECK_OK (tbq_writer_write (w, 1, buf, sizes[k]));
      } else if (i % 3 == 1) {
        CHECK_OK (tbq_writer_reserve (w, 1, sizes[k], &p));
        CHECK_OK (tbq_writer_commit (w));
      } else {
        tbq_session_begin (w, &s);
        while (tbq_session_reserve (&s, 1, sizes[k]) == NULL)
          CHECK_OK (tbq_session_next_block (&s));
        tbq_session_end (&s);
      }
      copier_step_or_fail (q);
      CHECK_OK (tbq_reader_next (r, &rec));
      CHECK_EQ (rec.size, sizes[k]);
    }
    counting = 0;
    counts_print ("same-size large records");
    CHECK_EQ (counts_total (), 0);
    CHECK_EQ (stats_of (q).extents.allocations - allocated, 2);
  }
  free (buf);
  tbq_queue_free (q, NULL, NULL);
}

TAP_MAIN (TAP_TEST (writer_steady_state_allocates_nothing),
    TAP_TEST (writer_allocates_nothing_once_its_pool_has_grown),
    TAP_TEST (writer_allocates_nothing_with_coalescing_and_batched_publish),
    TAP_TEST (writer_allocates_nothing_when_dropping),
    TAP_TEST (writer_allocates_nothing_while_waiting_for_space),
    TAP_TEST (same_size_large_records_allocate_nothing_once_warm))
