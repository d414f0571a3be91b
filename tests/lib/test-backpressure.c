/* Backpressure: what a writer does when no source block is free, and how a
 * full sink pool propagates back to the writer.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "lib-test.h"

#include <stdatomic.h>

#define BLOCK 256
/* Twelve 8-byte records per 256-byte block. */
#define PER_BLOCK ((BLOCK - TBQ_BLOCK_HEADER_SIZE) / TBQ_RECORD_SPAN (8))
/* The largest inline record: four fill a whole block. */
#define FULL_PER_BLOCK 4
#define FULL ((uint32_t) ((BLOCK - TBQ_BLOCK_HEADER_SIZE) / FULL_PER_BLOCK \
        - TBQ_RECORD_HEADER_SIZE))

static void
fixture_open (Fixture * f, TbqBackpressure mode, int64_t timeout_ns)
{
  TbqConfig cfg;

  small_config (&cfg, BLOCK);
  cfg.backpressure = mode;
  cfg.block_timeout_ns = timeout_ns;
  f->q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (f->q, &f->w));
  CHECK_OK (tbq_reader_new (f->q, &f->r));
}

static void
fixture_close (Fixture * f)
{
  tbq_queue_free (f->q, NULL, NULL);
}

/* Fill both source blocks (no copier runs). */
static void
fill_source_pool (Fixture * f)
{
  uint64_t i;

  for (i = 0; i < 2 * PER_BLOCK; i++)
    CHECK_OK (write_seq (f->w, 0, i));
}

static void
drop_mode_fails_at_once_when_the_source_pool_is_exhausted (void)
{
  Fixture f;
  TbqStats st;
  uint64_t i;

  fixture_open (&f, TBQ_BACKPRESSURE_DROP, -1);
  fill_source_pool (&f);
  /* No copier: would wait forever if it waited at all. */
  for (i = 0; i < 10; i++)
    CHECK_STATUS (write_seq (f.w, 0, 1000 + i), TBQ_DROPPED);
  st = stats_of (f.q);
  CHECK_EQ (st.records_in, 2 * PER_BLOCK);
  CHECK_EQ (st.records_dropped, 10);
  CHECK_EQ (st.pressure_waits, 0);
  /* The dropped records are gone; the accepted ones are all there. */
  copier_step_or_fail (f.q);
  for (i = 0; i < 2 * PER_BLOCK; i++)
    expect_seq (f.r, i);
  CHECK_OK (write_seq (f.w, 0, 7));
  copier_step_or_fail (f.q);
  expect_seq (f.r, 7);
  fixture_close (&f);
}

static void
block_mode_times_out_after_block_timeout (void)
{
  Fixture f;
  TbqStats st;
  TbqRecord rec;
  int64_t t0;
  uint64_t i;

  fixture_open (&f, TBQ_BACKPRESSURE_BLOCK, 50 * MS_NS);
  fill_source_pool (&f);
  t0 = now_ns ();
  CHECK_STATUS (write_seq (f.w, 0, 999), TBQ_TIMEOUT);
  CHECK (now_ns () - t0 >= 50 * MS_NS);
  st = stats_of (f.q);
  CHECK_EQ (st.records_dropped, 1);
  CHECK_EQ (st.pressure_waits, 1);
  CHECK_EQ (st.records_in, 2 * PER_BLOCK);
  copier_step_or_fail (f.q);
  for (i = 0; i < 2 * PER_BLOCK; i++)
    expect_seq (f.r, i);
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  fixture_close (&f);
}

typedef struct
{
  TbqWriter *w;
  uint64_t seq;
  TbqStatus st;
} WriteArgs;

static void *
write_main (void *arg)
{
  WriteArgs *a = arg;

  a->st = write_seq (a->w, 0, a->seq);
  return NULL;
}

