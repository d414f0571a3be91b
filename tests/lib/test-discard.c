/* Discard: tbq_queue_discard() and tbq_queue_free() hand every queued record
 * to the release callback exactly once, oldest first, wherever it is.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "lib-test.h"

#define BLOCK 256
#define PER_BLOCK ((BLOCK - TBQ_BLOCK_HEADER_SIZE) / TBQ_RECORD_SPAN (8))

/* What the release callback saw. */
typedef struct
{
  uint64_t seqs[4096];
  size_t n;
  bool bad;
} Released;

static void
release_cb (uint16_t type, const void *data, uint32_t size, void *user_data)
{
  Released *rel = user_data;
  uint64_t seq;

  if (size != 8 || rel->n == sizeof rel->seqs / sizeof rel->seqs[0]) {
    rel->bad = true;
    return;
  }
  memcpy (&seq, data, 8);
  /* The type tag carries the low bits of the sequence number. */
  if (type != (uint16_t) seq)
    rel->bad = true;
  rel->seqs[rel->n++] = seq;
}

/* rel saw exactly first..last, in order. */
static void
expect_released (const Released * rel, uint64_t first, uint64_t last)
{
  size_t i;

  CHECK (!rel->bad);
  CHECK_EQ (rel->n, last - first + 1);
  for (i = 0; i < rel->n; i++)
    CHECK_EQ (rel->seqs[i], first + i);
}

static TbqStatus
write_rec (TbqWriter * w, uint64_t seq)
{
  return write_seq (w, (uint16_t) seq, seq);
}

typedef struct
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  uint64_t written;             /* records 0..written-1 were accepted */
  uint64_t read;                /* records 0..read-1 were taken */
} Scene;

/* Queue records in every place a record can be:
 *   - in the sink layer, after a few were read;
 *   - in flight: a source block the copier has partly moved when the sink
 *     pool ran out (the copier waits for sink space, then is stopped);
 *   - published in the writer's current block, not yet moved;
 *   - written but not yet published (publish-at-hand-off). */
static void
scene_build (Scene * s)
{
  TbqConfig cfg;
  uint64_t i;

  small_config (&cfg, BLOCK);
  cfg.source.min_blocks = 4;
  cfg.source.max_blocks = 4;
  cfg.sink.min_blocks = 2;
  cfg.sink.max_blocks = 2;
  s->q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (s->q, &s->w));
  CHECK_OK (tbq_reader_new (s->q, &s->r));
  CHECK_OK (tbq_queue_start (s->q));
  for (s->written = 0; s->written < 3 * PER_BLOCK + 4; s->written++)
    CHECK_OK (write_rec (s->w, s->written));
  /* Two sink blocks hold two source blocks' worth; the copier waits. */
  WAIT_UNTIL (stats_of (s->q).sink_pressure_waits > 0);
  for (s->read = 0; s->read < 5; s->read++)
    expect_seq (s->r, s->read);
  tbq_writer_set_publish (s->w, TBQ_PUBLISH_AT_HANDOFF, 0);
  for (i = 0; i < 3; i++, s->written++)
    CHECK_OK (write_rec (s->w, s->written));
  /* tbq_queue_discard() needs every party quiet. */
  tbq_queue_stop (s->q);
}

static void
discard_releases_every_queued_record_once_oldest_first (void)
{
  Scene s;
  Released rel = { 0 };
  TbqStats st;

  scene_build (&s);
  tbq_queue_discard (s.q, release_cb, &rel);
  expect_released (&rel, s.read, s.written - 1);
  st = stats_of (s.q);
  CHECK_EQ (st.records_discarded, s.written - s.read);
  CHECK_EQ (st.records_in, st.records_out + st.records_discarded);
  /* Nothing is left to discard or to read. */
  rel.n = 0;
  tbq_queue_discard (s.q, release_cb, &rel);
  CHECK_EQ (rel.n, 0);
  CHECK_EQ (stats_of (s.q).records_discarded, s.written - s.read);
  tbq_queue_free (s.q, release_cb, &rel);
  CHECK_EQ (rel.n, 0);
}

