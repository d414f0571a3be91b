/* Statistics: every counter matches what the test did.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "lib-test.h"

#include <stdatomic.h>

#define BLOCK 256
#define PER_BLOCK ((BLOCK - TBQ_BLOCK_HEADER_SIZE) / TBQ_RECORD_SPAN (8))

static void
fixture_open_cfg (Fixture * f, const TbqConfig * cfg)
{
  f->q = queue_new_or_fail (cfg);
  CHECK_OK (tbq_writer_new (f->q, &f->w));
  CHECK_OK (tbq_reader_new (f->q, &f->r));
}

static void
fixture_open (Fixture * f)
{
  TbqConfig cfg;

  small_config (&cfg, BLOCK);
  cfg.source.min_blocks = 4;
  cfg.source.max_blocks = 4;
  cfg.source.max_idle_blocks = 4;
  fixture_open_cfg (f, &cfg);
}

static void
fixture_close (Fixture * f)
{
  tbq_queue_free (f->q, NULL, NULL);
}

static void
stats_count_records_and_bytes_in_and_out (void)
{
  Fixture f;
  TbqStats st;
  TbqRecord rec;
  unsigned char buf[64] = { 0 };
  uint64_t i, bytes = 0, spans = 0;

  fixture_open (&f);
  st = stats_of (f.q);
  CHECK_EQ (st.records_in + st.records_out + st.bytes_in + st.bytes_out, 0);
  for (i = 0; i < 20; i++) {
    CHECK_OK (tbq_writer_write (f.w, 0, buf, (uint32_t) i));
    bytes += i;
    spans += TBQ_RECORD_SPAN (i);
  }
  st = stats_of (f.q);
  CHECK_EQ (st.records_in, 20);
  CHECK_EQ (st.bytes_in, bytes);
  CHECK_EQ (st.records_out, 0);
  CHECK_EQ (st.bytes_copied, 0);
  copier_step_or_fail (f.q);
  /* The copier moves whole records: payload, headers and padding. */
  CHECK_EQ (stats_of (f.q).bytes_copied, spans);
  for (i = 0; i < 8; i++)
    CHECK_OK (tbq_reader_next (f.r, &rec));
  st = stats_of (f.q);
  CHECK_EQ (st.records_out, 8);
  CHECK_EQ (st.bytes_out, 0 + 1 + 2 + 3 + 4 + 5 + 6 + 7);
  while (tbq_reader_next (f.r, &rec) == TBQ_OK) {
  }
  st = stats_of (f.q);
  CHECK_EQ (st.records_out, 20);
  CHECK_EQ (st.bytes_out, bytes);
  fixture_close (&f);
}

static void
stats_count_every_refused_record_as_dropped (void)
{
  Fixture f;
  TbqStats st;
  unsigned char *big;
  uint32_t too_large;
  uint64_t i;

  fixture_open (&f);
  too_large = tbq_queue_max_extent_size (f.q) + 1;
  big = calloc (1, too_large);
  CHECK (big != NULL);
  CHECK_STATUS (tbq_writer_write (f.w, 0, big, too_large), TBQ_TOO_LARGE);
  free (big);
  for (i = 0; i < 4 * PER_BLOCK; i++)
    CHECK_OK (write_seq (f.w, 0, i));
  tbq_writer_set_backpressure (f.w, TBQ_BACKPRESSURE_DROP, -1);
  CHECK_STATUS (write_seq (f.w, 0, 0), TBQ_DROPPED);
  CHECK_STATUS (write_seq (f.w, 0, 0), TBQ_DROPPED);
  tbq_writer_set_backpressure (f.w, TBQ_BACKPRESSURE_BLOCK, 1 * MS_NS);
  CHECK_STATUS (write_seq (f.w, 0, 0), TBQ_TIMEOUT);
  tbq_queue_interrupt (f.q);
  tbq_writer_set_backpressure (f.w, TBQ_BACKPRESSURE_BLOCK, -1);
  CHECK_STATUS (write_seq (f.w, 0, 0), TBQ_INTERRUPTED);
  st = stats_of (f.q);
  CHECK_EQ (st.records_dropped, 5);
  CHECK_EQ (st.records_in, 4 * PER_BLOCK);
  /* Only the two BLOCK attempts waited. */
  CHECK_EQ (st.pressure_waits, 2);
  fixture_close (&f);
}

