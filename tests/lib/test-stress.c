/* Stress: a producer, the copier thread and a consumer run flat out with
 * random record sizes, random stalls and pools small enough to hit every
 * edge; every byte and the order of every record is checked.  Some
 * records are large: above the inline limit they travel in extents from
 * the sink pool's budget (or inline, where the sink pool is too small for
 * any extent).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Record number `seq` has a size and payload derived from `seq` alone and
 * carries (uint16_t) seq as its type tag, so the consumer can tell which
 * record it holds and check it byte by byte.  With BLOCK backpressure the
 * records must arrive as 0, 1, 2, ...; with DROP they must be a strictly
 * increasing subsequence, and attempts = delivered + dropped exactly.  (To
 * keep the 16-bit tag unambiguous the producer never drops 65,535 records
 * in a row: it makes its next attempt a blocking one.)
 *
 * The CI run takes a few seconds per mode and scales with TBQ_TEST_SCALE.
 * The long run (`test-stress --long` or TBQ_STRESS_LONG=1) moves tens of
 * millions of records per mode and takes about ten minutes or more.
 */
#include "lib-test.h"

#include <stdatomic.h>

/* How many records each mode moves: CI run, and the long run. */
#define CI_RECORDS 2000000
#define LONG_RECORDS 100000000
/* Longest run of drops before the producer makes a blocking attempt. */
#define MAX_DROP_RUN 60000
/* A consumer that gets nothing for this long has hung. */
#define STALL_LIMIT_NS (30 * SEC_NS)

static bool long_run;

typedef struct
{
  const char *name;
  TbqBackpressure backpressure;
  TbqPublishPolicy publish;
  uint32_t publish_every;
  TbqWakePolicy wake;
  bool session;                 /* write through sessions */
  bool callback;                /* tbq_consumer_start() instead of a reader loop */
  bool zero_copy;               /* the consumer holds block references */
  size_t src_block, src_blocks;
  size_t sink_block, sink_min, sink_max;
  double share;                 /* of CI_RECORDS / LONG_RECORDS */
  uint32_t large_every;         /* one record in this many is large */
  uint32_t large_cap;           /* large records: up to this (CI run) */
  int64_t coalesce_ns;          /* TbqConfig.max_coalesce_ns */
} Mode;

/* ---- records ---- */