static void
writer_and_reader_keep_working_after_discard (void)
{
  Scene s;
  Released rel = { 0 };
  TbqRecord rec;
  uint64_t i;

  scene_build (&s);
  tbq_queue_discard (s.q, release_cb, &rel);
  CHECK_STATUS (tbq_reader_next (s.r, &rec), TBQ_EMPTY);
  tbq_writer_set_publish (s.w, TBQ_PUBLISH_EVERY_RECORD, 0);
  CHECK_OK (tbq_queue_start (s.q));
  /* Enough to cycle every source and sink block a few times. */
  for (i = 1000; i < 1000 + 20 * PER_BLOCK; i++) {
    CHECK_OK (write_rec (s.w, i));
    expect_seq (s.r, i);
  }
  CHECK_STATUS (tbq_reader_next (s.r, &rec), TBQ_EMPTY);
  tbq_queue_free (s.q, release_cb, &rel);
  expect_released (&rel, s.read, s.written - 1);
}

static void
discard_without_release_callback_still_counts (void)
{
  Scene s;

  scene_build (&s);
  tbq_queue_discard (s.q, NULL, NULL);
  CHECK_EQ (stats_of (s.q).records_discarded, s.written - s.read);
  tbq_queue_free (s.q, NULL, NULL);
}

static void
queue_free_releases_everything_still_queued (void)
{
  Scene s;
  Released rel = { 0 };

  scene_build (&s);
  /* Free with the copier thread running again: it is stopped first. */
  CHECK_OK (tbq_queue_start (s.q));
  tbq_queue_free (s.q, release_cb, &rel);
  expect_released (&rel, s.read, s.written - 1);
}

static void
discard_covers_closed_writers_and_frees_them (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w1, *w2;
  Released rel = { 0 };
  uint64_t i;

  small_config (&cfg, BLOCK);
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w1));
  CHECK_OK (tbq_writer_new (q, &w2));
  for (i = 0; i < 5; i++)
    CHECK_OK (write_rec (w1, i));
  /* Closed, but no copier has moved its records yet. */
  tbq_writer_close (w1);
  CHECK_EQ (stats_of (q).writers, 2);
  for (i = 5; i < 8; i++)
    CHECK_OK (write_rec (w2, i));
  tbq_queue_discard (q, release_cb, &rel);
  /* Per writer in order; writers in registration order. */
  expect_released (&rel, 0, 7);
  CHECK_EQ (stats_of (q).writers, 1);
  CHECK_EQ (stats_of (q).records_discarded, 8);
  /* The closed writer's counters survive it. */
  CHECK_EQ (stats_of (q).records_in, 8);
  tbq_queue_free (q, NULL, NULL);
}

/* The scene leaves sealed source blocks in flight; once discarded, they
 * are back in the pool and the copier has nothing to wait for: a step
 * with a timeout times out instead of finding phantom work (and a copier
 * running steps in a loop would spin). */
static void
copier_finds_no_work_after_discarding_sealed_blocks (void)
{
  Scene s;
  TbqStatus st;
  uint64_t wakeups;
  int i;

  scene_build (&s);
  CHECK (stats_of (s.q).handoffs > 0);
  tbq_queue_discard (s.q, NULL, NULL);
  wakeups = stats_of (s.q).copier_wakeups;
  /* A step moves nothing and waits 1 ms; no other step runs, so a wait
   * that ends early means the copier saw work that is not there. */
  for (i = 0; i < 3; i++) {
    st = tbq_copier_step (s.q, 1000000);
    CHECK_STATUS (st, TBQ_TIMEOUT);
  }
  CHECK_EQ (stats_of (s.q).copier_wakeups, wakeups);
  tbq_queue_free (s.q, NULL, NULL);
}

static void
discarding_an_empty_queue_releases_nothing (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  Released rel = { 0 };

  tbq_config_init (&cfg);
  q = queue_new_or_fail (&cfg);
  tbq_queue_discard (q, release_cb, &rel);
  CHECK_OK (tbq_writer_new (q, &w));
  tbq_queue_discard (q, release_cb, &rel);
  CHECK_EQ (rel.n, 0);
  CHECK_EQ (stats_of (q).records_discarded, 0);
  tbq_queue_free (q, release_cb, &rel);
  CHECK_EQ (rel.n, 0);
}

TAP_MAIN (TAP_TEST (discard_releases_every_queued_record_once_oldest_first),
    TAP_TEST (writer_and_reader_keep_working_after_discard),
    TAP_TEST (discard_without_release_callback_still_counts),
    TAP_TEST (queue_free_releases_everything_still_queued),
    TAP_TEST (discard_covers_closed_writers_and_frees_them),
    TAP_TEST (copier_finds_no_work_after_discarding_sealed_blocks),
    TAP_TEST (discarding_an_empty_queue_releases_nothing))
