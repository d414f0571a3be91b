/* lib-bench contenders written in C: libtbq (three ways of writing),
 * Concurrency Kit's ck_ring (SPSC), GLib's GAsyncQueue, and a plain array
 * (reference for instruction counts only).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each producer loop is instantiated per payload size (a compile-time
 * constant, as a user's record type would be) and per timing mode, so that
 * the queue's write path is inlined where the queue allows it and no call
 * through a pointer happens per record.
 */
#include "lib-bench.h"

#include <tbq.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_HAVE_CK
#include <ck_ring.h>
#endif
#ifdef BENCH_HAVE_GLIB
#include <glib.h>
#endif

#define UNLIKELY(x) __builtin_expect (!!(x), 0)

/* ---- the producer loop ------------------------------------------------ */

/* Writes records [seq0, seq0 + n); WRITE uses `p_` (the payload words) and
 * `seq_`.  TIMED: store one bench_ticks() delta per complete group.
 * Payloads above 8 bytes are built BENCH_AHEAD records ahead in a small
 * ring (see lib-bench.h). */
#define BENCH_SEND_LOOP(SIZE, TIMED, ticks, WRITE)                          \
  do {                                                                      \
    uint64_t seq_ = seq0, end_ = seq0 + n;                                  \
    uint64_t *tk_ = (ticks);                                                \
    uint64_t ring_[BENCH_RING][(SIZE) / 8];                                 \
    unsigned k_;                                                            \
    if ((SIZE) > 8)                                                         \
      for (k_ = 0; k_ < BENCH_AHEAD; k_++)                                  \
        bench_payload_fill (ring_[(seq0 + k_) % BENCH_RING], (SIZE),        \
            seq0 + k_);                                                     \
    while (seq_ < end_) {                                                   \
      uint64_t gend_ = end_ - seq_ > BENCH_GROUP ? seq_ + BENCH_GROUP : end_; \
      int full_ = gend_ - seq_ == BENCH_GROUP;                              \
      uint64_t t0_ = (TIMED) ? bench_ticks () : 0;                          \
      for (; seq_ < gend_; seq_++) {                                        \
        uint64_t one_[1];                                                   \
        uint64_t *p_;                                                       \
        if ((SIZE) > 8) {                                                   \
          p_ = ring_[seq_ % BENCH_RING];                                    \
        } else {                                                            \
          one_[0] = seq_;                                                   \
          p_ = one_;                                                        \
        }                                                                   \
        WRITE;                                                              \
        if ((SIZE) > 8)                                                     \
          bench_payload_fill (ring_[(seq_ + BENCH_AHEAD) % BENCH_RING],     \
              (SIZE), seq_ + BENCH_AHEAD);                                  \
      }                                                                     \
      if ((TIMED) && full_)                                                 \
        *tk_++ = bench_ticks () - t0_;                                      \
    }                                                                       \
    (void) tk_;                                                             \
    (void) ring_;                                                           \
    (void) k_;                                                              \
  } while (0)

/* Defines PREFIX_send (dispatch on size and timing) from a per-size body
 * macro BODY(SIZE, TIMED) that runs in a function with `c`, `seq0`, `n`,
 * `ticks` in scope. */
