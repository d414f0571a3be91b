/* Writer: how records are built, laid out and refused.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The copier runs in the test's own thread (tbq_copier_step) so every test
 * here is deterministic.
 */
#include "lib-test.h"

static void
fixture_open (Fixture * f, const TbqConfig * cfg)
{
  f->q = queue_new_or_fail (cfg);
  CHECK_OK (tbq_writer_new (f->q, &f->w));
  CHECK_OK (tbq_reader_new (f->q, &f->r));
}

static void
fixture_open_default (Fixture * f)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  fixture_open (f, &cfg);
}

static void
fixture_close (Fixture * f)
{
  tbq_queue_free (f->q, NULL, NULL);
}

/* Move everything and take the next record. */
static void
next_record (Fixture * f, TbqRecord * rec)
{
  copier_step_or_fail (f->q);
  CHECK_OK (tbq_reader_next (f->r, rec));
}

static void
write_copies_the_record (void)
{
  Fixture f;
  TbqRecord rec;
  char buf[32] = "hello, two-layer queue";

  fixture_open_default (&f);
  CHECK_OK (tbq_writer_write (f.w, 42, buf, sizeof buf));
  /* The caller's buffer is free for reuse as soon as write returns. */
  memset (buf, 'x', sizeof buf);
  next_record (&f, &rec);
  CHECK_EQ (rec.type, 42);
  CHECK_EQ (rec.size, sizeof buf);
  CHECK (strcmp (rec.data, "hello, two-layer queue") == 0);
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  fixture_close (&f);
}

static void
reserve_and_commit_build_a_record_in_place (void)
{
  Fixture f;
  TbqRecord rec;
  void *p;

  fixture_open_default (&f);
  CHECK_OK (tbq_writer_reserve (f.w, 9, 100, &p));
  CHECK (p != NULL);
  fill_payload (p, 100, 1234);
  tbq_writer_commit (f.w);
  next_record (&f, &rec);
  CHECK_EQ (rec.type, 9);
  CHECK_EQ (rec.size, 100);
  CHECK (payload_mismatch (rec.data, rec.size, 1234) < 0);
  fixture_close (&f);
}

static void
reserved_record_is_not_delivered_before_commit (void)
{
  Fixture f;
  TbqRecord rec;
  void *p;

  fixture_open_default (&f);
  CHECK_OK (tbq_writer_reserve (f.w, 1, 8, &p));
  memset (p, 0, 8);
  tbq_writer_flush (f.w);
  copier_step_or_fail (f.q);
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  tbq_writer_commit (f.w);
  next_record (&f, &rec);
  CHECK_EQ (rec.size, 8);
  fixture_close (&f);
}

static void
cancel_discards_the_reserved_record (void)
{
  Fixture f;
  TbqRecord rec;
  void *p;

  fixture_open_default (&f);
  CHECK_OK (write_seq (f.w, 1, 1));
  CHECK_OK (tbq_writer_reserve (f.w, 1, 8, &p));
  memcpy (p, "canceled", 8);
  tbq_writer_cancel (f.w);
  CHECK_OK (write_seq (f.w, 1, 2));
  copier_step_or_fail (f.q);
  CHECK_OK (tbq_reader_next (f.r, &rec));
  CHECK_EQ (record_seq (&rec), 1);
  CHECK_OK (tbq_reader_next (f.r, &rec));
  CHECK_EQ (record_seq (&rec), 2);
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  CHECK_EQ (stats_of (f.q).records_in, 2);
  fixture_close (&f);
}

static void
records_are_8_byte_aligned (void)
{
  Fixture f;
  TbqRecord rec;
  uint32_t size;

  fixture_open_default (&f);
  for (size = 0; size < 100; size++) {
    void *p;

    CHECK_OK (tbq_writer_reserve (f.w, 0, size, &p));
    CHECK_EQ ((uintptr_t) p % TBQ_RECORD_ALIGN, 0);
    fill_payload (p, size, size);
    tbq_writer_commit (f.w);
  }
  copier_step_or_fail (f.q);
  for (size = 0; size < 100; size++) {
    CHECK_OK (tbq_reader_next (f.r, &rec));
    CHECK_EQ ((uintptr_t) rec.data % 8, 0);
    CHECK_EQ (rec.size, size);
  }
  fixture_close (&f);
}