static inline uint64_t
rng_next (uint64_t * s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Sizes 0..max, mostly small: 3/4 up to 32 bytes, 3/16 up to 256, the rest
 * anything up to the largest record a block holds; one in `large_every`
 * anything up to `large` (beyond the blocks, in extents). */
static inline uint32_t
size_for (uint64_t seq, uint32_t max, uint32_t large_every, uint32_t large)
{
  uint64_t r = mix64 (seq ^ 0x5eed5eed5eedull);
  uint32_t bucket = (uint32_t) (r & 15), lim;

  if ((r >> 40) % large_every == 0)
    return (uint32_t) ((r >> 8) % ((uint64_t) large + 1));
  r >>= 8;
  if (bucket < 12)
    lim = 32;
  else if (bucket < 15)
    lim = 256;
  else
    lim = max;
  if (lim > max)
    lim = max;
  return (uint32_t) (r % ((uint64_t) lim + 1));
}

/* ---- shared state ---- */

typedef struct
{
  const Mode *m;
  TbqQueue *q;
  TbqReader *r;
  uint32_t max;
  uint32_t large;               /* largest of the large records */
  uint64_t attempts;

  /* Producer -> consumer: set once the producer is done. */
  _Atomic int done;
  _Atomic uint64_t accepted;

  /* Consumer state (one thread at a time). */
  uint64_t delivered;
  uint64_t last;                /* last delivered seq, valid if delivered > 0 */
  uint64_t rng;
  TbqRecord held[8];            /* zero-copy references kept for a while */
  uint64_t held_seq[8];
  unsigned n_held;
  char error[256];
  _Atomic int failed;
} Run;

static void
run_fail (Run * run, const char *what, uint64_t a, uint64_t b)
{
  if (!atomic_exchange (&run->failed, 1))
    snprintf (run->error, sizeof run->error, "%s (%" PRIu64 ", %" PRIu64 ")",
        what, a, b);
}

/* Release one held reference after checking its bytes are still intact. */
static void
drop_held (Run * run, unsigned i)
{
  TbqRecord *h = &run->held[i];

  if (payload_mismatch (h->data, h->size, run->held_seq[i]) >= 0)
    run_fail (run, "held record changed", run->held_seq[i], h->size);
  tbq_block_unref (h->block);
  run->held[i] = run->held[--run->n_held];
  run->held_seq[i] = run->held_seq[run->n_held];
}

/* Check one delivered record; false once the run has failed. */
static bool
consume (Run * run, const TbqRecord * rec, bool may_hold)
{
  uint64_t seq, next = run->delivered ? run->last + 1 : 0;
  int64_t bad;

  if (atomic_load_explicit (&run->failed, memory_order_relaxed))
    return false;
  if (run->m->backpressure == TBQ_BACKPRESSURE_BLOCK)
    seq = next;
  else
    seq = next + (uint16_t) (rec->type - (uint16_t) next);
  if (rec->type != (uint16_t) seq || seq >= run->attempts) {
    run_fail (run, "record out of order: expected, type", next, rec->type);
    return false;
  }
  if (rec->size != size_for (seq, run->max, run->m->large_every,
          run->large)) {
    run_fail (run, "wrong size: seq, size", seq, rec->size);
    return false;
  }
  bad = payload_mismatch (rec->data, rec->size, seq);
  if (bad >= 0) {
    run_fail (run, "corrupt byte: seq, offset", seq, (uint64_t) bad);
    return false;
  }
  run->last = seq;
  run->delivered++;

  /* Now and then: stall, or keep the record's block referenced. */
  {
    uint64_t r = rng_next (&run->rng);

    if (r % 20011 == 0)
      sleep_ns ((int64_t) ((r >> 20) % 2000000));
    if (may_hold && run->m->zero_copy) {
      if (run->n_held > 0 && (r >> 8) % 97 == 0)
        drop_held (run, (unsigned) ((r >> 16) % run->n_held));
      if (run->n_held < 8 && (r >> 24) % 89 == 0) {
        tbq_block_ref (rec->block);
        run->held[run->n_held] = *rec;
        run->held_seq[run->n_held++] = seq;
      }
    }
  }
  return true;
}

static void *
reader_main (void *arg)
{
  Run *run = arg;
  int64_t last_progress = now_ns ();

  for (;;) {
    TbqRecord rec;
    TbqStatus st = tbq_reader_next (run->r, &rec);

    if (st == TBQ_OK) {
      if (!consume (run, &rec, true))
        break;
      last_progress = now_ns ();
      continue;
    }
    if (atomic_load_explicit (&run->done, memory_order_acquire)
        && run->delivered == atomic_load (&run->accepted))
      break;
    /* Held blocks may be all the sink pool has: let go before waiting, or
     * the copier could never make progress. */
    while (run->n_held > 0)
      drop_held (run, 0);
    st = tbq_reader_wait (run->r, SEC_NS);
    if (st != TBQ_OK && st != TBQ_TIMEOUT) {
      run_fail (run, "reader wait failed: status", st, 0);
      break;
    }
    if (now_ns () - last_progress > STALL_LIMIT_NS) {
      run_fail (run, "no progress: delivered, accepted", run->delivered,
          atomic_load (&run->accepted));
      break;
    }
  }
  while (run->n_held > 0)
    drop_held (run, 0);
  return NULL;
}

static void
consume_cb (const TbqRecord * rec, void *user_data)
{
  /* Bytes are only valid during the call: no holding here. */
  consume (user_data, rec, false);
}

/* ---- producer ---- */

typedef struct
{
  Run *run;
  TbqWriter *w;
  TbqSession s;
  bool in_session;
  uint64_t accepted, dropped, drop_run;
  uint64_t rng;
  unsigned char *buf;           /* room for the largest record */
} Producer;

static void
producer_fail (const char *what, TbqStatus st)
{
  printf ("# %s: %s\n", what, tbq_status_to_string (st));
  fflush (stdout);
  _exit (1);
}

/* After a run of drops the next attempt blocks (see the file comment). */
static void
before_attempt (Producer * p)
{
  if (p->run->m->backpressure == TBQ_BACKPRESSURE_DROP
      && p->drop_run == MAX_DROP_RUN)
    tbq_writer_set_backpressure (p->w, TBQ_BACKPRESSURE_BLOCK, -1);
}

static void
after_attempt (Producer * p, TbqStatus st)
{
  if (st == TBQ_OK) {
    p->accepted++;
    if (p->drop_run == MAX_DROP_RUN)
      tbq_writer_set_backpressure (p->w, TBQ_BACKPRESSURE_DROP, -1);
    p->drop_run = 0;
  } else if (st == TBQ_DROPPED
      && p->run->m->backpressure == TBQ_BACKPRESSURE_DROP) {
    int64_t until;

    p->dropped++;
    p->drop_run++;
    /* A drop costs nanoseconds: a producer with some work of its own
     * between records leaves the copier a chance to catch up, so drops
     * and deliveries interleave instead of dropping nearly everything. */
    until = now_ns () + (int64_t) (rng_next (&p->rng) % 2000);
    while (now_ns () < until) {
    }
  } else {
    producer_fail ("write", st);
  }
}

static void
produce_one (Producer * p, uint64_t seq)
{
  uint32_t size = size_for (seq, p->run->max, p->run->m->large_every,
      p->run->large);
  uint16_t type = (uint16_t) seq;
  uint64_t r = rng_next (&p->rng);
  TbqStatus st = TBQ_OK;
  void *data;

  before_attempt (p);
  if (p->run->m->session) {
    if (!p->in_session) {
      tbq_session_begin (p->w, &p->s);
      p->in_session = true;
    }
    data = tbq_session_reserve (&p->s, type, size);
    if (data == NULL) {
      st = tbq_session_next_block (&p->s);
      if (st == TBQ_OK)
        data = tbq_session_reserve (&p->s, type, size);
      if (st == TBQ_OK && data == NULL)
        producer_fail ("no room in a fresh block", st);
    }
    if (data != NULL)
      fill_payload (data, size, seq);
    /* Sessions publish at their end: end one every so often. */
    if (r % 61 == 0) {
      tbq_session_end (&p->s);
      p->in_session = false;
    }
  } else if (r & 1) {
    fill_payload (p->buf, size, seq);
    st = tbq_writer_write (p->w, type, p->buf, size);
  } else {
    st = tbq_writer_reserve (p->w, type, size, &data);
    if (st == TBQ_OK) {
      fill_payload (data, size, seq);
      tbq_writer_commit (p->w);
    }
  }
  after_attempt (p, st);

  /* A rare pause lets the copier and consumer fall asleep; a rare flush
   * publishes what the publish policy holds back. */
  if ((r >> 8) % 50021 == 0) {
    if (p->in_session) {
      tbq_session_end (&p->s);
      p->in_session = false;
    }
    sleep_ns ((int64_t) ((r >> 24) % 1000000));
  }
  if ((r >> 8) % 7919 == 0 && !p->in_session)
    tbq_writer_flush (p->w);
}

/* The queue of mode `m`, its run state, and its record sizes. */
static Run *
run_new (const Mode * m)
{
  TbqConfig cfg;
  Run *run;

  tbq_config_init (&cfg);
  cfg.source.block_size = m->src_block;
  cfg.source.min_blocks = m->src_blocks;
  cfg.source.max_blocks = m->src_blocks;
  cfg.source.max_idle_blocks = m->src_blocks;
  cfg.sink.block_size = m->sink_block;
  cfg.sink.min_blocks = m->sink_min;
  cfg.sink.max_blocks = m->sink_max;
  cfg.sink.max_idle_blocks = m->sink_min;
  cfg.backpressure = m->backpressure;
  cfg.publish = m->publish;
  cfg.publish_every = m->publish_every;
  cfg.wake = m->wake;
  cfg.max_coalesce_ns = m->coalesce_ns;

  run = calloc (1, sizeof *run);
  CHECK (run != NULL);
  run->m = m;
  run->q = queue_new_or_fail (&cfg);
  run->max = tbq_queue_max_record_size (run->q);
  /* Large records: beyond a block where the budget allows extents, else
   * (a sink pool too small) up to a block, inline. */
  run->large = tbq_queue_max_extent_size (run->q);
  if (run->large > m->large_cap * (long_run ? 4 : 1))
    run->large = m->large_cap * (long_run ? 4 : 1);
  if (run->large < run->max)
    run->large = run->max;
  return run;
}

static void
run_report (const Run * run, const Producer * p, const TbqStats * st,
    int64_t t0)
{
  printf ("# %s: %" PRIu64 " records: %" PRIu64 " delivered, %" PRIu64
      " dropped, %" PRIu64 " hand-offs, %" PRIu64 " copier wake-ups, %"
      PRIu64 " pressure waits, %" PRIu64 " sink pressure waits; %" PRIu64
      " extents allocated, %" PRIu64 " reused, %" PRIu64 " budget waits; "
      "%.1f s\n", run->m->name, run->attempts, run->delivered, p->dropped,
      st->handoffs, st->copier_wakeups, st->pressure_waits,
      st->sink_pressure_waits, st->extents.allocations,
      st->extents.cache_hits, st->extents.pressure_waits,
      (double) (now_ns () - t0) / 1e9);
}

static void
run_mode (const Mode * m)
{
  Run *run = run_new (m);
  Producer p;
  pthread_t th;
  TbqStats st;
  uint64_t seq;
  int64_t t0 = now_ns ();

  run->attempts = (uint64_t) ((double) (long_run ? LONG_RECORDS : CI_RECORDS)
      * m->share * (long_run ? 1.0 : test_scale ()));
  run->rng = 0x1234567 + (uint64_t) (uintptr_t) m;
  atomic_init (&run->done, 0);
  atomic_init (&run->accepted, 0);
  atomic_init (&run->failed, 0);
  memset (&p, 0, sizeof p);
  p.run = run;
  p.rng = 0x89abcdef;
  p.buf = malloc (run->large > run->max ? run->large : run->max);
  CHECK (p.buf != NULL);
  CHECK_OK (tbq_writer_new (run->q, &p.w));
  CHECK_OK (tbq_reader_new (run->q, &run->r));
  CHECK_OK (tbq_queue_start (run->q));
  if (m->callback)
    CHECK_OK (tbq_consumer_start (run->r, consume_cb, run));
  else
    CHECK (pthread_create (&th, NULL, reader_main, run) == 0);

  for (seq = 0; seq < run->attempts; seq++) {
    produce_one (&p, seq);
    if (atomic_load_explicit (&run->failed, memory_order_relaxed))
      break;
  }
  if (p.in_session)
    tbq_session_end (&p.s);
  tbq_writer_flush (p.w);
  atomic_store (&run->accepted, p.accepted);
  atomic_store_explicit (&run->done, 1, memory_order_release);

  if (m->callback) {
    /* Stopping delivers everything queued before the stop. */
    tbq_consumer_stop (run->r);
  } else {
    tbq_reader_wake (run->r);
    pthread_join (th, NULL);
  }
  if (atomic_load (&run->failed)) {
    printf ("# %s: %s\n", m->name, run->error);
    CHECK (0);
  }
  st = stats_of (run->q);
  run_report (run, &p, &st, t0);
  CHECK_EQ (p.accepted + p.dropped, run->attempts);
  CHECK_EQ (run->delivered, p.accepted);
  if (m->backpressure == TBQ_BACKPRESSURE_BLOCK)
    CHECK_EQ (p.dropped, 0);
  CHECK_EQ (st.records_in, p.accepted);
  CHECK_EQ (st.records_out, run->delivered);
  /* A session that cannot get a fresh block refuses no record of its own:
   * giving up on the record is the caller's drop, not the library's. */
  CHECK_EQ (st.records_dropped, m->session ? 0 : p.dropped);
  CHECK (st.source.blocks_peak <= m->src_blocks);
  CHECK (st.sink.blocks_peak <= m->sink_max);
  /* Sink blocks and extents in use never exceed the budget. */
  CHECK (st.extents.bytes_peak + m->sink_block <= st.extents.budget_limit);
  /* The budget's peak, charged from several threads, is within it and
   * covers the extents' own peak. */
  CHECK (st.extents.budget_peak <= st.extents.budget_limit);
  CHECK (st.extents.budget_peak >= st.extents.bytes_peak);
  CHECK (st.extents.budget_peak >= st.extents.budget_used);
  tbq_queue_free (run->q, NULL, NULL);
  free (p.buf);
  free (run);
}

/* ---- modes ---- */

static const Mode block_default = {
  "block, defaults", TBQ_BACKPRESSURE_BLOCK, TBQ_PUBLISH_EVERY_RECORD, 0,
  TBQ_WAKE_IMMEDIATE, false, false, true,
  4096, 4, 65536, 4, 4096, 1.0, 256, 65536, 0
};

static const Mode drop_tiny_pools = {
  "drop, 2 x 128 B source, 2 x 128 B sink", TBQ_BACKPRESSURE_DROP,
  TBQ_PUBLISH_EVERY_RECORD, 0, TBQ_WAKE_IMMEDIATE, false, false, true,
  128, 2, 128, 2, 2, 0.5, 64, 65536, 0
};

static const Mode block_tiny_pools_sessions = {
  "block, sessions, 2 x 128 B source, 2..4 x 192 B sink",
  TBQ_BACKPRESSURE_BLOCK, TBQ_PUBLISH_EVERY_RECORD, 0, TBQ_WAKE_IMMEDIATE,
  true, false, true, 128, 2, 192, 2, 4, 0.15, 64, 65536, 0
};

static const Mode drop_coalescing_every_n = {
  "drop, coalescing within 100 us, publish every 7, 3 x 512 B source, "
      "3 x 1 KiB sink",
  TBQ_BACKPRESSURE_DROP, TBQ_PUBLISH_EVERY_N, 7, TBQ_WAKE_ON_DEMAND, false,
  false, true, 512, 3, 1024, 3, 3, 0.5, 128, 65536, 100000
};

static const Mode block_coalescing_handoff_consumer = {
  "block, coalescing within 1 ms, publish at hand-off, callback consumer",
  TBQ_BACKPRESSURE_BLOCK, TBQ_PUBLISH_AT_HANDOFF, 0, TBQ_WAKE_ON_DEMAND,
  false, true, false, 1024, 2, 4096, 2, 8, 0.75, 128, 65536, 1000000
};

static const Mode block_coalescing_sessions = {
  "block, sessions, coalescing within 20 us, 4 x 1 KiB source, 2..6 x 4 KiB "
      "sink",
  TBQ_BACKPRESSURE_BLOCK, TBQ_PUBLISH_EVERY_RECORD, 0, TBQ_WAKE_ON_DEMAND,
  true, false, true, 1024, 4, 4096, 2, 6, 0.5, 128, 65536, 20000
};

static const Mode drop_sessions_on_demand = {
  "drop, sessions, on-demand wake, 4 x 1 KiB source, 2 x 4 KiB sink",
  TBQ_BACKPRESSURE_DROP, TBQ_PUBLISH_EVERY_RECORD, 0, TBQ_WAKE_ON_DEMAND,
  true, false, true, 1024, 4, 4096, 2, 2, 0.5, 128, 65536, 0
};

static const Mode block_sessions_large_records = {
  "block, sessions, large records up to 1 MiB, 2 MiB sink budget",
  TBQ_BACKPRESSURE_BLOCK, TBQ_PUBLISH_EVERY_RECORD, 0, TBQ_WAKE_IMMEDIATE,
  true, false, true, 4096, 4, 65536, 4, 32, 0.005, 8, 1 << 20, 0
};

static const Mode drop_large_records_on_demand = {
  "drop, on-demand wake, large records up to 256 KiB, 1 MiB sink budget",
  TBQ_BACKPRESSURE_DROP, TBQ_PUBLISH_EVERY_RECORD, 0, TBQ_WAKE_ON_DEMAND,
  false, false, true, 4096, 4, 65536, 2, 16, 0.1, 16, 256 << 10, 0
};

static const Mode block_on_demand_tiny_pools = {
  "block, on-demand wake, 2 x 256 B source, 3 x 256 B sink",
  TBQ_BACKPRESSURE_BLOCK, TBQ_PUBLISH_EVERY_RECORD, 0, TBQ_WAKE_ON_DEMAND,
  false, false, true, 256, 2, 256, 3, 3, 0.2, 64, 65536, 0
};

static void
stress_block_default (void)
{
  run_mode (&block_default);
}

static void
stress_drop_tiny_pools (void)
{
  run_mode (&drop_tiny_pools);
}

static void
stress_block_tiny_pools_sessions (void)
{
  run_mode (&block_tiny_pools_sessions);
}

static void
stress_drop_coalescing_publish_every_n (void)
{
  run_mode (&drop_coalescing_every_n);
}

static void
stress_block_coalescing_publish_at_handoff_callback_consumer (void)
{
  run_mode (&block_coalescing_handoff_consumer);
}

static void
stress_block_coalescing_sessions (void)
{
  run_mode (&block_coalescing_sessions);
}

static void
stress_drop_sessions_on_demand_wake (void)
{
  run_mode (&drop_sessions_on_demand);
}

static void
stress_block_on_demand_wake_tiny_pools (void)
{
  run_mode (&block_on_demand_tiny_pools);
}

static void
stress_block_sessions_large_records (void)
{
  run_mode (&block_sessions_large_records);
}

static void
stress_drop_large_records_on_demand_wake (void)
{
  run_mode (&drop_large_records_on_demand);
}

int
main (int argc, char **argv)
{
  static const TapTest tests[] = {
    TAP_TEST (stress_block_default),
    TAP_TEST (stress_drop_tiny_pools),
    TAP_TEST (stress_block_tiny_pools_sessions),
    TAP_TEST (stress_drop_coalescing_publish_every_n),
    TAP_TEST (stress_block_coalescing_publish_at_handoff_callback_consumer),
    TAP_TEST (stress_block_coalescing_sessions),
    TAP_TEST (stress_drop_sessions_on_demand_wake),
    TAP_TEST (stress_block_on_demand_wake_tiny_pools),
    TAP_TEST (stress_block_sessions_large_records),
    TAP_TEST (stress_drop_large_records_on_demand_wake),
  };
  const char *env = getenv ("TBQ_STRESS_LONG");
  char *args[2] = { argv[0], NULL };
  int i, n = 1;

  long_run = env != NULL && env[0] != '\0' && strcmp (env, "0") != 0;
  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--long") == 0)
      long_run = true;
    else if (n < 2)
      args[n++] = argv[i];      /* a test name: run that one only */
  }
  /* Each long mode takes minutes: lift the per-test alarm. */
  if (long_run && getenv ("TAP_TIMEOUT") == NULL)
    setenv ("TAP_TIMEOUT", "7200", 1);
  return tap_run (tests, sizeof tests / sizeof tests[0], n, args);
}
