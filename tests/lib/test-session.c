/* Write sessions: many records into the current block, published once.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "lib-test.h"

/* 256-byte blocks hold 192 data bytes: eight 16-byte records (span 24). */
#define BLOCK 256
#define REC 16
#define PER_BLOCK ((BLOCK - TBQ_BLOCK_HEADER_SIZE) / TBQ_RECORD_SPAN (REC))

static void
fixture_open (Fixture * f, const TbqConfig * cfg, bool copier_thread)
{
  f->q = queue_new_or_fail (cfg);
  CHECK_OK (tbq_writer_new (f->q, &f->w));
  CHECK_OK (tbq_reader_new (f->q, &f->r));
  if (copier_thread)
    CHECK_OK (tbq_queue_start (f->q));
}

static void
fixture_open_small (Fixture * f, bool copier_thread)
{
  TbqConfig cfg;

  small_config (&cfg, BLOCK);
  cfg.source.max_blocks = 4;
  fixture_open (f, &cfg, copier_thread);
}

static void
fixture_close (Fixture * f)
{
  tbq_queue_free (f->q, NULL, NULL);
}

static TbqStatus
session_write_seq (TbqSession * s, uint64_t seq)
{
  unsigned char buf[REC];

  fill_payload (buf, REC, seq);
  return tbq_session_write (s, 0, buf, REC);
}

static void
expect_rec (TbqReader * r, uint64_t seq)
{
  TbqRecord rec;

  CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
  CHECK_EQ (rec.size, REC);
  CHECK (payload_mismatch (rec.data, rec.size, seq) < 0);
}

/* No copier thread: a copier pass here moves nothing the reader could
 * take (no window of time: a record published too early is seen). */
static void
expect_nothing_moved (Fixture * f)
{
  TbqRecord rec;

  copier_step_or_fail (f->q);
  CHECK_STATUS (tbq_reader_next (f->r, &rec), TBQ_EMPTY);
}

static void
session_writes_many_records_in_one_block (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqSession s;
  TbqStats st;
  uint64_t i, n = 150;          /* 150 x 24 bytes fit one 4 KiB block */

  tbq_config_init (&cfg);
  fixture_open (&f, &cfg, false);
  tbq_session_begin (f.w, &s);
  for (i = 0; i < n; i++)
    CHECK_OK (session_write_seq (&s, i));
  CHECK_EQ (s.records, n);
  tbq_session_end (&s);
  copier_step_or_fail (f.q);
  for (i = 0; i < n; i++)
    expect_rec (f.r, i);
  st = stats_of (f.q);
  CHECK_EQ (st.records_in, n);
  CHECK_EQ (st.bytes_in, n * REC);
  CHECK_EQ (st.handoffs, 0);
  fixture_close (&f);
}

static void
session_reserve_builds_records_in_place (void)
{
  Fixture f;
  TbqSession s;
  TbqRecord rec;
  uint32_t size;

  fixture_open_small (&f, false);
  tbq_session_begin (f.w, &s);
  for (size = 0; size < 40; size += 8) {
    void *p = tbq_session_reserve (&s, (uint16_t) size, size);

    CHECK (p != NULL);
    CHECK_EQ ((uintptr_t) p % TBQ_RECORD_ALIGN, 0);
    fill_payload (p, size, size);
  }
  tbq_session_end (&s);
  copier_step_or_fail (f.q);
  for (size = 0; size < 40; size += 8) {
    CHECK_OK (tbq_reader_next (f.r, &rec));
    CHECK_EQ (rec.type, size);
    CHECK_EQ (rec.size, size);
    CHECK (payload_mismatch (rec.data, size, size) < 0);
  }
  fixture_close (&f);
}

static void
session_reports_no_space_at_block_end (void)
{
  Fixture f;
  TbqSession s;
  TbqRecord rec;
  uint64_t i;

  fixture_open_small (&f, false);
  tbq_session_begin (f.w, &s);
  for (i = 0; i < PER_BLOCK; i++)
    CHECK_OK (session_write_seq (&s, i));
  /* The block is exactly full: not even an empty record fits. */
  CHECK (tbq_session_reserve (&s, 0, REC) == NULL);
  CHECK (tbq_session_reserve (&s, 0, 0) == NULL);
  CHECK_STATUS (session_write_seq (&s, 99), TBQ_NO_SPACE);
  CHECK_EQ (s.records, PER_BLOCK);
  tbq_session_end (&s);
  copier_step_or_fail (f.q);
  for (i = 0; i < PER_BLOCK; i++)
    expect_rec (f.r, i);
  /* The refused attempts left nothing behind. */
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  CHECK_EQ (stats_of (f.q).records_in, PER_BLOCK);
  fixture_close (&f);
}

