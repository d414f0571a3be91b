/* Interrupt and resume: every wait (writer, reader, copier) returns
 * TBQ_INTERRUPTED promptly, and resume restores normal operation.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each "blocked" case first waits until the blocked thread sleeps in the
 * kernel, so the interrupt hits a real sleeper, not a thread about to wait.
 */
#include "lib-test.h"

#include <stdatomic.h>

#define BLOCK 256
#define SOURCE_BLOCKS 4
#define PER_BLOCK ((BLOCK - TBQ_BLOCK_HEADER_SIZE) / TBQ_RECORD_SPAN (8))
#define FULL ((uint32_t) (BLOCK - TBQ_BLOCK_HEADER_SIZE - TBQ_RECORD_HEADER_SIZE))

/* `sink_blocks`: the sink pool's fixed size. */
static void
fixture_open_sink (Fixture * f, size_t sink_blocks)
{
  TbqConfig cfg;

  small_config (&cfg, BLOCK);
  cfg.source.min_blocks = SOURCE_BLOCKS;
  cfg.source.max_blocks = SOURCE_BLOCKS;
  cfg.sink.min_blocks = sink_blocks;
  cfg.sink.max_blocks = sink_blocks;
  f->q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (f->q, &f->w));
  CHECK_OK (tbq_reader_new (f->q, &f->r));
}

static void
fixture_open (Fixture * f)
{
  fixture_open_sink (f, 16);
}

static void
fixture_close (Fixture * f)
{
  tbq_queue_free (f->q, NULL, NULL);
}

static void
fill_source_pool (Fixture * f)
{
  uint64_t i;

  for (i = 0; i < SOURCE_BLOCKS * PER_BLOCK; i++)
    CHECK_OK (write_seq (f->w, 0, i));
}

/* A thread running one blocking call. */
typedef struct
{
  Fixture *f;
  TbqStatus (*call) (Fixture * f);
  _Atomic int returned;
  TbqStatus st;
} Blocked;

static void *
blocked_main (void *arg)
{
  Blocked *b = arg;

  b->st = b->call (b->f);
  atomic_store (&b->returned, 1);
  return NULL;
}

/* Start `call` on a thread and return once it sleeps inside the library. */
static void
start_blocked (Blocked * b, pthread_t * th, Fixture * f,
    TbqStatus (*call) (Fixture *))
{
  uint64_t sleeps = sleeps_of (f->q);

  b->f = f;
  b->call = call;
  atomic_init (&b->returned, 0);
  CHECK (pthread_create (th, NULL, blocked_main, b) == 0);
  WAIT_UNTIL (sleeps_of (f->q) > sleeps);
  CHECK (!atomic_load (&b->returned));
}

static TbqStatus
call_write (Fixture * f)
{
  return write_seq (f->w, 0, 12345);
}

static TbqStatus
call_reader_wait (Fixture * f)
{
  return tbq_reader_wait (f->r, -1);
}

static TbqStatus
call_copier_step (Fixture * f)
{
  return tbq_copier_step (f->q, -1);
}

static TbqStatus
call_copier_run (Fixture * f)
{
  return tbq_copier_run (f->q);
}

static TbqStatus
call_writer_sync (Fixture * f)
{
  return tbq_writer_sync (f->w, -1);
}

static void
interrupt_wakes_a_blocked_writer (void)
{
  Fixture f;
  Blocked b;
  pthread_t th;
  TbqStats st;

  fixture_open (&f);
  fill_source_pool (&f);
  start_blocked (&b, &th, &f, call_write);
  tbq_queue_interrupt (f.q);
  pthread_join (th, NULL);
  CHECK_STATUS (b.st, TBQ_INTERRUPTED);
  st = stats_of (f.q);
  /* The interrupted record counts as dropped; the others stay queued. */
  CHECK_EQ (st.records_dropped, 1);
  CHECK_EQ (st.records_in, SOURCE_BLOCKS * PER_BLOCK);
  fixture_close (&f);
}

