/* The argument contract of tbq.h: every exported function refuses a NULL
 * object or out-pointer with TBQ_INVALID_ARGUMENT (or ignores it, when it
 * has no status), and refuses detectable misuse, changing nothing.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each test also checks that the queue still works afterwards and that a
 * refused call left nothing queued and counted nothing.
 */
#include "lib-test.h"

#include <signal.h>
#include <sys/wait.h>

static void
fixture_open (Fixture * f)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  f->q = open_queue (&cfg, &f->w, &f->r);
}

/* The queue still carries a record from writer to reader, and nothing
 * else is queued or was counted as accepted or dropped before it. */
static void
fixture_still_works_and_close (Fixture * f, uint64_t records_in)
{
  TbqStats st;

  CHECK_OK (write_seq (f->w, 0, 77));
  copier_step_or_fail (f->q);
  expect_seq (f->r, 77);
  CHECK_STATUS (tbq_copier_step (f->q, 0), TBQ_TIMEOUT);
  {
    TbqRecord rec;

    CHECK_STATUS (tbq_reader_next (f->r, &rec), TBQ_EMPTY);
  }
  st = stats_of (f->q);
  CHECK_EQ (st.records_in, records_in + 1);
  CHECK_EQ (st.records_dropped, 0);
  tbq_queue_free (f->q, NULL, NULL);
}

static void
config_and_queue_entry_points_refuse_null (void)
{
  TbqConfig cfg;
  TbqQueue *q = (TbqQueue *) (uintptr_t) 1;
  char msg[64];

  tbq_config_init (NULL);
  CHECK_STATUS (tbq_config_validate (NULL, NULL, 0), TBQ_INVALID_CONFIG);
  tbq_config_init (&cfg);
  CHECK_STATUS (tbq_queue_new (&cfg, NULL, msg, sizeof msg),
      TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_queue_new (NULL, &q, NULL, 0), TBQ_INVALID_CONFIG);
  CHECK (q == NULL);
  tbq_queue_free (NULL, NULL, NULL);
  CHECK (tbq_queue_get_config (NULL) == NULL);
  CHECK_EQ (tbq_queue_max_record_size (NULL), 0);
  CHECK_EQ (tbq_queue_max_inline_size (NULL), 0);
  CHECK_EQ (tbq_queue_max_extent_size (NULL), 0);
  CHECK_STATUS (tbq_queue_start (NULL), TBQ_INVALID_ARGUMENT);
  tbq_queue_stop (NULL);
  tbq_queue_interrupt (NULL);
  tbq_queue_resume (NULL);
  CHECK_EQ (tbq_queue_is_interrupted (NULL), 0);
  tbq_queue_discard (NULL, NULL, NULL);
  CHECK_STATUS (tbq_queue_take_error (NULL, msg, sizeof msg),
      TBQ_INVALID_ARGUMENT);
  tbq_queue_get_stats (NULL, NULL);
  CHECK_EQ (tbq_queue_sink_can_take (NULL), 0);
  CHECK_EQ (tbq_queue_sink_can_take_record (NULL, 1), 0);
  CHECK_EQ (tbq_queue_sink_half_used (NULL), 0);
  CHECK_STATUS (tbq_copier_step (NULL, 0), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_copier_run (NULL), TBQ_INVALID_ARGUMENT);
}

static void
stats_without_a_destination_is_ignored (void)
{
  Fixture f;

  fixture_open (&f);
  tbq_queue_get_stats (f.q, NULL);
  fixture_still_works_and_close (&f, 0);
}

static void
writer_entry_points_refuse_null (void)
{
  Fixture f;
  TbqWriter *w = (TbqWriter *) (uintptr_t) 1;
  void *p = NULL;

  fixture_open (&f);
  CHECK_STATUS (tbq_writer_new (NULL, &w), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_writer_new (f.q, NULL), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_writer_write (NULL, 0, "x", 1), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_writer_reserve (NULL, 0, 8, &p), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_writer_reserve (f.w, 0, 8, NULL), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_writer_commit (NULL), TBQ_INVALID_ARGUMENT);
  tbq_writer_cancel (NULL);
  tbq_writer_flush (NULL);
  CHECK_STATUS (tbq_writer_sync (NULL, 0), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_writer_wait_copied (NULL, 0), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_writer_set_backpressure (NULL, TBQ_BACKPRESSURE_DROP, 0),
      TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_writer_set_publish (NULL, TBQ_PUBLISH_EVERY_RECORD, 1),
      TBQ_INVALID_ARGUMENT);
  tbq_writer_close (NULL);
  fixture_still_works_and_close (&f, 0);
}