static void
session_next_block_continues_in_a_fresh_block (void)
{
  Fixture f;
  TbqSession s;
  uint64_t i, n = PER_BLOCK * 3 + 2;

  fixture_open_small (&f, false);
  tbq_session_begin (f.w, &s);
  for (i = 0; i < n; i++) {
    TbqStatus st = session_write_seq (&s, i);

    if (st == TBQ_NO_SPACE) {
      CHECK_EQ (s.records, PER_BLOCK);
      CHECK_OK (tbq_session_next_block (&s));
      /* Those records are published and counted: the tally restarts. */
      CHECK_EQ (s.records, 0);
      CHECK_EQ (stats_of (f.q).records_in, i);
      st = session_write_seq (&s, i);
    }
    CHECK_OK (st);
  }
  tbq_session_end (&s);
  CHECK_EQ (stats_of (f.q).handoffs, 3);
  copier_step_or_fail (f.q);
  for (i = 0; i < n; i++)
    expect_rec (f.r, i);
  CHECK_EQ (stats_of (f.q).records_in, n);
  fixture_close (&f);
}

static void
session_next_block_refuses_a_record_larger_than_any_extent (void)
{
  Fixture f;
  TbqSession s;
  TbqRecord rec;
  uint32_t max, too_large;
  void *p;

  fixture_open_small (&f, false);
  max = tbq_queue_max_record_size (f.q);
  too_large = tbq_queue_max_extent_size (f.q) + 1;
  CHECK (too_large > max);
  tbq_session_begin (f.w, &s);
  CHECK_OK (session_write_seq (&s, 0));
  CHECK (tbq_session_reserve (&s, 1, too_large) == NULL);
  /* Neither a fresh block nor any extent would hold it: no hand-off, no
   * loop. */
  CHECK_STATUS (tbq_session_next_block (&s), TBQ_TOO_LARGE);
  CHECK_EQ (stats_of (f.q).handoffs, 0);
  /* The session goes on in the same block. */
  CHECK_OK (session_write_seq (&s, 1));
  /* The largest record a block holds is above the inline limit: it goes
   * into an extent at once, its small record into this block. */
  p = tbq_session_reserve (&s, 2, max);
  CHECK (p != NULL);
  fill_payload (p, max, 2);
  tbq_session_end (&s);
  CHECK_EQ (stats_of (f.q).handoffs, 0);
  copier_step_or_fail (f.q);
  expect_rec (f.r, 0);
  expect_rec (f.r, 1);
  CHECK_OK (tbq_reader_next (f.r, &rec));
  CHECK_EQ (rec.size, max);
  CHECK (payload_mismatch (rec.data, max, 2) < 0);
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  fixture_close (&f);
}

static void
session_records_are_published_only_at_session_end (void)
{
  Fixture f;
  TbqSession s;
  uint64_t i;

  /* No copier thread: the copier runs here, and moves exactly what was
   * published. */
  fixture_open_small (&f, false);
  tbq_session_begin (f.w, &s);
  for (i = 0; i < 5; i++)
    CHECK_OK (session_write_seq (&s, i));
  expect_nothing_moved (&f);
  tbq_session_end (&s);
  copier_step_or_fail (f.q);
  for (i = 0; i < 5; i++)
    expect_rec (f.r, i);
  fixture_close (&f);
}

static void
session_next_block_publishes_the_full_block (void)
{
  Fixture f;
  TbqSession s;
  uint64_t i;

  fixture_open_small (&f, false);
  tbq_session_begin (f.w, &s);
  for (i = 0; i < PER_BLOCK; i++)
    CHECK_OK (session_write_seq (&s, i));
  CHECK_OK (tbq_session_next_block (&s));
  CHECK_OK (session_write_seq (&s, PER_BLOCK));
  /* The handed-off block arrives while the session is still open ... */
  copier_step_or_fail (f.q);
  for (i = 0; i < PER_BLOCK; i++)
    expect_rec (f.r, i);
  /* ... the record in the new block only once the session ends. */
  expect_nothing_moved (&f);
  tbq_session_end (&s);
  copier_step_or_fail (f.q);
  expect_rec (f.r, PER_BLOCK);
  fixture_close (&f);
}