static void
records_carry_size_and_type (void)
{
  Fixture f;
  TbqRecord rec;
  static const uint16_t types[] = { 0, 1, 7, 0x1234, 0xfffe, 0xffff };
  size_t i;

  fixture_open_default (&f);
  for (i = 0; i < sizeof types / sizeof types[0]; i++) {
    unsigned char buf[64];
    uint32_t size = (uint32_t) (i * 11);

    fill_payload (buf, size, i);
    CHECK_OK (tbq_writer_write (f.w, types[i], buf, size));
  }
  copier_step_or_fail (f.q);
  for (i = 0; i < sizeof types / sizeof types[0]; i++) {
    CHECK_OK (tbq_reader_next (f.r, &rec));
    CHECK_EQ (rec.type, types[i]);
    CHECK_EQ (rec.size, i * 11);
    CHECK (payload_mismatch (rec.data, rec.size, i) < 0);
  }
  fixture_close (&f);
}

static void
records_never_straddle_blocks (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqRecord rec;
  unsigned char buf[256];
  uint64_t i, n = 2000;
  uint32_t max, inl;

  /* Small blocks and odd sizes: most records do not fit what is left of a
   * block, in the source layer and again in the sink layer. */
  small_config (&cfg, 320);
  cfg.source.max_blocks = 64;
  cfg.sink.block_size = 448;
  cfg.sink.max_blocks = 4096;
  fixture_open (&f, &cfg);
  max = tbq_queue_max_record_size (f.q);
  inl = tbq_queue_max_inline_size (f.q);
  for (i = 0; i < n; i++) {
    uint32_t size = (uint32_t) (mix64 (i) % (max + 1));

    fill_payload (buf, size, i);
    CHECK_OK (tbq_writer_write (f.w, 3, buf, size));
    if (i % 40 == 39)
      copier_step_or_fail (f.q);
  }
  copier_step_or_fail (f.q);
  for (i = 0; i < n; i++) {
    uintptr_t start, end;

    CHECK_OK (tbq_reader_next (f.r, &rec));
    CHECK_EQ (rec.size, mix64 (i) % (max + 1));
    CHECK (payload_mismatch (rec.data, rec.size, i) < 0);
    if (rec.size > inl) {
      /* Out of line: the payload follows its extent's header. */
      CHECK ((uintptr_t) rec.data == (uintptr_t) rec.block
          + TBQ_BLOCK_HEADER_SIZE);
      continue;
    }
    /* The whole record, header included, lies in its block's data area. */
    start = (uintptr_t) rec.block + TBQ_BLOCK_HEADER_SIZE;
    end = (uintptr_t) rec.block + cfg.sink.block_size;
    CHECK ((uintptr_t) rec.data - TBQ_RECORD_HEADER_SIZE >= start);
    CHECK ((uintptr_t) rec.data + rec.size <= end);
  }
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  fixture_close (&f);
}

static void
record_larger_than_any_extent_is_refused (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqRecord rec;
  TbqStats st;
  static unsigned char big[256 * 1024];
  uint32_t max;
  void *p = big;

  /* A budget of four 64 KiB sink blocks: extents up to two blocks. */
  tbq_config_init (&cfg);
  cfg.sink.max_blocks = 4;
  fixture_open (&f, &cfg);
  max = tbq_queue_max_extent_size (f.q);
  CHECK_EQ (max, 2 * 65536 - TBQ_BLOCK_HEADER_SIZE);
  CHECK (max + 1 <= sizeof big);
  CHECK_STATUS (tbq_writer_write (f.w, 1, big, max + 1), TBQ_TOO_LARGE);
  CHECK_STATUS (tbq_writer_reserve (f.w, 1, max + 1, &p), TBQ_TOO_LARGE);
  CHECK_STATUS (tbq_writer_reserve (f.w, 1, UINT32_MAX, &p), TBQ_TOO_LARGE);
  tbq_writer_flush (f.w);
  copier_step_or_fail (f.q);
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  st = stats_of (f.q);
  CHECK_EQ (st.records_in, 0);
  CHECK_EQ (st.bytes_in, 0);
  CHECK_EQ (st.records_dropped, 3);
  CHECK_EQ (st.handoffs, 0);
  /* The writer is still usable. */
  CHECK_OK (write_seq (f.w, 1, 5));
  next_record (&f, &rec);
  CHECK_EQ (record_seq (&rec), 5);
  fixture_close (&f);
}

