/* Block allocation failures: reported once, with what was asked for and
 * why; then the pool holds still and everyone waits (or sees backpressure)
 * instead of retrying; growth is tried again once the pool has shrunk.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Mappings of a chosen size fail on demand (fail-mmap.h).  The blocks of
 * the pools under test, and the extents of large records, are page
 * multiples, which libtbq mmaps, and of a size nothing else in the process
 * maps.
 */
#include "lib-test.h"

#include "fail-mmap.h"

#include <errno.h>

#define SOURCE_BLOCK 4096
#define SINK_BLOCK 8192
/* Records of 1000 bytes: 4 per source block, 8 per sink block. */
#define REC 1000

static void
config_for (TbqConfig * cfg)
{
  tbq_config_init (cfg);
  cfg->source.block_size = SOURCE_BLOCK;
  cfg->source.min_blocks = 2;
  cfg->source.max_blocks = 2;
  cfg->source.max_idle_blocks = 2;
  cfg->sink.block_size = SINK_BLOCK;
  cfg->sink.min_blocks = 2;
  cfg->sink.max_blocks = 64;
  cfg->sink.max_idle_blocks = 2;
  cfg->backpressure = TBQ_BACKPRESSURE_DROP;
}

static TbqStatus
write_rec (TbqWriter * w, uint64_t seq)
{
  unsigned char buf[REC];

  fill_payload (buf, REC, seq);
  memcpy (buf, &seq, sizeof seq);
  return tbq_writer_write (w, 0, buf, REC);
}

/* Take every readable record; they continue the sequence at *next. */
static void
read_all (TbqReader * r, uint64_t * next)
{
  TbqRecord rec;

  while (tbq_reader_next (r, &rec) == TBQ_OK) {
    uint64_t seq;

    CHECK_EQ (rec.size, REC);
    memcpy (&seq, rec.data, sizeof seq);
    CHECK_EQ (seq, *next);
    (*next)++;
  }
}

/* Write `n` records from *seq on, one copier step after each. */
static TbqStatus
write_and_copy (TbqQueue * q, TbqWriter * w, uint64_t * seq, uint64_t n)
{
  TbqStatus st = TBQ_OK;

  while (n-- > 0 && st == TBQ_OK) {
    CHECK_OK (write_rec (w, (*seq)++));
    st = tbq_copier_step (q, 0);
    if (st == TBQ_TIMEOUT)
      st = TBQ_OK;
  }
  return st;
}

static void
expect_error_naming (TbqQueue * q, const char *pool, size_t block)
{
  char msg[256], size[32];

  CHECK_STATUS (tbq_queue_take_error (q, msg, sizeof msg), TBQ_NO_MEMORY);
  printf ("# %s\n", msg);
  snprintf (size, sizeof size, "%zu bytes", block);
  CHECK (strstr (msg, pool) != NULL);
  CHECK (strstr (msg, size) != NULL);
  CHECK (strstr (msg, strerror (ENOMEM)) != NULL);
  /* Each failure is reported once. */
  CHECK_OK (tbq_queue_take_error (q, msg, sizeof msg));
  CHECK (msg[0] == '\0');
}

/* A queue whose copier step just failed to grow the sink pool: two
 * pre-allocated sink blocks hold 16 records, the 17th needs a third.
 * Mappings of sink blocks keep failing. */
static TbqQueue *
queue_failing_a_sink_allocation (TbqWriter ** w, TbqReader ** r, uint64_t * seq)
{
  TbqConfig cfg;
  TbqQueue *q;

  config_for (&cfg);
  q = open_queue (&cfg, w, r);
  fail_mappings_of (SINK_BLOCK);
  CHECK_STATUS (write_and_copy (q, *w, seq, 17), TBQ_NO_MEMORY);
  return q;
}

typedef struct
{
  TbqQueue *q;
  TbqStatus st;
} StepThread;

static void *
step_main (void *arg)
{
  StepThread *t = arg;

  t->st = tbq_copier_step (t->q, -1);
  return NULL;
}

