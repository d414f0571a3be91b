/* Pools: pre-allocation, growth on demand up to max_blocks, LIFO reuse, and
 * release of surplus idle blocks by the copier.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "lib-test.h"

/* PER_BLOCK of the largest inline records fill a block of `block` bytes
 * (larger records travel out of line): a "full record" below is that
 * many records, seq * PER_BLOCK and on. */
#define PER_BLOCK 4
#define FULL_RECORD(block) ((uint32_t) (((block) - TBQ_BLOCK_HEADER_SIZE) \
      / PER_BLOCK - TBQ_RECORD_HEADER_SIZE))

/* The source block a reserved record lives in: a record written first in a
 * block starts right after the block header. */
static uintptr_t
block_of_first_record (const void *data)
{
  return (uintptr_t) data - TBQ_BLOCK_HEADER_SIZE - TBQ_RECORD_HEADER_SIZE;
}

/* Write a full record; `where`: the first record's payload. */
static void
write_full_record (TbqWriter * w, uint32_t size, uint64_t seq, void **where)
{
  void *p = write_records (w, 1, size, seq * PER_BLOCK, PER_BLOCK);

  if (where)
    *where = p;
}

/* Read a full record; `out`: its first record. */
static void
read_full_record (TbqReader * r, uint32_t size, uint64_t seq, TbqRecord * out)
{
  read_records (r, size, seq * PER_BLOCK, PER_BLOCK, out);
}

static void
pools_preallocate_min_blocks (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w1, *w2;
  TbqStats st;

  tbq_config_init (&cfg);
  cfg.source.min_blocks = 3;
  cfg.source.max_blocks = 8;
  cfg.sink.min_blocks = 5;
  q = queue_new_or_fail (&cfg);
  st = stats_of (q);
  CHECK_EQ (st.sink.blocks_total, 5);
  CHECK_EQ (st.sink.allocations, 5);
  /* The copier's first sink block is taken up front. */
  CHECK_EQ (st.sink.blocks_in_use, 1);
  CHECK_EQ (st.sink.blocks_idle, 4);
  CHECK_EQ (st.sink.block_size, cfg.sink.block_size);
  CHECK_EQ (st.source.blocks_total, 0);

  CHECK_OK (tbq_writer_new (q, &w1));
  st = stats_of (q);
  CHECK_EQ (st.source.blocks_total, 3);
  CHECK_EQ (st.source.allocations, 3);
  CHECK_EQ (st.source.blocks_in_use, 1);
  CHECK_EQ (st.source.blocks_idle, 2);
  CHECK_EQ (st.source.block_size, cfg.source.block_size);

  /* Each writer has a source pool of its own. */
  CHECK_OK (tbq_writer_new (q, &w2));
  st = stats_of (q);
  CHECK_EQ (st.source.blocks_total, 6);
  CHECK_EQ (st.source.blocks_in_use, 2);
  tbq_queue_free (q, NULL, NULL);
}

static void
pool_without_preallocation_allocates_on_first_use (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqStats st;

  tbq_config_init (&cfg);
  cfg.source.min_blocks = 0;
  cfg.sink.min_blocks = 0;
  q = queue_new_or_fail (&cfg);
  st = stats_of (q);
  CHECK_EQ (st.sink.blocks_total, 1);
  CHECK_OK (tbq_writer_new (q, &w));
  st = stats_of (q);
  CHECK_EQ (st.source.blocks_total, 1);
  CHECK_EQ (st.source.allocations, 1);
  tbq_queue_free (q, NULL, NULL);
}