#define BENCH_DEFINE_SEND(PREFIX, CTX, BODY)                                \
  static void PREFIX##_8u (CTX * c, uint64_t seq0, uint64_t n, uint64_t * ticks) { (void) ticks; BODY (8, 0); } \
  static void PREFIX##_16u (CTX * c, uint64_t seq0, uint64_t n, uint64_t * ticks) { (void) ticks; BODY (16, 0); } \
  static void PREFIX##_32u (CTX * c, uint64_t seq0, uint64_t n, uint64_t * ticks) { (void) ticks; BODY (32, 0); } \
  static void PREFIX##_64u (CTX * c, uint64_t seq0, uint64_t n, uint64_t * ticks) { (void) ticks; BODY (64, 0); } \
  static void PREFIX##_8t (CTX * c, uint64_t seq0, uint64_t n, uint64_t * ticks) { BODY (8, 1); } \
  static void PREFIX##_16t (CTX * c, uint64_t seq0, uint64_t n, uint64_t * ticks) { BODY (16, 1); } \
  static void PREFIX##_32t (CTX * c, uint64_t seq0, uint64_t n, uint64_t * ticks) { BODY (32, 1); } \
  static void PREFIX##_64t (CTX * c, uint64_t seq0, uint64_t n, uint64_t * ticks) { BODY (64, 1); } \
  static void                                                               \
  PREFIX##_send (void *ctx, uint64_t seq0, uint64_t n, uint64_t * ticks)    \
  {                                                                         \
    CTX *c = ctx;                                                           \
    switch (c->size) {                                                      \
      case 8: (ticks ? PREFIX##_8t : PREFIX##_8u) (c, seq0, n, ticks); break; \
      case 16: (ticks ? PREFIX##_16t : PREFIX##_16u) (c, seq0, n, ticks); break; \
      case 32: (ticks ? PREFIX##_32t : PREFIX##_32u) (c, seq0, n, ticks); break; \
      default: (ticks ? PREFIX##_64t : PREFIX##_64u) (c, seq0, n, ticks); break; \
    }                                                                       \
  }

/* ---- consumer-side verification ---------------------------------------- */

typedef struct
{
  _Alignas (64) _Atomic uint64_t received;      /* consumer-owned */
  uint64_t next_seq;
  uint64_t errors;
  uint64_t first_expected;
  uint64_t first_got;
  uint64_t sleeps;
  unsigned size;
  _Alignas (64) _Atomic int stop;
} Verifier;

static void
verifier_init (Verifier * v, unsigned size)
{
  memset (v, 0, sizeof *v);
  atomic_init (&v->received, 0);
  atomic_init (&v->stop, 0);
  v->size = size;
}

static BENCH_NOINLINE void
verifier_fail (Verifier * v, uint64_t expected, uint64_t got)
{
  if (v->errors++ == 0) {
    v->first_expected = expected;
    v->first_got = got;
  }
}

/* Check one record (its payload and its length) and count it. */
static inline void
verifier_take (Verifier * v, const void *data, uint32_t size)
{
  uint64_t seq = v->next_seq;
  int ok;

  switch (v->size) {
    case 8:
      ok = bench_payload_check (data, 8, seq);
      break;
    case 16:
      ok = bench_payload_check (data, 16, seq);
      break;
    case 32:
      ok = bench_payload_check (data, 32, seq);
      break;
    default:
      ok = bench_payload_check (data, 64, seq);
      break;
  }
  if (UNLIKELY (!ok || size != v->size))
    verifier_fail (v, seq, size != v->size ? size : bench_payload_seq (data));
  v->next_seq = seq + 1;
  /* Owner-only counter: a plain store, read by the driver. */
  atomic_store_explicit (&v->received, seq + 1, memory_order_release);
}

static void
verifier_counters (Verifier * v, BenchCounters * bc)
{
  bc->received = atomic_load_explicit (&v->received, memory_order_acquire);
  bc->errors = v->errors;
  bc->first_error_expected = v->first_expected;
  bc->first_error_got = v->first_got;
  bc->consumer_sleeps = v->sleeps;
}

static void
idle_sleep (Verifier * v, int64_t ns)
{
  struct timespec ts = { 0, ns };

  v->sleeps++;
  nanosleep (&ts, NULL);
}

/* ---- libtbq ------------------------------------------------------------- */

enum
{
  TBQ_MODE_WRITE,               /* tbq_writer_write, publish every record */
  TBQ_MODE_WRITE_BATCH,         /* tbq_writer_write, publish at hand-off */
  TBQ_MODE_SESSION,             /* inline session API */
};

typedef struct
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  unsigned size;
  int mode;
  int started;
  uint64_t sent;
  uint64_t failed_attempts;
  uint64_t pressured;
  Verifier v;
} TbqCtx;

static void
tbq_consume (const TbqRecord * rec, void *user_data)
{
  TbqCtx *c = user_data;

  if (UNLIKELY (rec->type != BENCH_TBQ_TYPE))
    verifier_fail (&c->v, c->v.next_seq, rec->type);
  verifier_take (&c->v, rec->data, rec->size);
}

static void *
tbq_open (const BenchQueueConfig * cfg, char *err, size_t err_size, int mode)
{
  TbqCtx *c = calloc (1, sizeof *c);
  TbqConfig tc;
  size_t span = TBQ_RECORD_SPAN (cfg->size);
  size_t per_block = (cfg->tbq_block_size - TBQ_BLOCK_HEADER_SIZE) / span;
  size_t blocks = (cfg->capacity + per_block - 1) / per_block;
  char msg[256];
  TbqStatus st;

  if (c == NULL)
    return NULL;
  if (blocks < 2)
    blocks = 2;
  verifier_init (&c->v, cfg->size);
  c->size = cfg->size;
  c->mode = mode;
  tbq_config_init (&tc);
  /* The source layer alone holds `capacity` records; the sink layer as
   * many.  Everything pre-allocated and pre-faulted, nothing released. */
  tc.source.block_size = cfg->tbq_block_size;
  tc.source.min_blocks = tc.source.max_blocks = blocks;
  tc.source.max_idle_blocks = blocks;
  tc.sink = tc.source;
  tc.backpressure = TBQ_BACKPRESSURE_BLOCK;
  tc.block_timeout_ns = -1;
  tc.publish = mode == TBQ_MODE_WRITE ? TBQ_PUBLISH_EVERY_RECORD
      : TBQ_PUBLISH_AT_HANDOFF;
  tc.wake = TBQ_WAKE_IMMEDIATE;
  tc.spin_iterations = cfg->idle_spins;
  st = tbq_queue_new (&tc, &c->q, msg, sizeof msg);
  if (st != TBQ_OK) {
    snprintf (err, err_size, "tbq_queue_new: %s: %s",
        tbq_status_to_string (st), msg);
    free (c);
    return NULL;
  }
  if ((st = tbq_writer_new (c->q, &c->w)) != TBQ_OK
      || (st = tbq_reader_new (c->q, &c->r)) != TBQ_OK) {
    snprintf (err, err_size, "tbq writer/reader: %s",
        tbq_status_to_string (st));
    tbq_queue_free (c->q, NULL, NULL);
    free (c);
    return NULL;
  }
  if (!cfg->defer_start) {
    tbq_queue_start (c->q);
    tbq_consumer_start (c->r, tbq_consume, c);
    c->started = 1;
  }
  return c;
}

static void
tbq_start (void *ctx)
{
  TbqCtx *c = ctx;

  if (!c->started) {
    tbq_queue_start (c->q);
    tbq_consumer_start (c->r, tbq_consume, c);
    c->started = 1;
  }
}

static void *
tbq_open_write (const BenchQueueConfig * cfg, char *err, size_t err_size)
{
  return tbq_open (cfg, err, err_size, TBQ_MODE_WRITE);
}

static void *
tbq_open_write_batch (const BenchQueueConfig * cfg, char *err, size_t err_size)
{
  return tbq_open (cfg, err, err_size, TBQ_MODE_WRITE_BATCH);
}

static void *
tbq_open_session (const BenchQueueConfig * cfg, char *err, size_t err_size)
{
  return tbq_open (cfg, err, err_size, TBQ_MODE_SESSION);
}

/* A refused write (backpressure gave up): count it and try again. */
static BENCH_NOINLINE void
tbq_write_retry (TbqCtx * c, const void *p, unsigned size, TbqStatus st)
{
  c->pressured++;
  do {
    if (st == TBQ_TOO_LARGE || st == TBQ_INVALID_ARGUMENT) {
      fprintf (stderr, "lib-bench: tbq_writer_write: %s\n",
          tbq_status_to_string (st));
      abort ();
    }
    c->failed_attempts++;
    st = tbq_writer_write (c->w, BENCH_TBQ_TYPE, p, size);
  } while (st != TBQ_OK);
}

/* tbq_session_next_block() refused (backpressure gave up): count it.  The
 * session itself is not passed out of line, so that the compiler keeps it
 * in registers, as a user's loop would. */
static BENCH_NOINLINE void
tbq_session_failed (TbqCtx * c, TbqStatus st)
{
  c->failed_attempts++;
  if (st != TBQ_TIMEOUT && st != TBQ_DROPPED && st != TBQ_INTERRUPTED) {
    fprintf (stderr, "lib-bench: tbq_session_next_block: %s\n",
        tbq_status_to_string (st));
    abort ();
  }
}

#define TBQ_WRITE_BODY(SIZE, TIMED)                                          \
  BENCH_SEND_LOOP (SIZE, TIMED, ticks, {                                     \
        TbqStatus st_ = tbq_writer_write (c->w, BENCH_TBQ_TYPE, p_, SIZE);   \
        if (UNLIKELY (st_ != TBQ_OK))                                        \
          tbq_write_retry (c, p_, SIZE, st_);                                \
      })

BENCH_DEFINE_SEND (tbq_write_loop, TbqCtx, TBQ_WRITE_BODY);

#define TBQ_SESSION_BODY(SIZE, TIMED)                                        \
  do {                                                                       \
    TbqSession s_;                                                           \
    tbq_session_begin (c->w, &s_);                                           \
    BENCH_SEND_LOOP (SIZE, TIMED, ticks, {                                   \
          while (UNLIKELY (tbq_session_write (&s_, BENCH_TBQ_TYPE, p_, SIZE) \
                  != TBQ_OK)) {                                              \
            TbqStatus nb_ = tbq_session_next_block (&s_);                    \
            if (UNLIKELY (nb_ != TBQ_OK))                                    \
              tbq_session_failed (c, nb_);                                   \
          }                                                                  \
        });                                                                  \
    tbq_session_end (&s_);                                                   \
  } while (0)

BENCH_DEFINE_SEND (tbq_session_loop, TbqCtx, TBQ_SESSION_BODY);

static void
tbq_send (void *ctx, uint64_t seq0, uint64_t n, uint64_t * ticks)
{
  TbqCtx *c = ctx;

  if (c->mode == TBQ_MODE_SESSION) {
    tbq_session_loop_send (c, seq0, n, ticks);
  } else {
    tbq_write_loop_send (c, seq0, n, ticks);
    /* Batched publish: make the tail of this send visible too. */
    if (c->mode == TBQ_MODE_WRITE_BATCH)
      tbq_writer_flush (c->w);
  }
  c->sent += n;
}

BENCH_NOINLINE void bench_cg_tbq_write (void *ctx, uint64_t seq0, uint64_t n);
BENCH_NOINLINE void bench_cg_tbq_write_batch (void *ctx, uint64_t seq0,
    uint64_t n);
BENCH_NOINLINE void bench_cg_tbq_session (void *ctx, uint64_t seq0,
    uint64_t n);

BENCH_NOINLINE void
bench_cg_tbq_write (void *ctx, uint64_t seq0, uint64_t n)
{
  tbq_send (ctx, seq0, n, NULL);
}

BENCH_NOINLINE void
bench_cg_tbq_write_batch (void *ctx, uint64_t seq0, uint64_t n)
{
  tbq_send (ctx, seq0, n, NULL);
}

BENCH_NOINLINE void
bench_cg_tbq_session (void *ctx, uint64_t seq0, uint64_t n)
{
  tbq_send (ctx, seq0, n, NULL);
}

static uint64_t
tbq_received (void *ctx)
{
  TbqCtx *c = ctx;

  return atomic_load_explicit (&c->v.received, memory_order_acquire);
}

static void
tbq_counters (void *ctx, BenchCounters * bc)
{
  TbqCtx *c = ctx;
  TbqStats st;

  memset (bc, 0, sizeof *bc);
  verifier_counters (&c->v, bc);
  tbq_queue_get_stats (c->q, &st);
  bc->sent = c->sent;
  bc->failed_attempts = c->failed_attempts;
  bc->pressured = c->pressured;
  bc->pressure_waits = st.pressure_waits;
  bc->handoffs = st.handoffs;
  bc->copier_wakeups = st.copier_wakeups;
  /* The queue's own books must agree with ours. */
  if (st.records_in != c->sent || st.records_out != bc->received) {
    if (bc->errors == 0) {
      bc->first_error_expected = c->sent;
      bc->first_error_got = st.records_in;
    }
    bc->errors++;
  }
}

static void
tbq_close (void *ctx)
{
  TbqCtx *c = ctx;

  if (c->started)
    tbq_consumer_stop (c->r);
  tbq_queue_free (c->q, NULL, NULL);
  free (c);
}

/* ---- Concurrency Kit ck_ring, SPSC, records stored in the ring ---------- */

#ifdef BENCH_HAVE_CK
struct bench_rec8
{
  uint64_t w[1];
};
struct bench_rec16
{
  uint64_t w[2];
};
struct bench_rec32
{
  uint64_t w[4];
};
struct bench_rec64
{
  uint64_t w[8];
};
CK_RING_PROTOTYPE (r8, bench_rec8);
CK_RING_PROTOTYPE (r16, bench_rec16);
CK_RING_PROTOTYPE (r32, bench_rec32);
CK_RING_PROTOTYPE (r64, bench_rec64);

typedef struct
{
  _Alignas (64) struct ck_ring ring;
  void *buf;
  unsigned size;
  uint32_t idle_spins;
  int64_t idle_sleep_ns;
  int started;
  pthread_t consumer;
  uint64_t sent;
  uint64_t failed_attempts;
  uint64_t pressured;
  Verifier v;
} CkCtx;

/* Dequeue one record into `out`; 1 if there was one. */
static inline int
ck_take (CkCtx * c, uint64_t * out)
{
  switch (c->size) {
    case 8:
      return ck_ring_dequeue_spsc_r8 (&c->ring, c->buf,
          (struct bench_rec8 *) out);
    case 16:
      return ck_ring_dequeue_spsc_r16 (&c->ring, c->buf,
          (struct bench_rec16 *) out);
    case 32:
      return ck_ring_dequeue_spsc_r32 (&c->ring, c->buf,
          (struct bench_rec32 *) out);
    default:
      return ck_ring_dequeue_spsc_r64 (&c->ring, c->buf,
          (struct bench_rec64 *) out);
  }
}

static void *
ck_consumer_main (void *arg)
{
  CkCtx *c = arg;
  uint64_t rec[BENCH_MAX_SIZE / 8];
  uint32_t idle = 0;

  for (;;) {
    if (ck_take (c, rec)) {
      verifier_take (&c->v, rec, c->size);
      idle = 0;
      continue;
    }
    if (atomic_load_explicit (&c->v.stop, memory_order_acquire)) {
      if (!ck_take (c, rec))
        break;
      verifier_take (&c->v, rec, c->size);
      continue;
    }
    if (++idle < c->idle_spins) {
      bench_cpu_relax ();
    } else {
      idle_sleep (&c->v, c->idle_sleep_ns);
      idle = 0;
    }
  }
  return NULL;
}

static void
ck_start (void *ctx)
{
  CkCtx *c = ctx;

  if (!c->started && pthread_create (&c->consumer, NULL, ck_consumer_main,
          c) == 0)
    c->started = 1;
}

static void *
ck_open (const BenchQueueConfig * cfg, char *err, size_t err_size)
{
  CkCtx *c = aligned_alloc (64, (sizeof (CkCtx) + 63) & ~(size_t) 63);
  unsigned slots = 2;

  if (c == NULL)
    return NULL;
  memset (c, 0, sizeof *c);
  /* ck_ring holds size - 1 entries; size a power of two. */
  while (slots < cfg->capacity + 1 && slots < (1u << 30))
    slots *= 2;
  if (slots / 2 >= cfg->capacity)
    slots /= 2;                 /* capacity a power of two: one short */
  c->buf = aligned_alloc (64, (size_t) slots * cfg->size);
  if (c->buf == NULL) {
    snprintf (err, err_size, "ck_ring: out of memory");
    free (c);
    return NULL;
  }
  /* Pre-fault, as libtbq's pools are. */
  memset (c->buf, 0, (size_t) slots * cfg->size);
  ck_ring_init (&c->ring, slots);
  verifier_init (&c->v, cfg->size);
  c->size = cfg->size;
  c->idle_spins = cfg->idle_spins;
  c->idle_sleep_ns = cfg->idle_sleep_ns;
  if (!cfg->defer_start)
    ck_start (c);
  return c;
}

static BENCH_NOINLINE void
ck_retry_wait (CkCtx * c, uint64_t * fails)
{
  if (*fails == 0)
    c->pressured++;
  c->failed_attempts++;
  if (++*fails % 1024 == 0)
    sched_yield ();
  else
    bench_cpu_relax ();
}

#define CK_BODY(SIZE, TIMED)                                                 \
  BENCH_SEND_LOOP (SIZE, TIMED, ticks, {                                     \
        uint64_t f_ = 0;                                                     \
        while (UNLIKELY (!ck_ring_enqueue_spsc_r##SIZE (&c->ring, c->buf,    \
                    (struct bench_rec##SIZE *) p_)))                         \
          ck_retry_wait (c, &f_);                                            \
      })

BENCH_DEFINE_SEND (ck_loop, CkCtx, CK_BODY);

static void
ck_send (void *ctx, uint64_t seq0, uint64_t n, uint64_t * ticks)
{
  CkCtx *c = ctx;

  ck_loop_send (c, seq0, n, ticks);
  c->sent += n;
}

BENCH_NOINLINE void bench_cg_ck_ring (void *ctx, uint64_t seq0, uint64_t n);

BENCH_NOINLINE void
bench_cg_ck_ring (void *ctx, uint64_t seq0, uint64_t n)
{
  ck_send (ctx, seq0, n, NULL);
}

static uint64_t
ck_received (void *ctx)
{
  CkCtx *c = ctx;

  return atomic_load_explicit (&c->v.received, memory_order_acquire);
}

static void
ck_counters (void *ctx, BenchCounters * bc)
{
  CkCtx *c = ctx;

  memset (bc, 0, sizeof *bc);
  verifier_counters (&c->v, bc);
  bc->sent = c->sent;
  bc->failed_attempts = c->failed_attempts;
  bc->pressured = c->pressured;
}

static void
ck_close (void *ctx)
{
  CkCtx *c = ctx;

  if (c->started) {
    atomic_store_explicit (&c->v.stop, 1, memory_order_release);
    pthread_join (c->consumer, NULL);
  }
  free (c->buf);
  free (c);
}
#endif /* BENCH_HAVE_CK */

/* ---- GLib GAsyncQueue: one g_malloc'ed copy per record ----------------- */

#ifdef BENCH_HAVE_GLIB
typedef struct
{
  GAsyncQueue *q;
  unsigned size;
  uint64_t capacity;
  int started;
  pthread_t consumer;
  uint64_t sent;
  uint64_t failed_attempts;
  uint64_t pressured;
  Verifier v;
} GaqCtx;

static int gaq_stop_token;

static void *
gaq_consumer_main (void *arg)
{
  GaqCtx *c = arg;

  for (;;) {
    void *m = g_async_queue_pop (c->q);

    if (m == &gaq_stop_token)
      break;
    verifier_take (&c->v, m, c->size);
    g_free (m);
  }
  return NULL;
}

static void
gaq_start (void *ctx)
{
  GaqCtx *c = ctx;

  if (!c->started && pthread_create (&c->consumer, NULL, gaq_consumer_main,
          c) == 0)
    c->started = 1;
}

static void *
gaq_open (const BenchQueueConfig * cfg, char *err, size_t err_size)
{
  GaqCtx *c = aligned_alloc (64, (sizeof (GaqCtx) + 63) & ~(size_t) 63);

  (void) err;
  (void) err_size;
  if (c == NULL)
    return NULL;
  memset (c, 0, sizeof *c);
  c->q = g_async_queue_new ();
  c->size = cfg->size;
  c->capacity = cfg->capacity;
  verifier_init (&c->v, cfg->size);
  if (!cfg->defer_start)
    gaq_start (c);
  return c;
}

/* GAsyncQueue is unbounded: the harness bounds the backlog to `capacity`
 * records like the other queues, waiting while it is full. */
static BENCH_NOINLINE void
gaq_wait_room (GaqCtx * c, uint64_t seq)
{
  uint64_t fails = 0;

  while (seq - atomic_load_explicit (&c->v.received, memory_order_acquire)
      >= c->capacity) {
    if (fails++ == 0)
      c->pressured++;
    c->failed_attempts++;
    if (fails % 1024 == 0)
      sched_yield ();
    else
      bench_cpu_relax ();
  }
}

#define GAQ_BODY(SIZE, TIMED)                                                \
  BENCH_SEND_LOOP (SIZE, TIMED, ticks, {                                     \
        void *m_;                                                            \
        if (UNLIKELY (seq_ - atomic_load_explicit (&c->v.received,           \
                      memory_order_relaxed) >= c->capacity))                 \
          gaq_wait_room (c, seq_);                                           \
        m_ = g_malloc (SIZE);                                                \
        memcpy (m_, p_, SIZE);                                               \
        g_async_queue_push (c->q, m_);                                       \
      })

BENCH_DEFINE_SEND (gaq_loop, GaqCtx, GAQ_BODY);

static void
gaq_send (void *ctx, uint64_t seq0, uint64_t n, uint64_t * ticks)
{
  GaqCtx *c = ctx;

  gaq_loop_send (c, seq0, n, ticks);
  c->sent += n;
}

BENCH_NOINLINE void bench_cg_gasyncqueue (void *ctx, uint64_t seq0,
    uint64_t n);

BENCH_NOINLINE void
bench_cg_gasyncqueue (void *ctx, uint64_t seq0, uint64_t n)
{
  gaq_send (ctx, seq0, n, NULL);
}

static uint64_t
gaq_received (void *ctx)
{
  GaqCtx *c = ctx;

  return atomic_load_explicit (&c->v.received, memory_order_acquire);
}

static void
gaq_counters (void *ctx, BenchCounters * bc)
{
  GaqCtx *c = ctx;

  memset (bc, 0, sizeof *bc);
  verifier_counters (&c->v, bc);
  bc->sent = c->sent;
  bc->failed_attempts = c->failed_attempts;
  bc->pressured = c->pressured;
}

static void
gaq_close (void *ctx)
{
  GaqCtx *c = ctx;
  void *m;

  if (c->started) {
    g_async_queue_push (c->q, &gaq_stop_token);
    pthread_join (c->consumer, NULL);
  }
  while ((m = g_async_queue_try_pop (c->q)) != NULL)
    if (m != &gaq_stop_token)
      g_free (m);
  g_async_queue_unref (c->q);
  free (c);
}
#endif /* BENCH_HAVE_GLIB */

/* ---- plain array: the loop and payload alone (callgrind reference) ----- */

typedef struct
{
  unsigned char *arr;
  uint64_t capacity;
  unsigned size;
  uint64_t sent;
  Verifier v;
} ArrCtx;

static void *
arr_open (const BenchQueueConfig * cfg, char *err, size_t err_size)
{
  ArrCtx *c = aligned_alloc (64, (sizeof (ArrCtx) + 63) & ~(size_t) 63);

  if (c == NULL)
    return NULL;
  memset (c, 0, sizeof *c);
  c->capacity = cfg->capacity;
  c->size = cfg->size;
  c->arr = aligned_alloc (64, cfg->capacity * cfg->size);
  if (c->arr == NULL) {
    snprintf (err, err_size, "array: out of memory");
    free (c);
    return NULL;
  }
  memset (c->arr, 0, cfg->capacity * cfg->size);
  verifier_init (&c->v, cfg->size);
  return c;
}


#define ARR_BODY(SIZE, TIMED)                                                \
  do {                                                                       \
    unsigned char *a_ = c->arr;                                              \
    uint64_t cap_ = c->capacity;                                             \
    BENCH_SEND_LOOP (SIZE, TIMED, ticks,                                     \
        memcpy (a_ + (seq_ % cap_) * (SIZE), p_, SIZE));                     \
  } while (0)

BENCH_DEFINE_SEND (arr_loop, ArrCtx, ARR_BODY);

/* The "consumer": check the newest `capacity` records written so far. */
static void
arr_check (ArrCtx * c)
{
  uint64_t s = c->sent > c->capacity ? c->sent - c->capacity : 0;

  c->v.next_seq = s;
  for (; s < c->sent; s++)
    verifier_take (&c->v, c->arr + (s % c->capacity) * c->size, c->size);
  atomic_store_explicit (&c->v.received, c->sent, memory_order_release);
}

static void
arr_start (void *ctx)
{
  arr_check (ctx);
}


static void
arr_send (void *ctx, uint64_t seq0, uint64_t n, uint64_t * ticks)
{
  ArrCtx *c = ctx;

  arr_loop_send (c, seq0, n, ticks);
  c->sent += n;
  arr_check (c);
}

BENCH_NOINLINE void bench_cg_array (void *ctx, uint64_t seq0, uint64_t n);

BENCH_NOINLINE void
bench_cg_array (void *ctx, uint64_t seq0, uint64_t n)
{
  arr_loop_send (ctx, seq0, n, NULL);
  ((ArrCtx *) ctx)->sent += n;
}

static uint64_t
arr_received (void *ctx)
{
  ArrCtx *c = ctx;

  return atomic_load_explicit (&c->v.received, memory_order_acquire);
}

static void
arr_counters (void *ctx, BenchCounters * bc)
{
  ArrCtx *c = ctx;

  memset (bc, 0, sizeof *bc);
  verifier_counters (&c->v, bc);
  bc->sent = c->sent;
}

static void
arr_close (void *ctx)
{
  ArrCtx *c = ctx;

  free (c->arr);
  free (c);
}

/* ---- registry ------------------------------------------------------------ */

static const BenchContender c_contenders[] = {
  {
        .name = "tbq-session",
        .label = "libtbq session",
        .notes = "inline TbqSession: tbq_session_write() per record, publish "
        "at block hand-off and at session end (once per send); BLOCK "
        "backpressure",
        .threads = 3,
        .open = tbq_open_session,.start = tbq_start,.send = tbq_send,
        .cg_send = bench_cg_tbq_session,.received = tbq_received,
        .counters = tbq_counters,.close = tbq_close,
      },
  {
        .name = "tbq-write-batch",
        .label = "libtbq write, batch publish",
        .notes = "tbq_writer_write() per record, TBQ_PUBLISH_AT_HANDOFF, "
        "tbq_writer_flush() at the end of each send; BLOCK backpressure",
        .threads = 3,
        .open = tbq_open_write_batch,.start = tbq_start,.send = tbq_send,
        .cg_send = bench_cg_tbq_write_batch,.received = tbq_received,
        .counters = tbq_counters,.close = tbq_close,
      },
  {
        .name = "tbq-write",
        .label = "libtbq write, publish every record",
        .notes = "tbq_writer_write() per record, TBQ_PUBLISH_EVERY_RECORD, "
        "immediate wake; BLOCK backpressure",
        .threads = 3,
        .open = tbq_open_write,.start = tbq_start,.send = tbq_send,
        .cg_send = bench_cg_tbq_write,.received = tbq_received,
        .counters = tbq_counters,.close = tbq_close,
      },
#ifdef BENCH_HAVE_CK
  {
        .name = "ck-ring",
        .label = "Concurrency Kit ck_ring SPSC",
        .notes = "CK_RING_PROTOTYPE typed ring: the record is copied into its "
        "slot, the consumer copies it out; 2^k slots hold 2^k - 1 records; "
        "full: pause and retry (yield every 1024 tries)",
        .threads = 2,.spsc = 1,
        .open = ck_open,.start = ck_start,.send = ck_send,
        .cg_send = bench_cg_ck_ring,.received = ck_received,
        .counters = ck_counters,.close = ck_close,
      },
#endif
#ifdef BENCH_HAVE_GLIB
  {
        .name = "gasyncqueue",
        .label = "GLib GAsyncQueue",
        .notes = "pointer queue: g_malloc(size) + memcpy per record, the "
        "consumer verifies and g_free()s; unbounded, so the harness bounds "
        "the backlog to the same capacity (waits and counts when full)",
        .threads = 2,
        .open = gaq_open,.start = gaq_start,.send = gaq_send,
        .cg_send = bench_cg_gasyncqueue,.received = gaq_received,
        .counters = gaq_counters,.close = gaq_close,
      },
#endif
  {
        .name = "array",
        .label = "plain array (reference)",
        .notes = "no queue: the same loop storing each payload into an "
        "array; the producer checks it after each send",
        .threads = 1,.reference = 1,
        .open = arr_open,.start = arr_start,.send = arr_send,
        .cg_send = bench_cg_array,.received = arr_received,
        .counters = arr_counters,.close = arr_close,
      },
};

const BenchContender *
bench_c_contenders (size_t *n)
{
  *n = sizeof c_contenders / sizeof c_contenders[0];
  return c_contenders;
}
