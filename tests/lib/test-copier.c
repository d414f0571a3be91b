/* Copier: moves published records into the sink layer, in order, once,
 * and returns source blocks; runs on its own thread or in the caller's.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "lib-test.h"

#include <stdatomic.h>

/* Records of 8..max_size bytes whose first 8 bytes carry the sequence
 * number and whose tail is derived from it. */
static uint32_t max_size = 120;

static uint32_t
seq_size (uint64_t seq)
{
  return 8 + (uint32_t) (mix64 (seq) % (max_size - 7));
}

static TbqStatus
write_numbered (TbqWriter * w, uint64_t seq)
{
  unsigned char buf[128];
  uint32_t size = seq_size (seq);

  memcpy (buf, &seq, 8);
  fill_payload (buf + 8, size - 8, seq);
  return tbq_writer_write (w, (uint16_t) seq, buf, size);
}

/* The record is the one numbered `want`, intact. */
static void
check_numbered (const TbqRecord * rec, uint64_t want)
{
  uint64_t got;

  CHECK (rec->size >= 8);
  memcpy (&got, rec->data, 8);
  if (got != want) {
    printf ("# expected record %" PRIu64 ", got %" PRIu64 "\n", want, got);
    CHECK (0);
  }
  CHECK_EQ (rec->size, seq_size (want));
  CHECK_EQ (rec->type, (uint16_t) want);
  CHECK (payload_mismatch ((const unsigned char *) rec->data + 8,
          rec->size - 8, want) < 0);
}

typedef struct
{
  TbqWriter *w;
  uint64_t n;
  TbqStatus st;
} WriterArgs;

static void *
writer_main (void *arg)
{
  WriterArgs *a = arg;
  uint64_t i;

  a->st = TBQ_OK;
  for (i = 0; i < a->n && a->st == TBQ_OK; i++)
    a->st = write_numbered (a->w, i);
  tbq_writer_flush (a->w);
  return NULL;
}

static void
copier_keeps_fifo_order_without_loss_or_duplicates (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqReader *r;
  TbqRecord rec;
  WriterArgs a;
  pthread_t th;
  uint64_t i;

  small_config (&cfg, 512);
  cfg.source.max_blocks = 3;
  cfg.sink.block_size = 1024;
  cfg.sink.max_blocks = 8;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &a.w));
  CHECK_OK (tbq_reader_new (q, &r));
  CHECK_OK (tbq_queue_start (q));
  a.n = scaled (300000);
  CHECK (pthread_create (&th, NULL, writer_main, &a) == 0);
  for (i = 0; i < a.n; i++) {
    CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
    check_numbered (&rec, i);
  }
  pthread_join (th, NULL);
  CHECK_OK (a.st);
  CHECK_STATUS (tbq_reader_next (r, &rec), TBQ_EMPTY);
  CHECK_EQ (stats_of (q).records_out, a.n);
  tbq_queue_free (q, NULL, NULL);
}

static void
copier_returns_source_blocks_so_the_writer_keeps_going (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqReader *r;
  TbqRecord rec;
  TbqStats st;
  WriterArgs a;
  pthread_t th;
  uint64_t i;

  /* Two tiny source blocks: the writer can only continue if the copier
   * gives each one back as soon as it has moved it. */
  small_config (&cfg, 128);
  cfg.sink.block_size = 512;
  cfg.sink.max_blocks = 4;
  /* A writer stuck for this long fails the test instead of hanging it. */
  cfg.block_timeout_ns = EVENTUALLY_NS;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &a.w));
  CHECK_OK (tbq_reader_new (q, &r));
  CHECK_OK (tbq_queue_start (q));
  a.n = scaled (100000);
  /* Up to the largest record a 128-byte block takes. */
  max_size = tbq_queue_max_record_size (q);
  CHECK_EQ (max_size, 56);
  CHECK (pthread_create (&th, NULL, writer_main, &a) == 0);
  for (i = 0; i < a.n; i++) {
    CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
    check_numbered (&rec, i);
  }
  pthread_join (th, NULL);
  CHECK_OK (a.st);
  st = stats_of (q);
  CHECK_EQ (st.records_dropped, 0);
  CHECK (st.source.blocks_peak <= 2);
  CHECK (st.source.blocks_total <= 2);
  CHECK (st.handoffs > a.n / 4);
  tbq_queue_free (q, NULL, NULL);
}

