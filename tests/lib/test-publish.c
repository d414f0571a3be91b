/* Publish and wake policies: when a written record becomes visible to the
 * copier, and how soon a quiet producer's last record is delivered.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Publish policies are checked with the copier run in the test's thread:
 * what it moves is exactly what was published.  Wake policies need the
 * copier thread: "delivered" is checked within EVENTUALLY_NS (a hang
 * check), "not delivered" by waiting QUIET_NS for it.
 */
#include "lib-test.h"

#include <stdatomic.h>

/* Pickup of a quiet producer's record: each one must arrive with no
 * further write or flush (a copier that does not poll or is not woken
 * never delivers it: read_record fails after EVENTUALLY_NS, a hang check).
 * How soon is printed, not asserted: a unit test asserts no speed. */
#define PICKUP_SAMPLES 11

/* Queue with a running copier thread. */
static void
fixture_open (Fixture * f, const TbqConfig * cfg)
{
  f->q = queue_new_or_fail (cfg);
  CHECK_OK (tbq_writer_new (f->q, &f->w));
  CHECK_OK (tbq_reader_new (f->q, &f->r));
  CHECK_OK (tbq_queue_start (f->q));
}

/* The publish policy tests run no copier thread: each check runs the
 * copier once in the test's thread, so "not published yet" is checked
 * without waiting for something not to happen. */
static void
fixture_open_policy (Fixture * f, TbqPublishPolicy policy, uint32_t every)
{
  TbqConfig cfg;

  small_config (&cfg, 256);
  cfg.publish = policy;
  cfg.publish_every = every;
  f->q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (f->q, &f->w));
  CHECK_OK (tbq_reader_new (f->q, &f->r));
}

static void
fixture_close (Fixture * f)
{
  tbq_queue_free (f->q, NULL, NULL);
}

static void
every_record_policy_delivers_each_record_without_further_writes (void)
{
  Fixture f;
  uint64_t i;

  fixture_open_policy (&f, TBQ_PUBLISH_EVERY_RECORD, 0);
  for (i = 0; i < 50; i++) {
    CHECK_OK (write_seq (f.w, 0, i));
    expect_published_seq (f.q, f.r, i);
  }
  fixture_close (&f);
}

static void
every_n_policy_publishes_after_n_records (void)
{
  Fixture f;
  uint64_t i, batch;

  fixture_open_policy (&f, TBQ_PUBLISH_EVERY_N, 4);
  for (batch = 0; batch < 3; batch++) {
    for (i = 0; i < 3; i++)
      CHECK_OK (write_seq (f.w, 0, batch * 4 + i));
    expect_nothing_published (f.q, f.r);
    CHECK_OK (write_seq (f.w, 0, batch * 4 + 3));
    for (i = 0; i < 4; i++)
      expect_published_seq (f.q, f.r, batch * 4 + i);
  }
  fixture_close (&f);
}

static void
at_handoff_policy_delivers_nothing_before_flush (void)
{
  Fixture f;

  fixture_open_policy (&f, TBQ_PUBLISH_AT_HANDOFF, 0);
  CHECK_OK (write_seq (f.w, 0, 1));
  CHECK_OK (write_seq (f.w, 0, 2));
  expect_nothing_published (f.q, f.r);
  tbq_writer_flush (f.w);
  expect_published_seq (f.q, f.r, 1);
  expect_published_seq (f.q, f.r, 2);
  CHECK_OK (write_seq (f.w, 0, 3));
  expect_nothing_published (f.q, f.r);
  tbq_writer_flush (f.w);
  expect_published_seq (f.q, f.r, 3);
  fixture_close (&f);
}

static void
at_handoff_policy_publishes_at_block_handoff (void)
{
  Fixture f;
  /* 256-byte blocks hold twelve 8-byte records. */
  const uint64_t per_block = (256 - TBQ_BLOCK_HEADER_SIZE)
      / TBQ_RECORD_SPAN (8);
  uint64_t i;

  fixture_open_policy (&f, TBQ_PUBLISH_AT_HANDOFF, 0);
  for (i = 0; i < per_block; i++)
    CHECK_OK (write_seq (f.w, 0, i));
  expect_nothing_published (f.q, f.r);
  /* The next record hands the full block off: it is published whole. */
  CHECK_OK (write_seq (f.w, 0, per_block));
  for (i = 0; i < per_block; i++)
    expect_published_seq (f.q, f.r, i);
  expect_nothing_published (f.q, f.r);
  tbq_writer_flush (f.w);
  expect_published_seq (f.q, f.r, per_block);
  fixture_close (&f);
}