static void
source_pool_grows_on_demand_up_to_max_blocks (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqStats st;
  uint64_t i, accepted = 0;
  /* 256-byte blocks hold 192 data bytes: twelve 8-byte records. */
  const uint64_t per_block = (256 - TBQ_BLOCK_HEADER_SIZE)
      / TBQ_RECORD_SPAN (8);

  small_config (&cfg, 256);
  cfg.source.min_blocks = 1;
  cfg.source.max_blocks = 4;
  cfg.source.max_idle_blocks = 4;
  cfg.backpressure = TBQ_BACKPRESSURE_DROP;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  /* No copier: nothing is ever returned, so the pool must grow. */
  for (i = 0; i < 100; i++) {
    TbqStatus s = write_seq (w, 0, i);

    st = stats_of (q);
    if (s == TBQ_DROPPED)
      break;
    CHECK_OK (s);
    accepted++;
    CHECK_EQ (st.source.blocks_total, i / per_block + 1);
  }
  CHECK_EQ (accepted, 4 * per_block);
  CHECK_EQ (st.source.blocks_total, 4);
  CHECK_EQ (st.source.allocations, 4);
  CHECK_EQ (st.source.blocks_peak, 4);
  /* Still capped when asked again. */
  CHECK_STATUS (write_seq (w, 0, 999), TBQ_DROPPED);
  CHECK_EQ (stats_of (q).source.blocks_total, 4);

  copier_step_or_fail (q);
  for (i = 0; i < accepted; i++)
    expect_seq (r, i);
  tbq_queue_free (q, NULL, NULL);
}

static void
sink_pool_grows_on_demand_up_to_max_blocks (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqStats st;
  const uint32_t size = FULL_RECORD (256);
  uint64_t i, written = 0;
  TbqStatus s;

  small_config (&cfg, 256);
  cfg.source.max_blocks = 4;
  cfg.sink.min_blocks = 1;
  cfg.sink.max_blocks = 5;
  cfg.block_timeout_ns = 100 * MS_NS;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));

  /* One full record fills one sink block: the pool grows by one per full
   * record (`written` counts single records). */
  for (i = 0; i < 5; i++) {
    write_full_record (w, size, i, NULL);
    written += PER_BLOCK;
    copier_step_or_fail (q);
    st = stats_of (q);
    CHECK_EQ (st.sink.blocks_total, i + 1);
    CHECK_EQ (st.sink.blocks_in_use, i + 1);
  }
  /* From here the copier stalls on sink pressure, so run it on its own
   * thread; the writer eventually times out on a full source pool. */
  CHECK_OK (tbq_queue_start (q));
  for (;;) {
    void *p;

    s = tbq_writer_reserve (w, 1, size, &p);
    if (s != TBQ_OK)
      break;
    fill_payload (p, size, written++);
    tbq_writer_commit (w);
    CHECK (written < 100);
  }
  CHECK_STATUS (s, TBQ_TIMEOUT);
  WAIT_UNTIL (stats_of (q).sink_pressure_waits > 0);
  st = stats_of (q);
  CHECK_EQ (st.sink.blocks_total, 5);
  CHECK_EQ (st.sink.blocks_peak, 5);
  CHECK_EQ (st.sink.allocations, 5);

  for (i = 0; i < written; i++) {
    TbqRecord rec;

    CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
    CHECK (payload_mismatch (rec.data, rec.size, i) < 0);
  }
  CHECK (stats_of (q).sink.blocks_peak <= 5);
  tbq_queue_free (q, NULL, NULL);
}

static void
source_pool_reuses_the_most_recently_returned_block_first (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  const uint32_t size = FULL_RECORD (256);
  void *p[5];
  uint64_t i;

  small_config (&cfg, 256);
  cfg.source.min_blocks = 4;
  cfg.source.max_blocks = 4;
  cfg.source.max_idle_blocks = 4;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));

  /* One record per block: blocks b0, b1, b2 (b2 stays current). */
  for (i = 0; i < 3; i++)
    write_full_record (w, size, i, &p[i]);
  CHECK (block_of_first_record (p[0]) != block_of_first_record (p[1]));
  CHECK (block_of_first_record (p[1]) != block_of_first_record (p[2]));
  /* The copier returns b0, then b1: b1 is the most recently returned. */
  copier_step_or_fail (q);
  CHECK_EQ (stats_of (q).source.blocks_idle, 3);
  write_full_record (w, size, 3, &p[3]);
  CHECK_EQ (block_of_first_record (p[3]), block_of_first_record (p[1]));
  /* Then b0, although the fourth block was never used. */
  write_full_record (w, size, 4, &p[4]);
  CHECK_EQ (block_of_first_record (p[4]), block_of_first_record (p[0]));

  copier_step_or_fail (q);
  for (i = 0; i < 5; i++)
    read_full_record (r, size, i, NULL);
  tbq_queue_free (q, NULL, NULL);
}