static void
copier_moves_records_from_the_current_block (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;
  uint64_t i;

  tbq_config_init (&cfg);
  q = open_queue (&cfg, &w, &r);
  /* Each record is picked up from the block the writer is still filling. */
  for (i = 0; i < 10; i++) {
    CHECK_OK (write_seq (w, 0, i));
    CHECK_STATUS (tbq_reader_next (r, &rec), TBQ_EMPTY);
    CHECK_OK (tbq_copier_step (q, 0));
    CHECK_OK (tbq_reader_next (r, &rec));
    CHECK_EQ (record_seq (&rec), i);
  }
  CHECK_EQ (stats_of (q).handoffs, 0);
  tbq_queue_free (q, NULL, NULL);
}

static void
copier_step_runs_in_the_callers_thread (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;
  uint64_t i, next = 0, n = scaled (50000);

  /* No tbq_queue_start(): the caller drives the copier, e.g. from a host
   * framework's task. */
  small_config (&cfg, 512);
  cfg.source.max_blocks = 4;
  q = open_queue (&cfg, &w, &r);
  for (i = 0; i < n; i++) {
    CHECK_OK (write_numbered (w, i));
    if (i % 7 == 6) {
      CHECK_OK (tbq_copier_step (q, 0));
      while (tbq_reader_next (r, &rec) == TBQ_OK)
        check_numbered (&rec, next++);
      CHECK_EQ (next, i + 1);
    }
  }
  copier_step_or_fail (q);
  while (tbq_reader_next (r, &rec) == TBQ_OK)
    check_numbered (&rec, next++);
  CHECK_EQ (next, n);
  CHECK_EQ (stats_of (q).copier_wakeups, 0);
  tbq_queue_free (q, NULL, NULL);
}

static void
copier_step_times_out_when_idle (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  int64_t t0;

  tbq_config_init (&cfg);
  q = queue_new_or_fail (&cfg);
  CHECK_STATUS (tbq_copier_step (q, 0), TBQ_TIMEOUT);
  CHECK_OK (tbq_writer_new (q, &w));
  t0 = now_ns ();
  CHECK_STATUS (tbq_copier_step (q, 30 * MS_NS), TBQ_TIMEOUT);
  /* It waited for work rather than returning at once. */
  CHECK (now_ns () - t0 >= 30 * MS_NS);
  /* Moving something is TBQ_OK, the next idle step times out again. */
  CHECK_OK (write_seq (w, 0, 1));
  CHECK_OK (tbq_copier_step (q, 30 * MS_NS));
  CHECK_STATUS (tbq_copier_step (q, 0), TBQ_TIMEOUT);
  CHECK_STATUS (tbq_copier_step (NULL, 0), TBQ_INVALID_ARGUMENT);
  tbq_queue_free (q, NULL, NULL);
}

typedef struct
{
  TbqQueue *q;
  TbqStatus st;
} StepArgs;

static void *
step_main (void *arg)
{
  StepArgs *a = arg;

  a->st = tbq_copier_step (a->q, 60 * SEC_NS);
  return NULL;
}

static void
copier_step_returns_when_work_arrives (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  StepArgs a;
  pthread_t th;

  tbq_config_init (&cfg);
  q = open_queue (&cfg, &w, &r);
  a.q = q;
  CHECK (pthread_create (&th, NULL, step_main, &a) == 0);
  CHECK_OK (write_seq (w, 0, 7));
  /* The waiting step wakes up and moves the record. */
  expect_seq (r, 7);
  pthread_join (th, NULL);
  CHECK_OK (a.st);
  tbq_queue_free (q, NULL, NULL);
}