static void
writer_can_override_the_publish_policy (void)
{
  Fixture f;

  fixture_open_policy (&f, TBQ_PUBLISH_EVERY_RECORD, 0);
  tbq_writer_set_publish (f.w, TBQ_PUBLISH_AT_HANDOFF, 0);
  CHECK_OK (write_seq (f.w, 0, 1));
  expect_nothing_published (f.q, f.r);
  tbq_writer_flush (f.w);
  expect_published_seq (f.q, f.r, 1);
  tbq_writer_set_publish (f.w, TBQ_PUBLISH_EVERY_N, 2);
  CHECK_OK (write_seq (f.w, 0, 2));
  expect_nothing_published (f.q, f.r);
  CHECK_OK (write_seq (f.w, 0, 3));
  expect_published_seq (f.q, f.r, 2);
  expect_published_seq (f.q, f.r, 3);
  /* 0 means 1 here, not "never". */
  tbq_writer_set_publish (f.w, TBQ_PUBLISH_EVERY_N, 0);
  CHECK_OK (write_seq (f.w, 0, 4));
  expect_published_seq (f.q, f.r, 4);
  tbq_writer_set_publish (f.w, TBQ_PUBLISH_EVERY_RECORD, 0);
  CHECK_OK (write_seq (f.w, 0, 5));
  expect_published_seq (f.q, f.r, 5);
  fixture_close (&f);
}

/* A producer that writes one record and then goes quiet gets it delivered
 * within a bounded time.  The pauses between records let the copier fall
 * asleep, which is the situation under test. */
static int
cmp_i64 (const void *a, const void *b)
{
  int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

  return x < y ? -1 : x > y;
}

static void
check_quiet_record_pickup (TbqWakePolicy wake)
{
  TbqConfig cfg;
  Fixture f;
  int64_t delay[PICKUP_SAMPLES];
  uint64_t i;

  tbq_config_init (&cfg);
  cfg.wake = wake;
  fixture_open (&f, &cfg);
  for (i = 0; i < PICKUP_SAMPLES; i++) {
    TbqRecord rec;
    int64_t t0;

    sleep_ns (10 * MS_NS);
    t0 = now_ns ();
    CHECK_OK (write_seq (f.w, 0, i));
    CHECK_OK (read_record (f.r, &rec, EVENTUALLY_NS));
    delay[i] = now_ns () - t0;
    CHECK_EQ (record_seq (&rec), i);
  }
  qsort (delay, PICKUP_SAMPLES, sizeof delay[0], cmp_i64);
  printf ("# pickup delay: median %" PRId64 " us, max %" PRId64 " us\n",
      delay[PICKUP_SAMPLES / 2] / 1000, delay[PICKUP_SAMPLES - 1] / 1000);
  fixture_close (&f);
}

static void
lazy_wake_delivers_a_quiet_record_without_further_writes (void)
{
  check_quiet_record_pickup (TBQ_WAKE_LAZY);
}

static void
immediate_wake_delivers_a_quiet_record_without_further_writes (void)
{
  check_quiet_record_pickup (TBQ_WAKE_IMMEDIATE);
}

typedef struct
{
  TbqQueue *q;
  _Atomic pid_t tid;
  TbqStatus st;
} CopierThread;

static void *
copier_thread_main (void *arg)
{
  CopierThread *c = arg;

  atomic_store (&c->tid, current_tid ());
  c->st = tbq_copier_run (c->q);
  return NULL;
}

static void
lazy_wake_publish_does_not_wake_a_sleeping_copier (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqSession s;
  CopierThread c;
  pthread_t th;
  uint64_t two = 2;

  tbq_config_init (&cfg);
  cfg.wake = TBQ_WAKE_LAZY;
  /* The pickup poll must not deliver anything during the test. */
  cfg.pickup_interval_ns = 60 * SEC_NS;
  cfg.spin_iterations = 0;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  c.q = q;
  atomic_init (&c.tid, 0);
  CHECK (pthread_create (&th, NULL, copier_thread_main, &c) == 0);
  /* Only once the copier sleeps does "not woken" mean anything. */
  WAIT_UNTIL (atomic_load (&c.tid) != 0);
  wait_until_thread_sleeps (c.tid);

  /* Publishing a record, by write or by session, makes no wake-up. */
  CHECK_OK (write_seq (w, 0, 1));
  expect_nothing (r);
  tbq_session_begin (w, &s);
  CHECK_OK (tbq_session_write (&s, 0, &two, sizeof two));
  tbq_session_end (&s);
  expect_nothing (r);
  /* A flush does wake it. */
  tbq_writer_flush (w);
  expect_seq (r, 1);
  expect_seq (r, 2);

  tbq_queue_interrupt (q);
  pthread_join (th, NULL);
  CHECK_STATUS (c.st, TBQ_INTERRUPTED);
  tbq_queue_free (q, NULL, NULL);
}

