/* Publish and wake policies: when a written record becomes visible to the
 * copier, who is woken for it, and coalescing.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Publish policies are checked with the copier run in the test's thread:
 * what it moves is exactly what was published.  Wake policies need other
 * threads: "delivered" is checked within EVENTUALLY_NS (a hang check);
 * who was woken is read from the statistics (wake-ups the writer made,
 * sleeps and naps counted before a thread blocks), never from timing.
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
check_quiet_record_pickup (TbqWakePolicy wake, int64_t coalesce_ns)
{
  TbqConfig cfg;
  Fixture f;
  int64_t delay[PICKUP_SAMPLES];
  uint64_t i;

  tbq_config_init (&cfg);
  cfg.wake = wake;
  cfg.max_coalesce_ns = coalesce_ns;
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
immediate_wake_delivers_a_quiet_record_without_further_writes (void)
{
  check_quiet_record_pickup (TBQ_WAKE_IMMEDIATE, 0);
}

typedef struct
{
  TbqQueue *q;
  TbqStatus st;
} CopierThread;

static void *
copier_thread_main (void *arg)
{
  CopierThread *c = arg;

  c->st = tbq_copier_run (c->q);
  return NULL;
}

static void
on_demand_wake_delivers_a_quiet_record_to_a_waiting_reader (void)
{
  check_quiet_record_pickup (TBQ_WAKE_ON_DEMAND, 0);
}

static void
coalescing_delivers_a_quiet_record_to_a_waiting_reader (void)
{
  check_quiet_record_pickup (TBQ_WAKE_ON_DEMAND, 1 * MS_NS);
}

typedef struct
{
  TbqReader *r;
  TbqStatus st;
  uint64_t seq;
} ReaderThread;

static void *
reader_thread_main (void *arg)
{
  ReaderThread *rt = arg;
  TbqRecord rec;

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
  ReaderThread rt;
  pthread_t rth;
  uint64_t sleeps;

  tbq_config_init (&cfg);
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  cfg.spin_iterations = 0;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  c.q = q;
  CHECK (pthread_create (&th, NULL, copier_thread_main, &c) == 0);
  WAIT_UNTIL (stats_of (q).copier_sleeps >= 1);

  /* Nobody waits for records: publishing wakes nobody ... */
  CHECK_OK (write_seq (w, 0, 1));
  CHECK_EQ (stats_of (q).writer_wakeups, 0);
  CHECK_STATUS (tbq_reader_next (r, &rec), TBQ_EMPTY);
  /* ... and a reader that starts waiting gets them moved. */
  CHECK_OK (tbq_reader_wait (r, EVENTUALLY_NS));
  CHECK_OK (tbq_reader_next (r, &rec));
  CHECK_EQ (record_seq (&rec), 1);
  /* While it waits, a publish wakes the reader, which moves the record. */
  sleeps = stats_of (q).reader_sleeps;
  rt.r = r;
  CHECK (pthread_create (&rth, NULL, reader_thread_main, &rt) == 0);
  WAIT_UNTIL (stats_of (q).reader_sleeps > sleeps);
  CHECK_OK (write_seq (w, 0, 2));
  pthread_join (rth, NULL);
  CHECK_OK (rt.st);
  CHECK_EQ (rt.seq, 2);

  tbq_queue_interrupt (q);
  pthread_join (th, NULL);
  tbq_queue_free (q, NULL, NULL);
}

/* ---- coalescing ---- */

/* A bound no test waits for: a nap ends before it only when something
 * asks for delivery. */
#define LONG_BOUND_NS (60 * SEC_NS)

/* A reader thread that reads records until `stop`, in order. */
typedef struct
{
  TbqReader *r;
  _Atomic uint64_t got;
  _Atomic int stop;
  bool in_order;
} ReadLoop;