static void
copier_step_is_busy_while_the_copier_thread_runs (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqReader *r;
  TbqRecord rec;
  WriterArgs a;
  pthread_t th;
  uint64_t next = 0, busy = 0;

  small_config (&cfg, 256);
  cfg.source.max_blocks = 4;
  cfg.block_timeout_ns = EVENTUALLY_NS;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &a.w));
  CHECK_OK (tbq_reader_new (q, &r));
  CHECK_OK (tbq_queue_start (q));
  CHECK_STATUS (tbq_queue_start (q), TBQ_BUSY);
  a.n = scaled (200000);
  CHECK (pthread_create (&th, NULL, writer_main, &a) == 0);
  /* While records stream through the copier thread, every attempt to run
   * a step elsewhere is refused, and the copier thread carries on. */
  while (next < a.n) {
    CHECK_STATUS (tbq_copier_step (q, 0), TBQ_BUSY);
    busy++;
    if (busy % 64 == 0)
      CHECK_STATUS (tbq_copier_run (q), TBQ_BUSY);
    if (tbq_reader_next (r, &rec) == TBQ_OK) {
      check_numbered (&rec, next++);
    } else {
      CHECK (tbq_reader_wait (r, EVENTUALLY_NS) == TBQ_OK);
    }
  }
  pthread_join (th, NULL);
  CHECK_OK (a.st);
  tbq_queue_free (q, NULL, NULL);
}

static void
copier_step_works_after_the_copier_thread_stopped (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;

  tbq_config_init (&cfg);
  q = open_queue (&cfg, &w, &r);
  CHECK_OK (tbq_queue_start (q));
  CHECK_OK (write_seq (w, 0, 1));
  expect_seq (r, 1);
  tbq_queue_stop (q);
  /* Stopped (the thread is joined): records stay queued, nobody can move
   * them. */
  CHECK_OK (write_seq (w, 0, 2));
  CHECK_STATUS (tbq_reader_next (r, &rec), TBQ_EMPTY);
  /* The caller may now drive the copier itself, with normal results. */
  CHECK_OK (tbq_copier_step (q, 0));
  CHECK_OK (tbq_reader_next (r, &rec));
  CHECK_EQ (record_seq (&rec), 2);
  CHECK_STATUS (tbq_copier_step (q, 20 * MS_NS), TBQ_TIMEOUT);
  /* And start the thread again. */
  CHECK_OK (tbq_queue_start (q));
  CHECK_OK (write_seq (w, 0, 3));
  expect_seq (r, 3);
  tbq_queue_stop (q);
  tbq_queue_stop (q);
  tbq_queue_free (q, NULL, NULL);
}

static void
writer_sync_returns_once_records_are_readable (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;
  uint64_t i, next = 0, n = scaled (2000);

  small_config (&cfg, 256);
  cfg.source.max_blocks = 4;
  q = open_queue (&cfg, &w, &r);
  CHECK_OK (tbq_queue_start (q));
  for (i = 0; i < n; i++) {
    CHECK_OK (write_numbered (w, i));
    /* Sometimes from the block being filled, sometimes after hand-offs. */
    if (mix64 (i) % 3 == 0) {
      CHECK_OK (tbq_writer_sync (w, EVENTUALLY_NS));
      /* Synced means moved into the sink layer: all of it is readable
       * without waiting. */
      while (tbq_reader_next (r, &rec) == TBQ_OK)
        check_numbered (&rec, next++);
      CHECK_EQ (next, i + 1);
    }
  }
  tbq_queue_free (q, NULL, NULL);
}

static void
writer_sync_times_out_without_a_copier (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;

  tbq_config_init (&cfg);
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  /* Nothing written: nothing to wait for. */
  CHECK_OK (tbq_writer_sync (w, 0));
  CHECK_OK (write_seq (w, 0, 1));
  CHECK_STATUS (tbq_writer_sync (w, 20 * MS_NS), TBQ_TIMEOUT);
  copier_step_or_fail (q);
  CHECK_OK (tbq_writer_sync (w, 0));
  tbq_queue_free (q, NULL, NULL);
}

typedef struct
{
  TbqWriter *w;
  TbqStatus st;
} WaitCopied;

static void *
wait_copied_main (void *arg)
{
  WaitCopied *a = arg;

  a->st = tbq_writer_wait_copied (a->w, EVENTUALLY_NS);
  return NULL;
}