static void
block_mode_waits_until_the_copier_frees_space (void)
{
  Fixture f;
  WriteArgs a;
  pthread_t th;
  uint64_t i;

  fixture_open (&f, TBQ_BACKPRESSURE_BLOCK, -1);
  fill_source_pool (&f);
  a.w = f.w;
  a.seq = 2 * PER_BLOCK;
  CHECK (pthread_create (&th, NULL, write_main, &a) == 0);
  WAIT_UNTIL (stats_of (f.q).pressure_waits == 1);
  WAIT_UNTIL (stats_of (f.q).writer_sleeps >= 1);
  /* One copier pass returns a block: the blocked write completes. */
  CHECK_OK (tbq_copier_step (f.q, 0));
  pthread_join (th, NULL);
  CHECK_OK (a.st);
  copier_step_or_fail (f.q);
  for (i = 0; i <= 2 * PER_BLOCK; i++)
    expect_seq (f.r, i);
  CHECK_EQ (stats_of (f.q).records_dropped, 0);
  fixture_close (&f);
}

static void
writer_can_override_the_backpressure_mode (void)
{
  Fixture f;
  int64_t t0;

  fixture_open (&f, TBQ_BACKPRESSURE_BLOCK, -1);
  fill_source_pool (&f);
  tbq_writer_set_backpressure (f.w, TBQ_BACKPRESSURE_DROP, -1);
  CHECK_STATUS (write_seq (f.w, 0, 1), TBQ_DROPPED);
  tbq_writer_set_backpressure (f.w, TBQ_BACKPRESSURE_BLOCK, 20 * MS_NS);
  t0 = now_ns ();
  CHECK_STATUS (write_seq (f.w, 0, 2), TBQ_TIMEOUT);
  CHECK (now_ns () - t0 >= 20 * MS_NS);
  CHECK_EQ (stats_of (f.q).records_dropped, 2);
  fixture_close (&f);
}

typedef struct
{
  TbqReader *r;
  uint64_t n;
  uint64_t got;
  bool ok;
} DrainArgs;

static void *
drain_main (void *arg)
{
  DrainArgs *a = arg;

  a->ok = true;
  for (a->got = 0; a->got < a->n; a->got++) {
    TbqRecord rec;

    if (read_record (a->r, &rec, EVENTUALLY_NS) != TBQ_OK
        || rec.size != FULL || payload_mismatch (rec.data, FULL, a->got) >= 0) {
      a->ok = false;
      break;
    }
  }
  return NULL;
}

static TbqStatus
write_full (TbqWriter * w, uint64_t seq)
{
  void *p;
  TbqStatus st = tbq_writer_reserve (w, 0, FULL, &p);

  if (st == TBQ_OK) {
    fill_payload (p, FULL, seq);
    tbq_writer_commit (w);
  }
  return st;
}

static void
full_sink_pool_stalls_the_copier_and_then_the_writer (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqStats st;
  DrainArgs d;
  pthread_t th;
  uint64_t seq = 0, timeouts = 0, more = scaled (20000);
  TbqStatus s;

  small_config (&cfg, BLOCK);
  cfg.sink.min_blocks = 3;
  cfg.sink.max_blocks = 3;
  cfg.block_timeout_ns = 100 * MS_NS;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  CHECK_OK (tbq_queue_start (q));
  /* Nobody reads: three sink blocks and two source blocks fill up.  A
   * timeout counts only once the copier really waits for sink space (on a
   * busy machine it may simply not have run yet): then retry the record. */
  for (;;) {
    s = write_full (w, seq);
    if (s == TBQ_OK) {
      seq++;
      continue;
    }
    CHECK_STATUS (s, TBQ_TIMEOUT);
    timeouts++;
    if (stats_of (q).sink_pressure_waits > 0)
      break;
    CHECK (timeouts < 100);
  }
  /* Three blocks' worth in the sink, the fourth held by the stalled
   * copier, the fifth in the writer's other source block. */
  CHECK_EQ (seq, 5 * FULL_PER_BLOCK);
  st = stats_of (q);
  CHECK_EQ (st.sink_pressure_waits, 1);
  CHECK_EQ (st.sink.blocks_total, 3);
  CHECK (st.pressure_waits >= 1);
  CHECK_EQ (st.records_dropped, timeouts);

  /* A reader drains: everything flows again, nothing more is refused. */
  tbq_writer_set_backpressure (w, TBQ_BACKPRESSURE_BLOCK, EVENTUALLY_NS);
  d.r = r;
  d.n = seq + more;
  CHECK (pthread_create (&th, NULL, drain_main, &d) == 0);
  while (seq < d.n) {
    CHECK_OK (write_full (w, seq));
    seq++;
  }
  pthread_join (th, NULL);
  CHECK (d.ok);
  CHECK_EQ (d.got, d.n);
  st = stats_of (q);
  CHECK_EQ (st.records_dropped, timeouts);
  CHECK_EQ (st.records_out, d.n);
  CHECK (st.sink.blocks_peak <= 3);
  CHECK (st.source.blocks_peak <= 2);
  tbq_queue_free (q, NULL, NULL);
}