static void
write_without_data_is_refused_unless_empty (void)
{
  Fixture f;
  TbqRecord rec;

  fixture_open (&f);
  CHECK_STATUS (tbq_writer_write (f.w, 3, NULL, 16), TBQ_INVALID_ARGUMENT);
  /* An empty record needs no buffer. */
  CHECK_OK (tbq_writer_write (f.w, 4, NULL, 0));
  copier_step_or_fail (f.q);
  CHECK_OK (tbq_reader_next (f.r, &rec));
  CHECK_EQ (rec.type, 4);
  CHECK_EQ (rec.size, 0);
  fixture_still_works_and_close (&f, 1);
}

static void
commit_without_a_reservation_is_refused (void)
{
  Fixture f;
  void *p;

  fixture_open (&f);
  CHECK_STATUS (tbq_writer_commit (f.w), TBQ_INVALID_ARGUMENT);
  /* Committed once, it cannot be committed again. */
  CHECK_OK (tbq_writer_reserve (f.w, 0, 8, &p));
  memset (p, 0, 8);
  CHECK_OK (tbq_writer_commit (f.w));
  CHECK_STATUS (tbq_writer_commit (f.w), TBQ_INVALID_ARGUMENT);
  /* Cancelled, it cannot be committed. */
  CHECK_OK (tbq_writer_reserve (f.w, 0, 8, &p));
  tbq_writer_cancel (f.w);
  CHECK_STATUS (tbq_writer_commit (f.w), TBQ_INVALID_ARGUMENT);
  /* Written over by a write, it cannot be committed either. */
  CHECK_OK (tbq_writer_reserve (f.w, 0, 8, &p));
  CHECK_OK (write_seq (f.w, 0, 5));
  CHECK_STATUS (tbq_writer_commit (f.w), TBQ_INVALID_ARGUMENT);
  /* Exactly the committed record and the write arrived. */
  copier_step_or_fail (f.q);
  {
    TbqRecord rec;

    CHECK_OK (tbq_reader_next (f.r, &rec));
    CHECK_EQ (rec.size, 8);
  }
  expect_seq (f.r, 5);
  fixture_still_works_and_close (&f, 2);
}

static void
unknown_writer_modes_are_refused_and_change_nothing (void)
{
  Fixture f;
  uint64_t i;

  fixture_open (&f);
  CHECK_STATUS (tbq_writer_set_backpressure (f.w, (TbqBackpressure) 9, 0),
      TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_writer_set_publish (f.w, (TbqPublishPolicy) 9, 1),
      TBQ_INVALID_ARGUMENT);
  /* Still BLOCK (it waits rather than drops) and EVERY_RECORD (the copier
   * sees each record at once). */
  for (i = 0; i < 3; i++)
    CHECK_OK (write_seq (f.w, 0, i));
  copier_step_or_fail (f.q);
  for (i = 0; i < 3; i++)
    expect_seq (f.r, i);
  fixture_still_works_and_close (&f, 3);
}

static void
session_on_a_null_writer_refuses_every_record (void)
{
  TbqSession s;

  tbq_session_begin (NULL, &s);
  CHECK (tbq_session_reserve (&s, 0, 8) == NULL);
  CHECK_STATUS (tbq_session_write (&s, 0, "12345678", 8), TBQ_NO_SPACE);
  CHECK_STATUS (tbq_session_next_block (&s), TBQ_INVALID_ARGUMENT);
  /* A large record too (it would take an extent). */
  CHECK (tbq_session_reserve (&s, 0, 1 << 20) == NULL);
  CHECK_STATUS (tbq_session_next_block (&s), TBQ_INVALID_ARGUMENT);
  tbq_session_end (&s);
  /* The out-of-line halves check their session too. */
  tbq_session_begin_impl (NULL, NULL);
  CHECK_STATUS (tbq_session_next_block_impl (NULL), TBQ_INVALID_ARGUMENT);
  CHECK (tbq_session_reserve_large_impl (NULL, 0, 1 << 20) == NULL);
  tbq_session_end_impl (NULL);
}