static void
wait_copied_from_another_thread_returns_once_records_are_readable (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;
  WaitCopied a;
  pthread_t th;
  uint64_t i, n = 50;

  /* On-demand wake with nobody reading: nothing but the wait itself asks
   * the copier to move the writer's current block. */
  tbq_config_init (&cfg);
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  q = open_queue (&cfg, &w, &r);
  CHECK_OK (tbq_queue_start (q));
  for (i = 0; i < n; i++)
    CHECK_OK (write_seq (w, 0, i));
  a.w = w;
  CHECK (pthread_create (&th, NULL, wait_copied_main, &a) == 0);
  pthread_join (th, NULL);
  CHECK_OK (a.st);
  for (i = 0; i < n; i++) {
    CHECK_OK (tbq_reader_next (r, &rec));
    CHECK_EQ (record_seq (&rec), i);
  }
  tbq_queue_free (q, NULL, NULL);
}

static void
wait_copied_waits_only_for_what_was_published (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;

  tbq_config_init (&cfg);
  cfg.publish = TBQ_PUBLISH_AT_HANDOFF;
  q = open_queue (&cfg, &w, &r);
  /* Written but not published: nothing to wait for, and it publishes
   * nothing (unlike tbq_writer_sync). */
  CHECK_OK (write_seq (w, 0, 1));
  CHECK_OK (tbq_writer_wait_copied (w, 0));
  CHECK_STATUS (tbq_copier_step (q, 0), TBQ_TIMEOUT);
  CHECK_STATUS (tbq_reader_next (r, &rec), TBQ_EMPTY);
  /* Published, it waits for the copier. */
  tbq_writer_flush (w);
  CHECK_STATUS (tbq_writer_wait_copied (w, 20 * MS_NS), TBQ_TIMEOUT);
  copier_step_or_fail (q);
  CHECK_OK (tbq_writer_wait_copied (w, 0));
  expect_seq (r, 1);
  tbq_queue_free (q, NULL, NULL);
}

static void
the_longest_timeouts_wait_without_overflow (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;

  /* Every deadline computed from INT64_MAX (UBSan checks the arithmetic);
   * each returns as soon as what it waits for holds. */
  tbq_config_init (&cfg);
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  cfg.max_coalesce_ns = TBQ_COALESCE_MAX_NS;
  cfg.block_timeout_ns = INT64_MAX;
  q = open_queue (&cfg, &w, &r);
  CHECK_OK (write_seq (w, 0, 1));
  tbq_writer_flush (w);
  CHECK_OK (tbq_copier_step (q, INT64_MAX));
  CHECK_OK (tbq_writer_sync (w, INT64_MAX));
  CHECK_OK (tbq_writer_wait_copied (w, INT64_MAX));
  CHECK_OK (tbq_reader_wait (r, INT64_MAX));
  CHECK_OK (tbq_reader_next (r, &rec));
  CHECK_EQ (record_seq (&rec), 1);
  tbq_reader_wake (r);
  CHECK_OK (tbq_reader_sleep (r, tbq_reader_prepare_wait (r), INT64_MAX));
  tbq_queue_free (q, NULL, NULL);
}

TAP_MAIN (TAP_TEST (copier_keeps_fifo_order_without_loss_or_duplicates),
    TAP_TEST (copier_returns_source_blocks_so_the_writer_keeps_going),
    TAP_TEST (copier_moves_records_from_the_current_block),
    TAP_TEST (copier_step_runs_in_the_callers_thread),
    TAP_TEST (copier_step_times_out_when_idle),
    TAP_TEST (copier_step_returns_when_work_arrives),
    TAP_TEST (copier_step_is_busy_while_the_copier_thread_runs),
    TAP_TEST (copier_step_works_after_the_copier_thread_stopped),
    TAP_TEST (writer_sync_returns_once_records_are_readable),
    TAP_TEST (writer_sync_times_out_without_a_copier),
    TAP_TEST (wait_copied_from_another_thread_returns_once_records_are_readable),
    TAP_TEST (wait_copied_waits_only_for_what_was_published),
    TAP_TEST (the_longest_timeouts_wait_without_overflow))