static void
sink_pool_reuses_the_most_recently_returned_block_first (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  const uint32_t size = FULL_RECORD (256);
  TbqBlock *seen[4];
  size_t n_seen = 0, k;
  uint64_t i;

  small_config (&cfg, 256);
  cfg.sink.min_blocks = 4;
  cfg.sink.max_blocks = 8;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));

  /* Write, copy, read one full-block record at a time: the reader returns
   * the block it leaves, and the copier's next block must be that one, so
   * two blocks take turns and the other two never leave the pool. */
  for (i = 0; i < 20; i++) {
    TbqRecord rec;

    write_full_record (w, size, i, NULL);
    copier_step_or_fail (q);
    read_full_record (r, size, i, &rec);
    for (k = 0; k < n_seen; k++)
      if (seen[k] == rec.block)
        break;
    if (k == n_seen) {
      CHECK (n_seen < 4);
      seen[n_seen++] = rec.block;
    }
  }
  CHECK_EQ (n_seen, 2);
  CHECK_EQ (stats_of (q).sink.allocations, 4);
  CHECK_EQ (stats_of (q).sink.blocks_peak, 2);
  tbq_queue_free (q, NULL, NULL);
}

static void
idle_source_blocks_above_max_idle_are_released_by_the_copier (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqStats st;
  const uint32_t size = FULL_RECORD (4096);
  uint64_t i, n = 0;

  tbq_config_init (&cfg);
  cfg.source.min_blocks = 1;
  cfg.source.max_blocks = 8;
  cfg.source.max_idle_blocks = 1;
  cfg.backpressure = TBQ_BACKPRESSURE_DROP;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  for (;;) {
    void *p;
    TbqStatus s = tbq_writer_reserve (w, 1, size, &p);

    if (s == TBQ_DROPPED)
      break;
    CHECK_OK (s);
    fill_payload (p, size, n++);
    tbq_writer_commit (w);
  }
  CHECK_EQ (n, 8 * PER_BLOCK);
  st = stats_of (q);
  CHECK_EQ (st.source.blocks_total, 8);
  /* The producer grew the pool but never gives memory back. */
  CHECK_EQ (st.source.releases, 0);

  /* The copier returns the seven sealed blocks: one stays idle, six go. */
  copier_step_or_fail (q);
  st = stats_of (q);
  CHECK_EQ (st.source.releases, 6);
  CHECK_EQ (st.source.blocks_total, 2);
  CHECK_EQ (st.source.blocks_in_use, 1);
  CHECK_EQ (st.source.blocks_idle, 1);
  for (i = 0; i < n / PER_BLOCK; i++)
    read_full_record (r, size, i, NULL);
  tbq_queue_free (q, NULL, NULL);
}

static void
idle_sink_blocks_are_released_by_the_copier_not_the_reader (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqStats st;
  const uint32_t size = FULL_RECORD (4096);
  uint64_t i, n = 20;

  tbq_config_init (&cfg);
  cfg.sink.block_size = 4096;
  cfg.sink.min_blocks = 1;
  cfg.sink.max_idle_blocks = 2;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  for (i = 0; i < n; i++) {
    write_full_record (w, size, i, NULL);
    copier_step_or_fail (q);
  }
  CHECK_EQ (stats_of (q).sink.blocks_total, n);
  for (i = 0; i < n; i++)
    read_full_record (r, size, i, NULL);
  st = stats_of (q);
  /* The reader only gives blocks back to the pool. */
  CHECK_EQ (st.sink.releases, 0);
  CHECK_EQ (st.sink.blocks_idle, n - 1);
  /* An idle copier pass trims down to max_idle_blocks idle blocks. */
  CHECK_STATUS (tbq_copier_step (q, 0), TBQ_TIMEOUT);
  st = stats_of (q);
  CHECK_EQ (st.sink.releases, n - 1 - 2);
  CHECK_EQ (st.sink.blocks_idle, 2);
  CHECK_EQ (st.sink.blocks_total, 3);
  CHECK_EQ (st.sink.blocks_peak, n);
  tbq_queue_free (q, NULL, NULL);
}