static void
largest_inline_record_is_a_quarter_of_a_block (void)
{
  Fixture f;
  TbqRecord rec;
  static unsigned char buf[4096];
  uint32_t inl;
  int i;

  fixture_open_default (&f);
  inl = tbq_queue_max_inline_size (f.q);
  /* A quarter of the 4032 data bytes of a 4 KiB block, less a header. */
  CHECK_EQ (inl, 1000);
  fill_payload (buf, inl, 77);
  CHECK_OK (write_seq (f.w, 1, 1));
  /* Four fill a block exactly; behind the first record the fourth does
   * not fit, and takes a fresh block. */
  for (i = 0; i < 4; i++)
    CHECK_OK (tbq_writer_write (f.w, 2, buf, inl));
  copier_step_or_fail (f.q);
  CHECK_OK (tbq_reader_next (f.r, &rec));
  CHECK_EQ (record_seq (&rec), 1);
  for (i = 0; i < 4; i++) {
    CHECK_OK (tbq_reader_next (f.r, &rec));
    CHECK_EQ (rec.size, inl);
    CHECK (payload_mismatch (rec.data, rec.size, 77) < 0);
  }
  CHECK_EQ (stats_of (f.q).handoffs, 1);
  CHECK_EQ (stats_of (f.q).extents.allocations, 0);
  fixture_close (&f);
}

static void
largest_record_fits_a_sink_block_of_the_same_size (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqRecord rec;
  static unsigned char buf[512];
  uint32_t max;
  uint64_t i;

  /* Two sink blocks leave no room for an extent: records up to a block
   * travel inline, as before extents. */
  small_config (&cfg, 512);
  cfg.sink.max_blocks = 2;
  fixture_open (&f, &cfg);
  CHECK_EQ (tbq_queue_max_extent_size (f.q), 0);
  max = tbq_queue_max_record_size (f.q);
  for (i = 0; i < 5; i++) {
    fill_payload (buf, max, i);
    CHECK_OK (tbq_writer_write (f.w, 1, buf, max));
    copier_step_or_fail (f.q);
    CHECK_OK (tbq_reader_next (f.r, &rec));
    CHECK_EQ (rec.size, max);
    CHECK (payload_mismatch (rec.data, rec.size, i) < 0);
  }
  fixture_close (&f);
}

static void
zero_size_records_work (void)
{
  Fixture f;
  TbqRecord rec;
  TbqStats st;
  void *p;
  int i;

  fixture_open_default (&f);
  CHECK_OK (tbq_writer_write (f.w, 10, NULL, 0));
  CHECK_OK (tbq_writer_write (f.w, 11, "ignored", 0));
  CHECK_OK (tbq_writer_reserve (f.w, 12, 0, &p));
  tbq_writer_commit (f.w);
  copier_step_or_fail (f.q);
  for (i = 0; i < 3; i++) {
    CHECK_OK (tbq_reader_next (f.r, &rec));
    CHECK_EQ (rec.type, 10 + i);
    CHECK_EQ (rec.size, 0);
    CHECK (rec.data != NULL);
  }
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  st = stats_of (f.q);
  CHECK_EQ (st.records_in, 3);
  CHECK_EQ (st.bytes_in, 0);
  /* Each still takes a header's worth of block space. */
  CHECK_EQ (st.bytes_copied, 3 * TBQ_RECORD_SPAN (0));
  fixture_close (&f);
}

static void
writer_rejects_missing_arguments (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;

  tbq_config_init (&cfg);
  q = queue_new_or_fail (&cfg);
  CHECK_STATUS (tbq_writer_new (NULL, &w), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_writer_new (q, NULL), TBQ_INVALID_ARGUMENT);
  /* Closing nothing is harmless. */
  tbq_writer_close (NULL);
  tbq_queue_free (q, NULL, NULL);
}

TAP_MAIN (TAP_TEST (write_copies_the_record),
    TAP_TEST (reserve_and_commit_build_a_record_in_place),
    TAP_TEST (reserved_record_is_not_delivered_before_commit),
    TAP_TEST (cancel_discards_the_reserved_record),
    TAP_TEST (records_are_8_byte_aligned),
    TAP_TEST (records_carry_size_and_type),
    TAP_TEST (records_never_straddle_blocks),
    TAP_TEST (record_larger_than_any_extent_is_refused),
    TAP_TEST (largest_inline_record_is_a_quarter_of_a_block),
    TAP_TEST (largest_record_fits_a_sink_block_of_the_same_size),
    TAP_TEST (zero_size_records_work),
    TAP_TEST (writer_rejects_missing_arguments))