static void
interrupt_wakes_a_waiting_reader (void)
{
  Fixture f;
  Blocked b;
  pthread_t th;

  fixture_open (&f);
  start_blocked (&b, &th, &f, call_reader_wait);
  tbq_queue_interrupt (f.q);
  pthread_join (th, NULL);
  CHECK_STATUS (b.st, TBQ_INTERRUPTED);
  fixture_close (&f);
}

static void
interrupt_wakes_an_idle_copier (void)
{
  Fixture f;
  Blocked b;
  pthread_t th;

  fixture_open (&f);
  start_blocked (&b, &th, &f, call_copier_step);
  tbq_queue_interrupt (f.q);
  pthread_join (th, NULL);
  CHECK_STATUS (b.st, TBQ_INTERRUPTED);
  fixture_close (&f);
}

static void
write_full (TbqWriter * w, uint64_t seq)
{
  void *p;

  CHECK_OK (tbq_writer_reserve (w, 0, FULL, &p));
  fill_payload (p, FULL, seq);
  tbq_writer_commit (w);
}

static void
interrupt_wakes_a_copier_waiting_for_sink_space (void)
{
  Fixture f;
  Blocked b;
  pthread_t th;
  uint64_t i;

  fixture_open_sink (&f, 2);
  /* Three full-block records for two sink blocks: the third cannot move. */
  for (i = 0; i < 3; i++)
    write_full (f.w, i);
  start_blocked (&b, &th, &f, call_copier_run);
  CHECK_EQ (stats_of (f.q).sink_pressure_waits, 1);
  tbq_queue_interrupt (f.q);
  pthread_join (th, NULL);
  CHECK_STATUS (b.st, TBQ_INTERRUPTED);
  /* Nothing was lost on the way: after resume everything arrives. */
  tbq_queue_resume (f.q);
  for (i = 0; i < 3; i++) {
    TbqRecord rec;

    if (i == 2)
      copier_step_or_fail (f.q);
    CHECK_OK (tbq_reader_next (f.r, &rec));
    CHECK (payload_mismatch (rec.data, rec.size, i) < 0);
  }
  fixture_close (&f);
}

static void
interrupt_wakes_a_syncing_writer (void)
{
  Fixture f;
  Blocked b;
  pthread_t th;

  fixture_open (&f);
  CHECK_OK (write_seq (f.w, 0, 1));
  /* No copier: the sync can only end by interrupt. */
  start_blocked (&b, &th, &f, call_writer_sync);
  tbq_queue_interrupt (f.q);
  pthread_join (th, NULL);
  CHECK_STATUS (b.st, TBQ_INTERRUPTED);
  fixture_close (&f);
}

static void
interrupt_makes_later_waits_return_at_once (void)
{
  Fixture f;

  fixture_open (&f);
  CHECK (!tbq_queue_is_interrupted (f.q));
  tbq_queue_interrupt (f.q);
  CHECK (tbq_queue_is_interrupted (f.q));
  /* Every wait with no time limit returns instead of blocking. */
  CHECK_STATUS (tbq_reader_wait (f.r, -1), TBQ_INTERRUPTED);
  CHECK_STATUS (tbq_copier_step (f.q, -1), TBQ_INTERRUPTED);
  CHECK_STATUS (tbq_copier_run (f.q), TBQ_INTERRUPTED);
  fill_source_pool (&f);
  CHECK_STATUS (write_seq (f.w, 0, 99), TBQ_INTERRUPTED);
  CHECK_STATUS (tbq_writer_sync (f.w, -1), TBQ_INTERRUPTED);
  /* Interrupting twice is the same as once. */
  tbq_queue_interrupt (f.q);
  CHECK (tbq_queue_is_interrupted (f.q));
  fixture_close (&f);
}

static void
interrupt_does_not_refuse_what_needs_no_wait (void)
{
  Fixture f;
  TbqRecord rec;

  fixture_open (&f);
  CHECK_OK (write_seq (f.w, 0, 1));
  copier_step_or_fail (f.q);
  tbq_queue_interrupt (f.q);
  /* Room in the current block, a record ready to read: no wait needed. */
  CHECK_OK (write_seq (f.w, 0, 2));
  CHECK_OK (tbq_reader_next (f.r, &rec));
  CHECK_EQ (record_seq (&rec), 1);
  fixture_close (&f);
}