static void
session_end_counts_records_and_bytes_once (void)
{
  Fixture f;
  TbqSession s;
  TbqStats st;
  uint64_t i;

  fixture_open_small (&f, false);
  tbq_session_begin (f.w, &s);
  for (i = 0; i < 3; i++)
    CHECK_OK (session_write_seq (&s, i));
  /* Counted when published, not per record. */
  CHECK_EQ (stats_of (f.q).records_in, 0);
  tbq_session_end (&s);
  st = stats_of (f.q);
  CHECK_EQ (st.records_in, 3);
  CHECK_EQ (st.bytes_in, 3 * REC);
  /* Ending an empty session adds nothing. */
  tbq_session_begin (f.w, &s);
  tbq_session_end (&s);
  st = stats_of (f.q);
  CHECK_EQ (st.records_in, 3);
  CHECK_EQ (st.bytes_in, 3 * REC);
  copier_step_or_fail (f.q);
  for (i = 0; i < 3; i++)
    expect_rec (f.r, i);
  st = stats_of (f.q);
  CHECK_EQ (st.records_out, 3);
  CHECK_EQ (st.bytes_out, 3 * REC);
  fixture_close (&f);
}

static void
session_next_block_follows_backpressure_and_keeps_the_session_open (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqSession s;
  TbqStats st;
  uint64_t i, seq = 0;

  small_config (&cfg, BLOCK);
  cfg.backpressure = TBQ_BACKPRESSURE_DROP;
  fixture_open (&f, &cfg, false);
  tbq_session_begin (f.w, &s);
  for (i = 0; i < PER_BLOCK; i++)
    CHECK_OK (session_write_seq (&s, seq++));
  CHECK_OK (tbq_session_next_block (&s));
  for (i = 0; i < PER_BLOCK; i++)
    CHECK_OK (session_write_seq (&s, seq++));
  /* Both source blocks are full and no copier runs. */
  CHECK_STATUS (tbq_session_next_block (&s), TBQ_DROPPED);
  CHECK_STATUS (session_write_seq (&s, seq), TBQ_NO_SPACE);
  /* The records already written are kept (and were published). */
  st = stats_of (f.q);
  CHECK_EQ (st.records_in, 2 * PER_BLOCK);
  CHECK_EQ (st.records_dropped, 0);
  copier_step_or_fail (f.q);
  CHECK_OK (tbq_session_next_block (&s));
  CHECK_OK (session_write_seq (&s, seq++));
  tbq_session_end (&s);
  copier_step_or_fail (f.q);
  for (i = 0; i < seq; i++)
    expect_rec (f.r, i);
  fixture_close (&f);
}

static void
session_write_accepts_empty_records_without_a_buffer (void)
{
  Fixture f;
  TbqSession s;
  TbqRecord rec;

  fixture_open_small (&f, false);
  tbq_session_begin (f.w, &s);
  CHECK_OK (tbq_session_write (&s, 5, NULL, 0));
  tbq_session_end (&s);
  copier_step_or_fail (f.q);
  CHECK_OK (tbq_reader_next (f.r, &rec));
  CHECK_EQ (rec.type, 5);
  CHECK_EQ (rec.size, 0);
  fixture_close (&f);
}

static void
sessions_and_single_writes_keep_one_order (void)
{
  Fixture f;
  TbqSession s;
  unsigned char buf[REC];
  uint64_t i, seq = 0;

  fixture_open_small (&f, false);
  for (i = 0; i < 30; i++) {
    if (i % 3 == 0) {
      fill_payload (buf, REC, seq++);
      CHECK_OK (tbq_writer_write (f.w, 0, buf, REC));
    } else {
      int k;

      tbq_session_begin (f.w, &s);
      for (k = 0; k < 4; k++) {
        TbqStatus st = session_write_seq (&s, seq);

        if (st == TBQ_NO_SPACE) {
          copier_step_or_fail (f.q);
          CHECK_OK (tbq_session_next_block (&s));
          st = session_write_seq (&s, seq);
        }
        CHECK_OK (st);
        seq++;
      }
      tbq_session_end (&s);
    }
    copier_step_or_fail (f.q);
  }
  for (i = 0; i < seq; i++)
    expect_rec (f.r, i);
  fixture_close (&f);
}

TAP_MAIN (TAP_TEST (session_writes_many_records_in_one_block),
    TAP_TEST (session_reserve_builds_records_in_place),
    TAP_TEST (session_reports_no_space_at_block_end),
    TAP_TEST (session_next_block_continues_in_a_fresh_block),
    TAP_TEST (session_next_block_refuses_a_record_larger_than_any_extent),
    TAP_TEST (session_records_are_published_only_at_session_end),
    TAP_TEST (session_next_block_publishes_the_full_block),
    TAP_TEST (session_end_counts_records_and_bytes_once),
    TAP_TEST (session_next_block_follows_backpressure_and_keeps_the_session_open),
    TAP_TEST (session_write_accepts_empty_records_without_a_buffer),
    TAP_TEST (sessions_and_single_writes_keep_one_order))