static void
copier_reports_a_failed_sink_allocation_once_and_then_waits (void)
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  StepThread t;
  pthread_t th;
  uint64_t seq = 0, next = 0, sleeps;
  TbqStats st;

  q = queue_failing_a_sink_allocation (&w, &r, &seq);
  CHECK_EQ (failed_mappings (), 1);
  st = stats_of (q);
  CHECK_EQ (st.sink.alloc_failures, 1);
  CHECK_EQ (st.sink.blocks_limit, 2);
  /* The sink pool can take no block now: not even by growing. */
  CHECK (!tbq_queue_sink_can_take (q));
  expect_error_naming (q, "sink pool", SINK_BLOCK);

  /* The next step does not retry: it sleeps until the reader frees a
   * block. */
  t.q = q;
  sleeps = stats_of (q).copier_sleeps;
  CHECK (pthread_create (&th, NULL, step_main, &t) == 0);
  WAIT_UNTIL (stats_of (q).copier_sleeps > sleeps);
  CHECK_EQ (failed_mappings (), 1);
  CHECK_EQ (stats_of (q).sink_pressure_waits, 1);
  read_all (r, &next);
  pthread_join (th, NULL);
  CHECK_OK (t.st);
  CHECK_EQ (failed_mappings (), 1);
  /* Nothing was lost: every record arrives, in order. */
  copier_step_or_fail (q);
  read_all (r, &next);
  CHECK_EQ (next, seq);
  CHECK_EQ (stats_of (q).records_dropped, 0);
  fail_mappings_of (0);
  tbq_queue_free (q, NULL, NULL);
}

static void
sink_pool_grows_again_once_it_has_shrunk (void)
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  uint64_t seq = 0, next = 0;
  TbqStats st;

  q = queue_failing_a_sink_allocation (&w, &r, &seq);
  CHECK_EQ (stats_of (q).sink.blocks_limit, 2);
  CHECK (!tbq_queue_sink_can_take (q));
  fail_mappings_of (0);
  /* Drained, the copier finds nothing to do and trims: the limit is
   * lifted. */
  read_all (r, &next);
  copier_step_or_fail (q);
  read_all (r, &next);
  CHECK_STATUS (tbq_copier_step (q, 0), TBQ_TIMEOUT);
  CHECK_EQ (stats_of (q).sink.blocks_limit,
      tbq_queue_get_config (q)->sink.max_blocks);
  CHECK (tbq_queue_sink_can_take (q));
  /* A backlog of four sink blocks now grows the pool. */
  CHECK_OK (write_and_copy (q, w, &seq, 32));
  st = stats_of (q);
  CHECK (st.sink.blocks_total >= 4);
  CHECK_EQ (st.sink.alloc_failures, 1);
  read_all (r, &next);
  CHECK_EQ (next, seq);
  tbq_queue_free (q, NULL, NULL);
}

static void
writer_reports_a_failed_source_allocation_then_sees_backpressure (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  uint64_t seq = 0, next = 0, i;
  TbqStats st;

  config_for (&cfg);
  cfg.source.max_blocks = 8;    /* may grow beyond the two pre-allocated */
  q = open_queue (&cfg, &w, &r);
  fail_mappings_of (SOURCE_BLOCK);
  /* Two blocks of four records; the ninth record needs a third block. */
  for (i = 0; i < 8; i++)
    CHECK_OK (write_rec (w, seq++));
  CHECK_STATUS (write_rec (w, seq), TBQ_NO_MEMORY);
  CHECK_EQ (failed_mappings (), 1);
  /* The pool holds still: the next write is plain backpressure. */
  CHECK_STATUS (write_rec (w, seq), TBQ_DROPPED);
  CHECK_EQ (failed_mappings (), 1);
  st = stats_of (q);
  CHECK_EQ (st.records_dropped, 2);
  CHECK_EQ (st.source.alloc_failures, 1);
  CHECK_EQ (st.source.blocks_limit, 2);
  expect_error_naming (q, "source pool of writer 0", SOURCE_BLOCK);
  /* The copier returns blocks: the writer goes on in what it has. */
  copier_step_or_fail (q);
  CHECK_OK (write_rec (w, seq++));
  tbq_writer_flush (w);
  copier_step_or_fail (q);
  read_all (r, &next);
  CHECK_EQ (next, seq);
  fail_mappings_of (0);
  tbq_queue_free (q, NULL, NULL);
}

static void
queue_and_writer_creation_say_why_preallocation_failed (void)
{
  TbqConfig cfg;
  TbqQueue *q = NULL;
  TbqWriter *w = NULL;
  char msg[256] = "";

  config_for (&cfg);
  fail_mappings_of (SINK_BLOCK);
  CHECK_STATUS (tbq_queue_new (&cfg, &q, msg, sizeof msg), TBQ_NO_MEMORY);
  printf ("# %s\n", msg);
  CHECK (q == NULL);
  CHECK (strstr (msg, "sink pool") != NULL);
  CHECK (strstr (msg, strerror (ENOMEM)) != NULL);
  fail_mappings_of (SOURCE_BLOCK);
  q = queue_new_or_fail (&cfg);
  CHECK_STATUS (tbq_writer_new (q, &w), TBQ_NO_MEMORY);
  CHECK (w == NULL);
  CHECK_EQ (stats_of (q).writers, 0);
  fail_mappings_of (0);
  CHECK_OK (tbq_writer_new (q, &w));
  tbq_queue_free (q, NULL, NULL);
}