static void *
read_loop_main (void *arg)
{
  ReadLoop *l = arg;
  TbqRecord rec;

  while (!atomic_load (&l->stop)) {
    if (tbq_reader_next (l->r, &rec) == TBQ_OK) {
      if (record_seq (&rec) != atomic_load (&l->got))
        l->in_order = false;
      atomic_fetch_add (&l->got, 1);
      continue;
    }
    if (tbq_reader_wait (l->r, -1) == TBQ_INTERRUPTED)
      break;
  }
  return NULL;
}

typedef struct
{
  Fixture f;
  ReadLoop loop;
  pthread_t th;
  uint64_t written;
} NapFixture;

/* A queue with on-demand wake and a long bound, no copier thread, and a
 * reader thread that is napping when this returns: records are written
 * one at a time, each read before the next, until the reader naps
 * (their gaps are far below half the bound, whatever the machine). */
static void
nap_fixture_open (NapFixture * n, size_t block)
{
  TbqConfig cfg;

  small_config (&cfg, block);
  cfg.source.min_blocks = cfg.source.max_blocks = 4;
  cfg.source.max_idle_blocks = 4;
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  cfg.max_coalesce_ns = LONG_BOUND_NS;
  n->f.q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (n->f.q, &n->f.w));
  CHECK_OK (tbq_reader_new (n->f.q, &n->f.r));
  n->loop.r = n->f.r;
  atomic_init (&n->loop.got, 0);
  atomic_init (&n->loop.stop, 0);
  n->loop.in_order = true;
  n->written = 0;
  CHECK (pthread_create (&n->th, NULL, read_loop_main, &n->loop) == 0);
  /* With no copier thread every record is moved by the waiting reader.
   * The last one may be caught by the first nap: it arrives at a flush. */
  while (stats_of (n->f.q).reader_naps == 0) {
    CHECK (n->written < 1000);
    CHECK_OK (write_seq (n->f.w, 0, n->written++));
    WAIT_UNTIL (atomic_load (&n->loop.got) == n->written
        || stats_of (n->f.q).reader_naps > 0);
  }
}

static void
nap_fixture_close (NapFixture * n)
{
  atomic_store (&n->loop.stop, 1);
  tbq_reader_wake (n->f.r);
  pthread_join (n->th, NULL);
  CHECK (n->loop.in_order);
  tbq_queue_free (n->f.q, NULL, NULL);
}

static void
publishing_makes_no_wake_up_while_the_reader_naps (void)
{
  NapFixture n;
  TbqStats st;
  TbqSession s;
  uint64_t next;

  nap_fixture_open (&n, 4096);
  st = stats_of (n.f.q);
  CHECK_EQ (st.reader_naps, 1);
  /* By write and by session: no system call, nothing moved. */
  CHECK_OK (write_seq (n.f.w, 0, n.written++));
  tbq_session_begin (n.f.w, &s);
  next = n.written++;
  CHECK_OK (tbq_session_write (&s, 0, &next, sizeof next));
  tbq_session_end (&s);
  CHECK_EQ (stats_of (n.f.q).writer_wakeups, st.writer_wakeups);
  CHECK_EQ (stats_of (n.f.q).reader_naps_woken, 0);
  /* A flush ends the nap: both records arrive long before the deadline
   * (the nap is counted as ended early, not at its deadline). */
  tbq_writer_flush (n.f.w);
  WAIT_UNTIL (atomic_load (&n.loop.got) == n.written);
  CHECK_EQ (stats_of (n.f.q).reader_naps_woken, 1);
  nap_fixture_close (&n);
}

/* Half the source pool sealed wakes the copier thread, napping reader or
 * not; the records it publishes end the nap. */