static void
lazy_wake_still_wakes_the_copier_at_block_handoff (void)
{
  TbqConfig cfg;
  Fixture f;
  const uint64_t per_block = (256 - TBQ_BLOCK_HEADER_SIZE)
      / TBQ_RECORD_SPAN (8);
  uint64_t i;

  small_config (&cfg, 256);
  cfg.wake = TBQ_WAKE_LAZY;
  cfg.pickup_interval_ns = 60 * SEC_NS;
  fixture_open (&f, &cfg);
  for (i = 0; i <= per_block; i++)
    CHECK_OK (write_seq (f.w, 0, i));
  /* The sealed block arrives without waiting for the pickup poll. */
  for (i = 0; i < per_block; i++)
    expect_seq (f.r, i);
  tbq_writer_flush (f.w);
  expect_seq (f.r, per_block);
  fixture_close (&f);
}

static void
on_demand_wake_delivers_a_quiet_record_to_a_waiting_reader (void)
{
  check_quiet_record_pickup (TBQ_WAKE_ON_DEMAND);
}

typedef struct
{
  TbqReader *r;
  _Atomic pid_t tid;
  TbqStatus st;
  uint64_t seq;
} ReaderThread;

static void *
reader_thread_main (void *arg)
{
  ReaderThread *rt = arg;
  TbqRecord rec;

  atomic_store (&rt->tid, current_tid ());
  rt->st = read_record (rt->r, &rec, EVENTUALLY_NS);
  if (rt->st == TBQ_OK)
    rt->seq = record_seq (&rec);
  return NULL;
}

static void
on_demand_wake_moves_records_when_the_reader_starts_waiting (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;
  CopierThread c;
  pthread_t th;

  tbq_config_init (&cfg);
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  cfg.spin_iterations = 0;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  c.q = q;
  atomic_init (&c.tid, 0);
  CHECK (pthread_create (&th, NULL, copier_thread_main, &c) == 0);
  WAIT_UNTIL (atomic_load (&c.tid) != 0);
  wait_until_thread_sleeps (c.tid);

  /* Nobody waits for records: publishing does not wake the copier ... */
  CHECK_OK (write_seq (w, 0, 1));
  sleep_ns (QUIET_NS);
  CHECK_STATUS (tbq_reader_next (r, &rec), TBQ_EMPTY);
  /* ... and a reader that starts waiting gets them moved. */
  CHECK_OK (tbq_reader_wait (r, EVENTUALLY_NS));
  CHECK_OK (tbq_reader_next (r, &rec));
  CHECK_EQ (record_seq (&rec), 1);
  /* While it waits, a publish wakes the copier. */
  {
    ReaderThread rt;
    pthread_t rth;

    rt.r = r;
    atomic_init (&rt.tid, 0);
    CHECK (pthread_create (&rth, NULL, reader_thread_main, &rt) == 0);
    WAIT_UNTIL (atomic_load (&rt.tid) != 0);
    wait_until_thread_sleeps (rt.tid);
    wait_until_thread_sleeps (c.tid);
    CHECK_OK (write_seq (w, 0, 2));
    pthread_join (rth, NULL);
    CHECK_OK (rt.st);
    CHECK_EQ (rt.seq, 2);
  }

  tbq_queue_interrupt (q);
  pthread_join (th, NULL);
  tbq_queue_free (q, NULL, NULL);
}

/* A waiting reader that cannot pull a record itself because the sink pool
 * has no free block (it never grows the pool) hands the work to the
 * copier, the writer's current block included: the record arrives. */