/* A large record whose extent is five pages (a size nothing else maps). */
#define LARGE (5 * 4096 - TBQ_BLOCK_HEADER_SIZE)
#define LARGE_EXTENT (5 * 4096)

static TbqStatus
write_large (TbqWriter * w, uint64_t seq)
{
  static unsigned char buf[LARGE];

  fill_payload (buf, LARGE, seq);
  return tbq_writer_write (w, 1, buf, LARGE);
}

/* The extent of a large record cannot be mapped: TBQ_NO_MEMORY once,
 * with the reason; then the budget holds still (backpressure, no retry)
 * until memory comes back. */
static TbqQueue *
queue_failing_an_extent (TbqBackpressure mode, TbqWriter ** w,
    TbqReader ** r)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqStats st;

  config_for (&cfg);
  cfg.backpressure = mode;
  q = open_queue (&cfg, w, r);
  fail_mappings_of (LARGE_EXTENT);
  CHECK_STATUS (write_large (*w, 0), TBQ_NO_MEMORY);
  CHECK_EQ (failed_mappings (), 1);
  st = stats_of (q);
  CHECK_EQ (st.records_dropped, 1);
  CHECK_EQ (st.extents.alloc_failures, 1);
  CHECK_EQ (st.extents.in_use, 0);
  /* Held where it was, with room for one sink block. */
  CHECK_EQ (st.extents.budget_limit, 2 * SINK_BLOCK);
  expect_error_naming (q, "extent", LARGE_EXTENT);
  return q;
}

static void
failed_extent_is_reported_once_and_then_dropped (void)
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  uint64_t next = 0;
  TbqRecord rec;

  q = queue_failing_an_extent (TBQ_BACKPRESSURE_DROP, &w, &r);
  /* No retry: the budget is full for extents. */
  CHECK_STATUS (write_large (w, 0), TBQ_DROPPED);
  CHECK_EQ (failed_mappings (), 1);
  /* Small records still travel. */
  CHECK_OK (write_rec (w, 0));
  copier_step_or_fail (q);
  read_all (r, &next);
  CHECK_EQ (next, 1);
  /* Memory is back; the idle copier lifts the limit. */
  fail_mappings_of (0);
  copier_step_or_fail (q);
  CHECK_EQ (stats_of (q).extents.budget_limit, 64 * SINK_BLOCK);
  CHECK_OK (write_large (w, 7));
  copier_step_or_fail (q);
  CHECK_OK (tbq_reader_next (r, &rec));
  CHECK_EQ (rec.size, LARGE);
  CHECK (payload_mismatch (rec.data, rec.size, 7) < 0);
  CHECK_EQ (stats_of (q).records_dropped, 2);
  tbq_queue_free (q, NULL, NULL);
}

static TbqStatus
write_large_3 (void *w)
{
  return write_large (w, 3);
}

static void
writer_waiting_after_a_failed_extent_goes_on_when_memory_is_back (void)
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  BlockingCall c;
  TbqRecord rec;

  q = queue_failing_an_extent (TBQ_BACKPRESSURE_BLOCK, &w, &r);
  fail_mappings_of (0);
  blocking_call_start (&c, q, write_large_3, w);
  CHECK_EQ (failed_mappings (), 1);
  /* An idle copier pass lifts the limit, which wakes the writer. */
  copier_step_or_fail (q);
  CHECK_OK (blocking_call_join (&c));
  copier_step_or_fail (q);
  CHECK_OK (tbq_reader_next (r, &rec));
  CHECK (payload_mismatch (rec.data, rec.size, 3) < 0);
  tbq_queue_free (q, NULL, NULL);
}

TAP_MAIN (TAP_TEST (copier_reports_a_failed_sink_allocation_once_and_then_waits),
    TAP_TEST (sink_pool_grows_again_once_it_has_shrunk),
    TAP_TEST (writer_reports_a_failed_source_allocation_then_sees_backpressure),
    TAP_TEST (queue_and_writer_creation_say_why_preallocation_failed),
    TAP_TEST (failed_extent_is_reported_once_and_then_dropped),
    TAP_TEST (writer_waiting_after_a_failed_extent_goes_on_when_memory_is_back))