static void
stats_count_handoffs (void)
{
  Fixture f;
  TbqSession s;
  uint64_t i;

  fixture_open (&f);
  for (i = 0; i < 3 * PER_BLOCK; i++)
    CHECK_OK (write_seq (f.w, 0, i));
  /* Three blocks filled, the third one is still current. */
  CHECK_EQ (stats_of (f.q).handoffs, 2);
  CHECK_OK (write_seq (f.w, 0, i));
  CHECK_EQ (stats_of (f.q).handoffs, 3);
  copier_step_or_fail (f.q);
  tbq_session_begin (f.w, &s);
  CHECK_OK (tbq_session_next_block (&s));
  tbq_session_end (&s);
  CHECK_EQ (stats_of (f.q).handoffs, 4);
  /* A flush publishes but hands nothing off. */
  tbq_writer_flush (f.w);
  CHECK_EQ (stats_of (f.q).handoffs, 4);
  fixture_close (&f);
}

typedef struct
{
  TbqQueue *q;
} CopierThread;

static void *
copier_main (void *arg)
{
  CopierThread *c = arg;

  tbq_copier_run (c->q);
  return NULL;
}

static void
stats_count_copier_passes_and_wakeups (void)
{
  TbqConfig cfg;
  Fixture f;
  CopierThread c;
  pthread_t th;
  TbqStats st;
  uint64_t i, rounds = 5;

  small_config (&cfg, BLOCK);
  cfg.spin_iterations = 0;
  fixture_open_cfg (&f, &cfg);
  /* Steps in the caller's thread never sleep here: passes, no wake-ups. */
  CHECK_OK (write_seq (f.w, 0, 0));
  copier_step_or_fail (f.q);
  copier_step_or_fail (f.q);
  st = stats_of (f.q);
  CHECK_EQ (st.copier_passes, 1);
  CHECK_EQ (st.copier_wakeups, 0);
  expect_seq (f.r, 0);

  /* A sleeping copier is woken once per record written. */
  c.q = f.q;
  CHECK (pthread_create (&th, NULL, copier_main, &c) == 0);
  for (i = 1; i <= rounds; i++) {
    WAIT_UNTIL (stats_of (f.q).copier_sleeps >= i);
    CHECK_OK (write_seq (f.w, 0, i));
    expect_seq (f.r, i);
  }
  WAIT_UNTIL (stats_of (f.q).copier_sleeps >= rounds + 1);
  st = stats_of (f.q);
  CHECK_EQ (st.copier_wakeups, rounds);
  CHECK_EQ (st.copier_passes, 1 + rounds);
  /* Each of those wake-ups was a system call of the writer's. */
  CHECK_EQ (st.writer_wakeups, rounds);
  tbq_queue_interrupt (f.q);
  pthread_join (th, NULL);
  fixture_close (&f);
}

static void
stats_count_pressure_waits_per_layer (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqStats st;
  uint64_t i, seq = 0;
  const uint32_t full = BLOCK - TBQ_BLOCK_HEADER_SIZE - TBQ_RECORD_HEADER_SIZE;

  small_config (&cfg, BLOCK);
  cfg.sink.min_blocks = 2;
  cfg.sink.max_blocks = 2;
  cfg.block_timeout_ns = 1 * MS_NS;
  fixture_open_cfg (&f, &cfg);
  CHECK_OK (tbq_queue_start (f.q));
  /* Full-block records, nobody reads: the copier waits for sink space,
   * then the writer for source space. */
  for (i = 0; i < 10 || stats_of (f.q).sink_pressure_waits == 0; i++) {
    void *p;

    CHECK (i < 100000);
    if (tbq_writer_reserve (f.w, 0, full, &p) != TBQ_OK)
      continue;
    fill_payload (p, full, seq++);
    tbq_writer_commit (f.w);
  }
  st = stats_of (f.q);
  CHECK_EQ (st.sink_pressure_waits, 1);
  CHECK_EQ (st.records_in + st.records_dropped, i);
  /* Every timed-out record waited; some waits may have succeeded. */
  CHECK (st.records_dropped >= 1);
  CHECK (st.pressure_waits >= st.records_dropped);
  CHECK_EQ (st.sink.blocks_total, 2);
  fixture_close (&f);
}