/* A running queue with 4 KiB sink blocks (2 up front, 2 idle kept, up to
 * 128) holding a backlog of `n` published full records of `size` bytes,
 * one per sink block. */
static TbqQueue *
backlog_queue_new (uint64_t n, uint32_t size, TbqWriter ** w, TbqReader ** r)
{
  TbqConfig cfg;
  TbqQueue *q;
  uint64_t i;

  tbq_config_init (&cfg);
  cfg.sink.block_size = 4096;
  cfg.sink.min_blocks = 2;
  cfg.sink.max_blocks = 128;
  cfg.sink.max_idle_blocks = 2;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, w));
  CHECK_OK (tbq_reader_new (q, r));
  CHECK_OK (tbq_queue_start (q));
  for (i = 0; i < n; i++)
    write_full_record (*w, size, i, NULL);
  tbq_writer_flush (*w);
  return q;
}

static void
sink_pool_shrinks_back_after_a_backlog_drains (void)
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqStats st;
  const uint32_t size = FULL_RECORD (4096);
  uint64_t i, n = 60;

  q = backlog_queue_new (n, size, &w, &r);
  /* The backlog sits in the sink layer, one block per record. */
  WAIT_UNTIL (stats_of (q).sink.blocks_total == n);
  for (i = 0; i < n; i++)
    read_full_record (r, size, i, NULL);
  /* Nothing is written any more: the idle copier must notice the returned
   * blocks on its own and release all but max_idle_blocks of them (the
   * reader still holds the current block). */
  WAIT_UNTIL (stats_of (q).sink.blocks_total <= 1 + 2);
  st = stats_of (q);
  CHECK (st.sink.releases >= n - 3);
  CHECK_EQ (st.sink.blocks_peak, n);
  CHECK_EQ (stats_of (q).source.releases, 0);
  tbq_queue_free (q, NULL, NULL);
}

static void
sink_pool_shrinks_back_when_zero_copy_holders_let_go (void)
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord held[40];
  const uint32_t size = FULL_RECORD (4096);
  uint64_t i, n = 40;

  q = backlog_queue_new (n, size, &w, &r);
  /* Read everything, keeping a reference to every block. */
  for (i = 0; i < n; i++) {
    read_full_record (r, size, i, &held[i]);
    tbq_block_ref (held[i].block);
  }
  WAIT_UNTIL (stats_of (q).copier_passes > 0 && stats_of (q).bytes_copied
      == n * PER_BLOCK * TBQ_RECORD_SPAN (size));
  CHECK_EQ (stats_of (q).sink.blocks_total, n);
  /* The reader is done; the holders let go long after.  The idle copier
   * must still hear of the surplus and release it. */
  for (i = 0; i < n; i++)
    tbq_block_unref (held[i].block);
  WAIT_UNTIL (stats_of (q).sink.blocks_total <= 1 + 2);
  tbq_queue_free (q, NULL, NULL);
}

TAP_MAIN (TAP_TEST (pools_preallocate_min_blocks),
    TAP_TEST (pool_without_preallocation_allocates_on_first_use),
    TAP_TEST (source_pool_grows_on_demand_up_to_max_blocks),
    TAP_TEST (sink_pool_grows_on_demand_up_to_max_blocks),
    TAP_TEST (source_pool_reuses_the_most_recently_returned_block_first),
    TAP_TEST (sink_pool_reuses_the_most_recently_returned_block_first),
    TAP_TEST (idle_source_blocks_above_max_idle_are_released_by_the_copier),
    TAP_TEST (idle_sink_blocks_are_released_by_the_copier_not_the_reader),
    TAP_TEST (sink_pool_shrinks_back_after_a_backlog_drains),
    TAP_TEST (sink_pool_shrinks_back_when_zero_copy_holders_let_go))