static void
a_writer_short_of_blocks_ends_a_nap_through_the_copier (void)
{
  NapFixture n;
  const uint64_t per_block = (256 - TBQ_BLOCK_HEADER_SIZE)
      / TBQ_RECORD_SPAN (8);
  uint64_t wakeups, i, target;

  nap_fixture_open (&n, 256);
  CHECK_OK (tbq_queue_start (n.f.q));
  WAIT_UNTIL (stats_of (n.f.q).copier_sleeps >= 1);
  wakeups = stats_of (n.f.q).writer_wakeups;
  /* Seal one block: half the pool is not sealed yet, no wake-up. */
  target = n.written + per_block - (n.written % per_block) + 1;
  while (n.written < target)
    CHECK_OK (write_seq (n.f.w, 0, n.written++));
  CHECK_EQ (stats_of (n.f.q).writer_wakeups, wakeups);
  /* The second sealed block (half of four) wakes the copier, which moves
   * the sealed blocks: they arrive long before the nap's deadline. */
  for (i = 0; i < per_block; i++)
    CHECK_OK (write_seq (n.f.w, 0, n.written++));
  WAIT_UNTIL (atomic_load (&n.loop.got) >= 2 * per_block);
  CHECK (stats_of (n.f.q).reader_naps_woken >= 1);
  tbq_writer_flush (n.f.w);
  WAIT_UNTIL (atomic_load (&n.loop.got) == n.written);
  nap_fixture_close (&n);
}

/* tbq_writer_offer() ends a nap as a flush does: the record arrives long
 * before the deadline, the nap counted as ended early. */
static void
an_offer_ends_a_nap (void)
{
  NapFixture n;

  nap_fixture_open (&n, 4096);
  CHECK_OK (write_seq (n.f.w, 0, n.written++));
  tbq_writer_offer (n.f.w);
  WAIT_UNTIL (atomic_load (&n.loop.got) == n.written);
  CHECK_EQ (stats_of (n.f.q).reader_naps_woken, 1);
  nap_fixture_close (&n);
}

/* An offer is for the reader: the copier is not asked for the writer's
 * current block (a copier pass moves nothing), and the reader, when it
 * waits, pulls the records itself.  A flush, by contrast, has the copier
 * move them (check_current_block_pickup). */
static void
an_offer_leaves_the_current_block_to_the_reader (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;
  uint64_t i;
  int step;

  small_config (&cfg, 256);
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  for (i = 0; i < 3; i++)
    CHECK_OK (write_seq (w, 0, i));
  tbq_writer_offer (w);
  for (step = 0; step < 4; step++)
    tbq_copier_step (q, 0);
  CHECK_STATUS (tbq_reader_next (r, &rec), TBQ_EMPTY);
  CHECK_EQ (stats_of (q).bytes_copied, 0);
  for (i = 0; i < 3; i++) {
    CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
    CHECK_EQ (record_seq (&rec), i);
  }
  tbq_queue_free (q, NULL, NULL);
}

static void
interrupt_ends_a_nap (void)
{
  NapFixture n;

  nap_fixture_open (&n, 4096);
  tbq_queue_interrupt (n.f.q);
  /* The reader thread leaves its loop on the interrupt. */
  pthread_join (n.th, NULL);
  CHECK_EQ (stats_of (n.f.q).reader_naps_woken, 1);
  tbq_queue_free (n.f.q, NULL, NULL);
}

/* Write records one at a time, each read before the next, `n` of them, or
 * until the reader napped (`until_nap`).  The naps counted then. */
static uint64_t
write_one_by_one (NapFixture * n, uint64_t count, bool until_nap)
{
  uint64_t naps = stats_of (n->f.q).reader_naps, i;

  for (i = 0; i < count; i++) {
    if (until_nap && stats_of (n->f.q).reader_naps > naps)
      break;
    CHECK_OK (write_seq (n->f.w, 0, n->written++));
    WAIT_UNTIL (atomic_load (&n->loop.got) == n->written
        || (until_nap && stats_of (n->f.q).reader_naps > naps));
  }
  return stats_of (n->f.q).reader_naps;
}

/* A bound set to 0 while the reader naps: after the nap (a kick ends it)
 * every wait is woken per record, however densely records come; a bound
 * set again makes it nap again.  Bounds validation refuses are refused,
 * as they are in the configuration. */