static void
stats_report_blocks_in_use_and_peak_per_layer (void)
{
  Fixture f;
  TbqStats st;
  TbqRecord rec;
  static unsigned char buf[BLOCK];
  /* Four inline records fill a block exactly. */
  const uint32_t inl = (BLOCK - TBQ_BLOCK_HEADER_SIZE) / 4
      - TBQ_RECORD_HEADER_SIZE;
  uint64_t i;

  fixture_open (&f);
  CHECK (inl <= tbq_queue_max_inline_size (f.q));
  st = stats_of (f.q);
  CHECK_EQ (st.source.blocks_in_use, 1);
  CHECK_EQ (st.source.blocks_peak, 1);
  CHECK_EQ (st.sink.blocks_in_use, 1);
  for (i = 0; i < 3 * 4; i++)
    CHECK_OK (tbq_writer_write (f.w, 0, buf, inl));
  st = stats_of (f.q);
  CHECK_EQ (st.source.blocks_in_use, 3);
  CHECK_EQ (st.source.blocks_idle, 1);
  CHECK_EQ (st.source.blocks_peak, 3);
  CHECK_EQ (st.source.blocks_total, 4);
  copier_step_or_fail (f.q);
  st = stats_of (f.q);
  /* Source blocks went back; the backlog now lives in the sink layer. */
  CHECK_EQ (st.source.blocks_in_use, 1);
  CHECK_EQ (st.source.blocks_peak, 3);
  CHECK_EQ (st.sink.blocks_in_use, 3);
  CHECK_EQ (st.sink.blocks_peak, 3);
  while (tbq_reader_next (f.r, &rec) == TBQ_OK) {
  }
  st = stats_of (f.q);
  CHECK_EQ (st.sink.blocks_in_use, 1);
  CHECK_EQ (st.sink.blocks_peak, 3);
  CHECK_EQ (st.sink.blocks_total, st.sink.blocks_in_use + st.sink.blocks_idle);
  CHECK_EQ (st.source.blocks_total,
      st.source.blocks_in_use + st.source.blocks_idle);
  fixture_close (&f);
}

static void
stats_count_open_writers (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w1, *w2;
  TbqStats st;

  tbq_config_init (&cfg);
  q = queue_new_or_fail (&cfg);
  CHECK_EQ (stats_of (q).writers, 0);
  CHECK_OK (tbq_writer_new (q, &w1));
  CHECK_OK (tbq_writer_new (q, &w2));
  CHECK_EQ (stats_of (q).writers, 2);
  CHECK_OK (write_seq (w1, 0, 1));
  tbq_writer_close (w1);
  /* Closed writers are freed by the copier once their records moved. */
  copier_step_or_fail (q);
  st = stats_of (q);
  CHECK_EQ (st.writers, 1);
  /* What the freed writer did still counts. */
  CHECK_EQ (st.records_in, 1);
  CHECK_EQ (st.source.allocations, 2 * cfg.source.min_blocks);
  CHECK_EQ (st.source.blocks_total, cfg.source.min_blocks);
  tbq_queue_free (q, NULL, NULL);
}

TAP_MAIN (TAP_TEST (stats_count_records_and_bytes_in_and_out),
    TAP_TEST (stats_count_every_refused_record_as_dropped),
    TAP_TEST (stats_count_handoffs),
    TAP_TEST (stats_count_copier_passes_and_wakeups),
    TAP_TEST (stats_count_pressure_waits_per_layer),
    TAP_TEST (stats_report_blocks_in_use_and_peak_per_layer),
    TAP_TEST (stats_count_open_writers))