typedef struct
{
  TbqReader *r;
  _Atomic int done;             /* the producer finished */
  _Atomic uint64_t accepted;    /* valid once done */
  uint64_t delivered;
  bool ok;
} CountArgs;

static void *
count_main (void *arg)
{
  CountArgs *a = arg;
  uint64_t last = 0, k = 0;
  bool first = true;

  a->ok = true;
  a->delivered = 0;
  for (;;) {
    TbqRecord rec;
    TbqStatus st = tbq_reader_next (a->r, &rec);

    if (st == TBQ_OK) {
      uint64_t seq;

      memcpy (&seq, rec.data, sizeof seq);
      /* Delivered records are a strictly increasing subsequence. */
      if (rec.size != 8 || (!first && seq <= last)) {
        a->ok = false;
        return NULL;
      }
      first = false;
      last = seq;
      a->delivered++;
      /* Stall now and then so the source pool fills and drops happen. */
      if (++k % 1000 == 0)
        sleep_ns (200000);
      continue;
    }
    if (atomic_load (&a->done) && a->delivered == atomic_load (&a->accepted))
      return NULL;
    if (tbq_reader_wait (a->r, EVENTUALLY_NS) == TBQ_TIMEOUT) {
      a->ok = false;
      return NULL;
    }
  }
}

static void
drop_mode_delivers_or_counts_every_record (void)
{
  Fixture f;
  CountArgs c;
  pthread_t th;
  TbqStats st;
  uint64_t i, n = scaled (300000), accepted = 0, dropped = 0;

  fixture_open (&f, TBQ_BACKPRESSURE_DROP, -1);
  c.r = f.r;
  atomic_init (&c.done, 0);
  atomic_init (&c.accepted, 0);
  CHECK (pthread_create (&th, NULL, count_main, &c) == 0);
  for (i = 0; i < n; i++) {
    TbqStatus s = write_seq (f.w, 0, i);

    if (s == TBQ_OK) {
      accepted++;
    } else if (s == TBQ_DROPPED) {
      /* A drop takes nanoseconds: pause now and then so that the run
       * spans many copier passes instead of a few milliseconds. */
      if (++dropped % 16 == 0)
        sleep_ns (20000);
    } else {
      CHECK_OK (s);
    }
    /* Start the copier late, so some drops happen for sure. */
    if (i == 100)
      CHECK_OK (tbq_queue_start (f.q));
  }
  atomic_store (&c.accepted, accepted);
  atomic_store (&c.done, 1);
  tbq_reader_wake (f.r);
  pthread_join (th, NULL);
  CHECK (c.ok);
  CHECK (dropped >= 100 - 2 * PER_BLOCK);
  CHECK_EQ (accepted + dropped, n);
  CHECK_EQ (c.delivered, accepted);
  st = stats_of (f.q);
  CHECK_EQ (st.records_in, accepted);
  CHECK_EQ (st.records_dropped, dropped);
  CHECK_EQ (st.records_out, accepted);
  printf ("# %" PRIu64 " delivered, %" PRIu64 " dropped\n", accepted, dropped);
  fixture_close (&f);
}

TAP_MAIN (TAP_TEST (drop_mode_fails_at_once_when_the_source_pool_is_exhausted),
    TAP_TEST (block_mode_times_out_after_block_timeout),
    TAP_TEST (block_mode_waits_until_the_copier_frees_space),
    TAP_TEST (writer_can_override_the_backpressure_mode),
    TAP_TEST (full_sink_pool_stalls_the_copier_and_then_the_writer),
    TAP_TEST (drop_mode_delivers_or_counts_every_record))