static void
resume_restores_normal_operation (void)
{
  Fixture f;
  Blocked b;
  pthread_t th;
  uint64_t i;

  fixture_open (&f);
  fill_source_pool (&f);
  start_blocked (&b, &th, &f, call_write);
  tbq_queue_interrupt (f.q);
  pthread_join (th, NULL);
  CHECK_STATUS (b.st, TBQ_INTERRUPTED);
  tbq_queue_resume (f.q);
  CHECK (!tbq_queue_is_interrupted (f.q));
  /* Waits wait again ... */
  CHECK_STATUS (tbq_reader_wait (f.r, 10 * MS_NS), TBQ_TIMEOUT);
  /* ... the copier moves again ... */
  copier_step_or_fail (f.q);
  for (i = 0; i < SOURCE_BLOCKS * PER_BLOCK; i++)
    expect_seq (f.r, i);
  /* ... and the writer continues. */
  CHECK_OK (write_seq (f.w, 0, i));
  copier_step_or_fail (f.q);
  expect_seq (f.r, i);
  fixture_close (&f);
}

static void
copier_thread_pauses_while_interrupted_and_continues_after_resume (void)
{
  Fixture f;
  uint64_t i;

  fixture_open (&f);
  CHECK_OK (tbq_queue_start (f.q));
  CHECK_OK (write_seq (f.w, 0, 0));
  expect_seq (f.r, 0);
  tbq_queue_interrupt (f.q);
  /* The copier thread still owns the copier while paused. */
  CHECK_STATUS (tbq_copier_step (f.q, 0), TBQ_BUSY);
  CHECK_STATUS (tbq_queue_start (f.q), TBQ_BUSY);
  CHECK_OK (write_seq (f.w, 0, 1));
  tbq_queue_resume (f.q);
  expect_seq (f.r, 1);
  for (i = 2; i < 1000; i++) {
    CHECK_OK (write_seq (f.w, 0, i));
    expect_seq (f.r, i);
  }
  fixture_close (&f);
}

static void
paused_copier_thread_can_be_stopped_and_restarted (void)
{
  Fixture f;

  fixture_open (&f);
  CHECK_OK (tbq_queue_start (f.q));
  tbq_queue_interrupt (f.q);
  tbq_queue_stop (f.q);
  tbq_queue_resume (f.q);
  CHECK_OK (write_seq (f.w, 0, 5));
  CHECK_OK (tbq_queue_start (f.q));
  expect_seq (f.r, 5);
  fixture_close (&f);
}

static void
resume_without_interrupt_changes_nothing (void)
{
  Fixture f;

  fixture_open (&f);
  CHECK_OK (tbq_queue_start (f.q));
  tbq_queue_resume (f.q);
  CHECK (!tbq_queue_is_interrupted (f.q));
  CHECK_OK (write_seq (f.w, 0, 3));
  expect_seq (f.r, 3);
  fixture_close (&f);
}

TAP_MAIN (TAP_TEST (interrupt_wakes_a_blocked_writer),
    TAP_TEST (interrupt_wakes_a_waiting_reader),
    TAP_TEST (interrupt_wakes_an_idle_copier),
    TAP_TEST (interrupt_wakes_a_copier_waiting_for_sink_space),
    TAP_TEST (interrupt_wakes_a_syncing_writer),
    TAP_TEST (interrupt_makes_later_waits_return_at_once),
    TAP_TEST (interrupt_does_not_refuse_what_needs_no_wait),
    TAP_TEST (resume_restores_normal_operation),
    TAP_TEST (copier_thread_pauses_while_interrupted_and_continues_after_resume),
    TAP_TEST (paused_copier_thread_can_be_stopped_and_restarted),
    TAP_TEST (resume_without_interrupt_changes_nothing))