static void
a_bound_changed_applies_from_the_next_wait (void)
{
  NapFixture n;
  uint64_t naps;

  nap_fixture_open (&n, 4096);
  CHECK_STATUS (tbq_reader_set_coalesce (n.f.r, TBQ_COALESCE_MIN_NS - 1),
      TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_set_coalesce (n.f.r, TBQ_COALESCE_MAX_NS + 1),
      TBQ_INVALID_ARGUMENT);
  CHECK_OK (tbq_reader_set_coalesce (n.f.r, 0));
  tbq_reader_wake (n.f.r);
  WAIT_UNTIL (stats_of (n.f.q).reader_naps_woken == 1);
  /* The record the first nap may have caught comes with its end. */
  tbq_writer_flush (n.f.w);
  WAIT_UNTIL (atomic_load (&n.loop.got) == n.written);
  naps = stats_of (n.f.q).reader_naps;
  CHECK_EQ (write_one_by_one (&n, 500, false), naps);
  CHECK_OK (tbq_reader_set_coalesce (n.f.r, LONG_BOUND_NS));
  CHECK (write_one_by_one (&n, 1000, true) > naps);
  /* The last record may be caught by the nap: a flush ends it. */
  tbq_writer_flush (n.f.w);
  WAIT_UNTIL (atomic_load (&n.loop.got) == n.written);
  nap_fixture_close (&n);
}

/* Without on-demand wake there is nothing to coalesce: only 0 is taken. */
static void
a_bound_needs_on_demand_wake (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqReader *r;

  small_config (&cfg, 256);
  cfg.wake = TBQ_WAKE_IMMEDIATE;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_reader_new (q, &r));
  CHECK_STATUS (tbq_reader_set_coalesce (r, TBQ_COALESCE_MIN_NS),
      TBQ_INVALID_ARGUMENT);
  CHECK_OK (tbq_reader_set_coalesce (r, 0));
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
  CHECK (pthread_create (&th, NULL, copier_thread_main, &c) == 0);
  WAIT_UNTIL (stats_of (q).copier_sleeps >= 1);
  CHECK_OK (write_seq (w, 0, per_block));
  CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
  CHECK_EQ (record_seq (&rec), per_block);
  tbq_queue_interrupt (q);
  pthread_join (th, NULL);
  tbq_queue_free (q, NULL, NULL);
}

/* With on-demand wake a copier pass moves sealed blocks but not
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
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
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
immediate_copier_moves_the_current_block_at_once (void)
{
  check_current_block_pickup (TBQ_WAKE_IMMEDIATE, true);
}

TAP_MAIN (TAP_TEST (every_record_policy_delivers_each_record_without_further_writes),
    TAP_TEST (every_n_policy_publishes_after_n_records),
    TAP_TEST (at_handoff_policy_delivers_nothing_before_flush),
    TAP_TEST (at_handoff_policy_publishes_at_block_handoff),
    TAP_TEST (writer_can_override_the_publish_policy),
    TAP_TEST (immediate_wake_delivers_a_quiet_record_without_further_writes),
    TAP_TEST (on_demand_wake_delivers_a_quiet_record_to_a_waiting_reader),
    TAP_TEST (coalescing_delivers_a_quiet_record_to_a_waiting_reader),
    TAP_TEST (on_demand_wake_moves_records_when_the_reader_starts_waiting),
    TAP_TEST (an_offer_ends_a_nap),
    TAP_TEST (an_offer_leaves_the_current_block_to_the_reader),
    TAP_TEST (publishing_makes_no_wake_up_while_the_reader_naps),
    TAP_TEST (a_writer_short_of_blocks_ends_a_nap_through_the_copier),
    TAP_TEST (interrupt_ends_a_nap),
    TAP_TEST (a_bound_changed_applies_from_the_next_wait),
    TAP_TEST (a_bound_needs_on_demand_wake),
    TAP_TEST (on_demand_reader_gets_a_record_that_needs_a_new_sink_block),
    TAP_TEST (on_demand_copier_moves_sealed_blocks_but_not_the_current_block),
    TAP_TEST (immediate_copier_moves_the_current_block_at_once))