static void
reader_entry_points_refuse_null (void)
{
  Fixture f;
  TbqReader *r = (TbqReader *) (uintptr_t) 1;
  TbqRecord rec;

  fixture_open (&f);
  CHECK_STATUS (tbq_reader_new (NULL, &r), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_new (f.q, NULL), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_next (NULL, &rec), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_next (f.r, NULL), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_peek (NULL, &rec), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_peek (f.r, NULL), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_wait (NULL, 0), TBQ_INVALID_ARGUMENT);
  CHECK_EQ (tbq_reader_prepare_wait (NULL), 0);
  CHECK_STATUS (tbq_reader_sleep (NULL, 0, 0), TBQ_INVALID_ARGUMENT);
  tbq_reader_wake (NULL);
  CHECK_STATUS (tbq_reader_set_coalesce (NULL, 0), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_set_batch (NULL, 1), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_set_batch (f.r, 0), TBQ_INVALID_ARGUMENT);
  tbq_reader_get_stats (NULL, NULL);
  tbq_reader_get_stats (f.r, NULL);
  tbq_reader_note_idle (NULL);
  tbq_reader_free (NULL);
  tbq_block_ref (NULL);
  tbq_block_unref (NULL);
  CHECK (tbq_block_from_file (NULL) == 0);
  CHECK (tbq_block_leave_budget (NULL) == 0);
  CHECK_STATUS (tbq_consumer_start (NULL, NULL, NULL), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_consumer_start (f.r, NULL, NULL), TBQ_INVALID_ARGUMENT);
  tbq_consumer_stop (NULL);
  /* A consumer that never started stops at once. */
  tbq_consumer_stop (f.r);
  fixture_still_works_and_close (&f, 0);
}

static void
a_reader_of_several_refuses_null_and_bad_values (void)
{
  Fixture f;
  TbqConfig cfg;
  TbqRecord rec;
  TbqReaderStats rs;

  tbq_config_init (&cfg);
  cfg.max_readers = 2;
  f.q = open_queue (&cfg, &f.w, &f.r);
  CHECK_STATUS (tbq_reader_next (f.r, NULL), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_peek (f.r, NULL), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_set_batch (f.r, 0), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_set_batch (f.r, TBQ_READER_BATCH_MAX + 1),
      TBQ_INVALID_ARGUMENT);
  /* Immediate wake: no coalescing bound but 0. */
  CHECK_STATUS (tbq_reader_set_coalesce (f.r, TBQ_COALESCE_MIN_NS),
      TBQ_INVALID_ARGUMENT);
  CHECK_OK (tbq_reader_set_coalesce (f.r, 0));
  CHECK_STATUS (tbq_consumer_start (f.r, NULL, NULL), TBQ_INVALID_ARGUMENT);
  tbq_consumer_stop (f.r);
  tbq_reader_get_stats (f.r, NULL);
  tbq_reader_note_idle (f.r);
  tbq_reader_get_stats (f.r, &rs);
  CHECK_EQ (rs.records_out, 0);
  CHECK_EQ (rs.batches, 0);
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  fixture_still_works_and_close (&f, 0);
}

/* Run `fn` in a child process: true when it died of SIGABRT. */
static bool
aborts (void (*fn) (void))
{
  int status = 0;
  pid_t pid = fork ();

  if (pid == 0) {
    /* Keep the expected abort quiet under the sanitizers' reports. */
    signal (SIGABRT, SIG_DFL);
    fn ();
    _exit (0);
  }
  CHECK (pid > 0 && waitpid (pid, &status, 0) == pid);
  return WIFSIGNALED (status) && WTERMSIG (status) == SIGABRT;
}

static void
reserve_on_no_session (void)
{
  tbq_session_reserve (NULL, 0, 8);
}

static void
write_from_no_buffer (void)
{
  TbqSession s;
  unsigned char block[64];

  memset (&s, 0, sizeof s);
  s.pos = block;
  s.end = block + sizeof block;
  tbq_session_write (&s, 0, NULL, 8);
}

/* Compiled with TBQ_DEBUG (see meson.build): the inline session functions,
 * which check nothing for speed, assert their arguments. */
static void
debug_builds_assert_the_inline_session_arguments (void)
{
#ifdef TBQ_DEBUG
  CHECK (aborts (reserve_on_no_session));
  CHECK (aborts (write_from_no_buffer));
#else
#error "test-contract is built with TBQ_DEBUG"
#endif
}

TAP_MAIN (TAP_TEST (config_and_queue_entry_points_refuse_null),
    TAP_TEST (stats_without_a_destination_is_ignored),
    TAP_TEST (writer_entry_points_refuse_null),
    TAP_TEST (write_without_data_is_refused_unless_empty),
    TAP_TEST (commit_without_a_reservation_is_refused),
    TAP_TEST (unknown_writer_modes_are_refused_and_change_nothing),
    TAP_TEST (session_on_a_null_writer_refuses_every_record),
    TAP_TEST (reader_entry_points_refuse_null),
    TAP_TEST (a_reader_of_several_refuses_null_and_bad_values),
    TAP_TEST (debug_builds_assert_the_inline_session_arguments))