static void
on_demand_reader_gets_a_record_that_needs_a_new_sink_block (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;
  CopierThread c;
  pthread_t th;
  const uint64_t per_block = (256 - TBQ_BLOCK_HEADER_SIZE)
      / TBQ_RECORD_SPAN (8);
  uint64_t i;

  small_config (&cfg, 256);
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  cfg.spin_iterations = 0;
  /* One sink block, the copier's: the next one must be allocated. */
  cfg.sink.min_blocks = 1;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  /* Fill the copier's sink block exactly, and read it. */
  for (i = 0; i < per_block; i++)
    CHECK_OK (write_seq (w, 0, i));
  tbq_writer_flush (w);
  CHECK_OK (tbq_copier_step (q, 0));
  for (i = 0; i < per_block; i++)
    expect_seq (r, i);
  CHECK_EQ (stats_of (q).sink.blocks_idle, 0);
  /* The copier sleeps; the next record is published in the writer's
   * current block. */
  c.q = q;
  atomic_init (&c.tid, 0);
  CHECK (pthread_create (&th, NULL, copier_thread_main, &c) == 0);
  WAIT_UNTIL (atomic_load (&c.tid) != 0);
  wait_until_thread_sleeps (c.tid);
  CHECK_OK (write_seq (w, 0, per_block));
  CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
  CHECK_EQ (record_seq (&rec), per_block);
  tbq_queue_interrupt (q);
  pthread_join (th, NULL);
  tbq_queue_free (q, NULL, NULL);
}

/* With lazy and on-demand wake a copier pass moves sealed blocks but not
 * the block the writer is still filling (following the writer through it
 * would share every line it writes), until a flush asks for it; with
 * immediate wake it moves everything published. */
static void
check_current_block_pickup (TbqWakePolicy wake, bool follows_writer)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;
  const uint64_t per_block = (256 - TBQ_BLOCK_HEADER_SIZE)
      / TBQ_RECORD_SPAN (8);
  const uint64_t total = per_block + 3;
  uint64_t i, seen = 0;
  int step;

  small_config (&cfg, 256);
  cfg.wake = wake;
  cfg.pickup_interval_ns = 60 * SEC_NS;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  /* A lazy copier's first pass is its first pickup: take it now. */
  CHECK_STATUS (tbq_copier_step (q, 0), TBQ_TIMEOUT);
  for (i = 0; i < total; i++)
    CHECK_OK (write_seq (w, 0, i));
  for (step = 0; step < 4; step++)
    tbq_copier_step (q, 0);
  while (tbq_reader_next (r, &rec) == TBQ_OK) {
    CHECK_EQ (record_seq (&rec), seen);
    seen++;
  }
  CHECK_EQ (seen, follows_writer ? total : per_block);
  /* A flush asks for the current block too. */
  tbq_writer_flush (w);
  tbq_copier_step (q, 0);
  while (tbq_reader_next (r, &rec) == TBQ_OK) {
    CHECK_EQ (record_seq (&rec), seen);
    seen++;
  }
  CHECK_EQ (seen, total);
  tbq_queue_free (q, NULL, NULL);
}

static void
on_demand_copier_moves_sealed_blocks_but_not_the_current_block (void)
{
  check_current_block_pickup (TBQ_WAKE_ON_DEMAND, false);
}

static void
lazy_copier_moves_the_current_block_only_at_the_pickup_interval (void)
{
  check_current_block_pickup (TBQ_WAKE_LAZY, false);
}

static void
immediate_copier_moves_the_current_block_at_once (void)
{
  check_current_block_pickup (TBQ_WAKE_IMMEDIATE, true);
}

TAP_MAIN (TAP_TEST (every_record_policy_delivers_each_record_without_further_writes),
    TAP_TEST (every_n_policy_publishes_after_n_records),
    TAP_TEST (at_handoff_policy_delivers_nothing_before_flush),
    TAP_TEST (at_handoff_policy_publishes_at_block_handoff),
    TAP_TEST (writer_can_override_the_publish_policy),
    TAP_TEST (lazy_wake_delivers_a_quiet_record_without_further_writes),
    TAP_TEST (immediate_wake_delivers_a_quiet_record_without_further_writes),
    TAP_TEST (lazy_wake_publish_does_not_wake_a_sleeping_copier),
    TAP_TEST (lazy_wake_still_wakes_the_copier_at_block_handoff),
    TAP_TEST (on_demand_wake_delivers_a_quiet_record_to_a_waiting_reader),
    TAP_TEST (on_demand_wake_moves_records_when_the_reader_starts_waiting),
    TAP_TEST (on_demand_reader_gets_a_record_that_needs_a_new_sink_block),
    TAP_TEST (on_demand_copier_moves_sealed_blocks_but_not_the_current_block),
    TAP_TEST (lazy_copier_moves_the_current_block_only_at_the_pickup_interval),
    TAP_TEST (immediate_copier_moves_the_current_block_at_once))
