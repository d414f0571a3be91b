/* Large records: out of line in extents taken from the sink pool's byte
 * budget, one copy, one contiguous range for the reader.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Most tests run in one thread with the copier stepped by hand.  The
 * budget tests use sink blocks of 64 KiB, at most 8 (a 512 KiB budget):
 * records of 100,000 bytes take extents of 25 pages (102,400 bytes), of
 * which three fit next to the copier's sink block and the one extents
 * always leave free.
 */
#include "lib-test.h"

#include <stdatomic.h>

#define BIG 100000u
#define BIG_EXTENT 102400u
#define SINK_BLOCK 65536u

static void
budget_config (TbqConfig * cfg)
{
  tbq_config_init (cfg);
  cfg->sink.block_size = SINK_BLOCK;
  cfg->sink.min_blocks = 2;
  cfg->sink.max_blocks = 8;
  cfg->sink.max_idle_blocks = 2;
}

static void
fixture_open_cfg (Fixture * f, const TbqConfig * cfg)
{
  f->q = open_queue (cfg, &f->w, &f->r);
}

static void
fixture_open_budget (Fixture * f, TbqBackpressure mode)
{
  TbqConfig cfg;

  budget_config (&cfg);
  cfg.backpressure = mode;
  fixture_open_cfg (f, &cfg);
}

static void
fixture_close (Fixture * f)
{
  tbq_queue_free (f->q, NULL, NULL);
}

/* A record of `size` bytes carrying payload `seq` (heap-filled). */
static TbqStatus
write_big (TbqWriter * w, uint16_t type, uint32_t size, uint64_t seq)
{
  unsigned char *buf = malloc (size ? size : 1);
  TbqStatus st;

  CHECK (buf != NULL);
  fill_payload (buf, size, seq);
  st = tbq_writer_write (w, type, buf, size);
  free (buf);
  return st;
}

/* The next record is `size` bytes of payload `seq`. */
static void
expect_big (TbqReader * r, uint32_t size, uint64_t seq, TbqRecord * out)
{
  TbqRecord rec;

  CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
  CHECK_EQ (rec.size, size);
  CHECK (payload_mismatch (rec.data, rec.size, seq) < 0);
  if (out)
    *out = rec;
}

/* Whether `rec` is out of line: its payload follows its extent's header. */
static bool
in_extent (const TbqRecord * rec)
{
  return (uintptr_t) rec->data == (uintptr_t) rec->block
      + TBQ_BLOCK_HEADER_SIZE;
}

/* ---- the inline limit and the one contiguous range ---- */

static void
records_above_the_inline_limit_travel_in_an_extent (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqRecord rec;
  uint32_t inl;

  tbq_config_init (&cfg);
  fixture_open_cfg (&f, &cfg);
  inl = tbq_queue_max_inline_size (f.q);
  CHECK_EQ (inl, 1000);
  CHECK_OK (write_big (f.w, 1, inl, 1));
  CHECK_OK (write_big (f.w, 2, inl + 1, 2));
  CHECK_OK (write_big (f.w, 3, 4 * 1024 * 1024, 3));
  copier_step_or_fail (f.q);
  expect_big (f.r, inl, 1, &rec);
  CHECK (!in_extent (&rec));
  expect_big (f.r, inl + 1, 2, &rec);
  CHECK (in_extent (&rec));
  CHECK_EQ (rec.type, 2);
  expect_big (f.r, 4 * 1024 * 1024, 3, &rec);
  CHECK (in_extent (&rec));
  /* The copier moved three small records, not the payloads. */
  CHECK_EQ (stats_of (f.q).bytes_copied, TBQ_RECORD_SPAN (inl)
      + 2 * TBQ_RECORD_SPAN (sizeof (void *) + sizeof (uint64_t)));
  CHECK_EQ (stats_of (f.q).extents.allocations, 2);
  fixture_close (&f);
}

static void
reserve_hands_out_the_extent_itself (void)
{
  Fixture f;
  TbqRecord rec;
  TbqStats st;
  void *p;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_BLOCK);
  CHECK_OK (tbq_writer_reserve (f.w, 7, BIG, &p));
  fill_payload (p, BIG, 7);
  CHECK_OK (tbq_writer_commit (f.w));
  copier_step_or_fail (f.q);
  expect_big (f.r, BIG, 7, &rec);
  /* Written once, where the reader finds it. */
  CHECK (rec.data == p);
  st = stats_of (f.q);
  CHECK_EQ (st.records_in, 1);
  CHECK_EQ (st.bytes_in, BIG);
  CHECK_EQ (st.records_out, 1);
  CHECK_EQ (st.bytes_out, BIG);
  fixture_close (&f);
}

static void
cancel_or_a_write_gives_a_large_reservation_up (void)
{
  Fixture f;
  TbqStats st;
  void *p;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_DROP);
  CHECK_OK (tbq_writer_reserve (f.w, 1, BIG, &p));
  CHECK_EQ (stats_of (f.q).extents.in_use, 1);
  tbq_writer_cancel (f.w);
  CHECK_EQ (stats_of (f.q).extents.in_use, 0);
  CHECK_STATUS (tbq_writer_commit (f.w), TBQ_INVALID_ARGUMENT);
  /* A write between reserve and commit: the reservation is gone. */
  CHECK_OK (tbq_writer_reserve (f.w, 1, BIG, &p));
  CHECK_OK (write_seq (f.w, 2, 2));
  CHECK_STATUS (tbq_writer_commit (f.w), TBQ_INVALID_ARGUMENT);
  /* So is one replaced by a new reserve. */
  CHECK_OK (tbq_writer_reserve (f.w, 1, BIG, &p));
  CHECK_OK (tbq_writer_reserve (f.w, 3, 8, &p));
  memset (p, 0, 8);
  CHECK_OK (tbq_writer_commit (f.w));
  st = stats_of (f.q);
  CHECK_EQ (st.extents.in_use, 0);
  CHECK_EQ (st.records_in, 2);
  copier_step_or_fail (f.q);
  expect_seq (f.r, 2);
  fixture_close (&f);
}

static void
session_reserve_puts_a_large_record_in_an_extent (void)
{
  Fixture f;
  TbqSession s;
  TbqRecord rec;
  void *p;
  uint64_t i;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_BLOCK);
  tbq_session_begin (f.w, &s);
  for (i = 0; i < 6; i++) {
    uint32_t size = i % 2 ? BIG : 16;

    while ((p = tbq_session_reserve (&s, (uint16_t) i, size)) == NULL)
      CHECK_OK (tbq_session_next_block (&s));
    fill_payload (p, size, i);
    /* Three large ones fill the budget: the next waits, so read. */
    if (i == 4) {
      tbq_session_end (&s);
      copier_step_or_fail (f.q);
      expect_big (f.r, 16, 0, NULL);
      expect_big (f.r, BIG, 1, NULL);
      tbq_session_begin (f.w, &s);
    }
  }
  tbq_session_end (&s);
  CHECK_EQ (stats_of (f.q).handoffs, 0);
  copier_step_or_fail (f.q);
  for (i = 2; i < 6; i++) {
    expect_big (f.r, i % 2 ? BIG : 16, i, &rec);
    CHECK_EQ (rec.type, i);
    CHECK (in_extent (&rec) == (i % 2 == 1));
  }
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  fixture_close (&f);
}

/* ---- references ---- */

static void
reader_drops_its_extent_reference_at_the_next_take (void)
{
  Fixture f;
  TbqRecord rec, peeked;
  TbqStats st;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_DROP);
  CHECK_OK (write_big (f.w, 1, BIG, 1));
  CHECK_OK (write_big (f.w, 2, BIG, 2));
  copier_step_or_fail (f.q);
  /* A peek shows it without taking it. */
  CHECK_OK (tbq_reader_peek (f.r, &peeked));
  CHECK (in_extent (&peeked));
  expect_big (f.r, BIG, 1, &rec);
  CHECK (rec.data == peeked.data);
  CHECK_EQ (stats_of (f.q).extents.in_use, 2);
  expect_big (f.r, BIG, 2, NULL);
  /* The first went back to the idle cache, uncharged. */
  st = stats_of (f.q);
  CHECK_EQ (st.extents.in_use, 1);
  CHECK_EQ (st.extents.idle, 1);
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  st = stats_of (f.q);
  CHECK_EQ (st.extents.in_use, 0);
  CHECK_EQ (st.extents.idle, 2);
  CHECK_EQ (st.extents.bytes_in_use, 0);
  CHECK_EQ (st.extents.bytes_peak, 2 * BIG_EXTENT);
  fixture_close (&f);
}

static void
extent_references_outlive_the_queue (void)
{
  Fixture f;
  TbqRecord held[3];
  uint64_t i;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_DROP);
  for (i = 0; i < 3; i++) {
    CHECK_OK (write_big (f.w, 1, BIG, i));
    copier_step_or_fail (f.q);
    expect_big (f.r, BIG, i, &held[i]);
    tbq_block_ref (held[i].block);
  }
  /* One more queued, so the free has an extent of its own to drop. */
  CHECK_OK (write_big (f.w, 1, 5000, 9));
  fixture_close (&f);
  for (i = 0; i < 3; i++)
    CHECK (payload_mismatch (held[i].data, held[i].size, i) < 0);
  /* The last holder frees the extents, then the pool (ASan checks). */
  tbq_block_unref (held[2].block);
  tbq_block_unref (held[0].block);
  CHECK (payload_mismatch (held[1].data, held[1].size, 1) < 0);
  tbq_block_unref (held[1].block);
}

typedef struct
{
  uint64_t calls;
  uint64_t next_seq;
  bool ok;
} Released;

static void
release_cb (uint16_t type, const void *data, uint32_t size, void *user_data)
{
  Released *r = user_data;

  /* Released oldest first; the type carries the sequence number. */
  r->calls++;
  if (type != r->next_seq++ || payload_mismatch (data, size, type) >= 0)
    r->ok = false;
}

/* Queue records 0..n-1, large and small alternating, in every layer:
 * some read-ready in the sink layer, some published, some not. */
static uint64_t
queue_everywhere (Fixture * f)
{
  uint64_t seq = 0;

  tbq_writer_set_publish (f->w, TBQ_PUBLISH_AT_HANDOFF, 0);
  CHECK_OK (write_big (f->w, (uint16_t) seq, BIG, seq));
  seq++;
  CHECK_OK (write_big (f->w, (uint16_t) seq, 40, seq));
  seq++;
  tbq_writer_flush (f->w);
  copier_step_or_fail (f->q);
  CHECK_OK (write_big (f->w, (uint16_t) seq, BIG, seq));
  seq++;
  tbq_writer_flush (f->w);
  CHECK_OK (write_big (f->w, (uint16_t) seq, 40, seq));
  seq++;
  CHECK_OK (write_big (f->w, (uint16_t) seq, 3000, seq));
  seq++;
  return seq;
}

static void
discard_releases_every_extent_once (void)
{
  Fixture f;
  Released rel = { 0, 0, true };
  TbqStats st;
  uint64_t n;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_DROP);
  n = queue_everywhere (&f);
  CHECK_EQ (stats_of (f.q).extents.in_use, 3);
  tbq_queue_discard (f.q, release_cb, &rel);
  CHECK (rel.ok);
  CHECK_EQ (rel.calls, n);
  st = stats_of (f.q);
  CHECK_EQ (st.records_discarded, n);
  CHECK_EQ (st.extents.in_use, 0);
  /* Only the copier's sink block is charged. */
  CHECK_EQ (st.extents.budget_used, SINK_BLOCK);
  /* The writer and reader go on. */
  CHECK_OK (write_big (f.w, 1, BIG, 77));
  tbq_writer_flush (f.w);
  copier_step_or_fail (f.q);
  expect_big (f.r, BIG, 77, NULL);
  fixture_close (&f);
}

static void
free_releases_every_extent_once (void)
{
  Fixture f;
  Released rel = { 0, 0, true };
  uint64_t n;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_DROP);
  n = queue_everywhere (&f);
  tbq_queue_free (f.q, release_cb, &rel);
  CHECK (rel.ok);
  CHECK_EQ (rel.calls, n);
}

/* ---- the budget ---- */

static void
full_budget_drops_with_drop_backpressure (void)
{
  Fixture f;
  TbqStats st;
  uint64_t i;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_DROP);
  for (i = 0; i < 3; i++)
    CHECK_OK (write_big (f.w, 1, BIG, i));
  CHECK_STATUS (write_big (f.w, 1, BIG, 3), TBQ_DROPPED);
  st = stats_of (f.q);
  CHECK_EQ (st.records_dropped, 1);
  CHECK_EQ (st.extents.in_use, 3);
  CHECK_EQ (st.extents.budget_used, SINK_BLOCK + 3 * BIG_EXTENT);
  CHECK (st.extents.budget_used <= st.extents.budget_limit);
  CHECK_EQ (st.extents.budget_limit, 8 * SINK_BLOCK);
  /* The sink pool can take no such record now, but a block (for small
   * ones) it can. */
  CHECK (!tbq_queue_sink_can_take_record (f.q, BIG));
  CHECK (tbq_queue_sink_can_take_record (f.q, 64));
  CHECK (tbq_queue_sink_can_take (f.q));
  /* Small records still travel. */
  CHECK_OK (write_seq (f.w, 2, 4));
  /* Drops wait for nobody. */
  CHECK_EQ (st.extents.pressure_waits, 0);
  copier_step_or_fail (f.q);
  expect_big (f.r, BIG, 0, NULL);
  expect_big (f.r, BIG, 1, NULL);
  /* The reader left the first: room for one more. */
  CHECK (tbq_queue_sink_can_take_record (f.q, BIG));
  CHECK_OK (write_big (f.w, 1, BIG, 5));
  CHECK_STATUS (write_big (f.w, 1, BIG, 6), TBQ_DROPPED);
  expect_big (f.r, BIG, 2, NULL);
  expect_seq (f.r, 4);
  tbq_writer_flush (f.w);
  copier_step_or_fail (f.q);
  expect_big (f.r, BIG, 5, NULL);
  CHECK_EQ (stats_of (f.q).records_dropped, 2);
  fixture_close (&f);
}

/* budget_peak is the highest budget_used: sink blocks and extents
 * together, and it stays there when the reader frees them. */
static void
budget_peak_is_the_highest_use_of_blocks_and_extents (void)
{
  Fixture f;
  TbqStats st;
  TbqRecord rec;
  uint64_t i, high;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_DROP);
  st = stats_of (f.q);
  /* The copier's sink block, charged from the start. */
  CHECK_EQ (st.extents.budget_used, SINK_BLOCK);
  CHECK_EQ (st.extents.budget_peak, SINK_BLOCK);
  for (i = 0; i < 3; i++) {
    CHECK_OK (write_big (f.w, 1, BIG, i));
    st = stats_of (f.q);
    CHECK_EQ (st.extents.budget_used, SINK_BLOCK + (i + 1) * BIG_EXTENT);
    CHECK_EQ (st.extents.budget_peak, st.extents.budget_used);
  }
  high = SINK_BLOCK + 3 * BIG_EXTENT;
  /* Small records too: the copier's next sink block counts. */
  for (i = 0; i < SINK_BLOCK / TBQ_RECORD_SPAN (8); i++) {
    if (write_seq (f.w, 2, i) == TBQ_OK)
      continue;
    /* The source pool is full: move it. */
    copier_step_or_fail (f.q);
    CHECK_OK (write_seq (f.w, 2, i));
  }
  tbq_writer_flush (f.w);
  copier_step_or_fail (f.q);
  st = stats_of (f.q);
  CHECK (st.extents.budget_used > high);
  CHECK_EQ (st.extents.budget_used % SINK_BLOCK, (3 * BIG_EXTENT) % SINK_BLOCK);
  high = st.extents.budget_used;
  CHECK_EQ (st.extents.budget_peak, high);
  /* Everything read: the use drops, the peak stays. */
  while (read_record (f.r, &rec, 0) == TBQ_OK) {
  }
  st = stats_of (f.q);
  CHECK (st.extents.budget_used < high);
  CHECK_EQ (st.extents.budget_peak, high);
  /* A use below the peak leaves it alone. */
  CHECK_OK (write_big (f.w, 1, BIG, 9));
  st = stats_of (f.q);
  CHECK (st.extents.budget_used < high);
  CHECK_EQ (st.extents.budget_peak, high);
  fixture_close (&f);
}

static TbqStatus
write_big_3 (void *w)
{
  return write_big (w, 1, BIG, 3);
}

/* Another thread writes a fourth large record into a full budget, and
 * sleeps. */
static void
start_blocked_writer (Fixture * f, BlockingCall * c)
{
  uint64_t i;

  for (i = 0; i < 3; i++)
    CHECK_OK (write_big (f->w, 1, BIG, i));
  blocking_call_start (c, f->q, write_big_3, f->w);
  CHECK_EQ (stats_of (f->q).extents.pressure_waits, 1);
}

static void
full_budget_blocks_until_the_reader_frees_room (void)
{
  Fixture f;
  BlockingCall c;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_BLOCK);
  start_blocked_writer (&f, &c);
  /* The waiting writer published what it wrote: the copier moves it,
   * the reader takes two and so leaves the first behind. */
  copier_step_or_fail (f.q);
  expect_big (f.r, BIG, 0, NULL);
  expect_big (f.r, BIG, 1, NULL);
  CHECK_OK (blocking_call_join (&c));
  tbq_writer_flush (f.w);
  copier_step_or_fail (f.q);
  expect_big (f.r, BIG, 2, NULL);
  expect_big (f.r, BIG, 3, NULL);
  CHECK_EQ (stats_of (f.q).records_dropped, 0);
  fixture_close (&f);
}

static void
interrupt_ends_a_wait_for_the_budget (void)
{
  Fixture f;
  BlockingCall c;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_BLOCK);
  start_blocked_writer (&f, &c);
  tbq_queue_interrupt (f.q);
  CHECK_STATUS (blocking_call_join (&c), TBQ_INTERRUPTED);
  CHECK_EQ (stats_of (f.q).records_dropped, 1);
  CHECK_EQ (stats_of (f.q).extents.in_use, 3);
  tbq_queue_resume (f.q);
  fixture_close (&f);
}

static void
wait_for_the_budget_times_out (void)
{
  TbqConfig cfg;
  Fixture f;
  uint64_t i;

  budget_config (&cfg);
  cfg.block_timeout_ns = 1 * MS_NS;
  fixture_open_cfg (&f, &cfg);
  for (i = 0; i < 3; i++)
    CHECK_OK (write_big (f.w, 1, BIG, i));
  CHECK_STATUS (write_big (f.w, 1, BIG, 3), TBQ_TIMEOUT);
  CHECK_EQ (stats_of (f.q).records_dropped, 1);
  CHECK_EQ (stats_of (f.q).extents.pressure_waits, 1);
  fixture_close (&f);
}

static void
record_larger_than_the_budget_is_refused_at_once (void)
{
  Fixture f;
  uint32_t max;
  void *p;

  /* BLOCK forever: a wait here would never end. */
  fixture_open_budget (&f, TBQ_BACKPRESSURE_BLOCK);
  max = tbq_queue_max_extent_size (f.q);
  /* Eight blocks less the copier's and the one kept free, less a header. */
  CHECK_EQ (max, 6 * SINK_BLOCK - TBQ_BLOCK_HEADER_SIZE);
  CHECK_STATUS (tbq_writer_reserve (f.w, 1, max + 1, &p), TBQ_TOO_LARGE);
  CHECK (strstr (tbq_status_to_string (TBQ_TOO_LARGE), "too large") != NULL);
  CHECK_EQ (stats_of (f.q).records_dropped, 1);
  CHECK_EQ (stats_of (f.q).extents.pressure_waits, 0);
  /* The largest one fits an empty budget. */
  CHECK_OK (write_big (f.w, 1, max, 1));
  copier_step_or_fail (f.q);
  expect_big (f.r, max, 1, NULL);
  fixture_close (&f);
}

/* A session of records 0..3 of BIG bytes: the fourth finds the budget
 * full; returns what tbq_session_next_block() said then.  After a TBQ_OK
 * the retry must succeed. */
static TbqStatus
session_of_four (void *w)
{
  TbqStatus st = TBQ_OK;
  TbqSession s;
  void *p;
  uint64_t i;

  tbq_session_begin (w, &s);
  for (i = 0; i < 4; i++) {
    p = tbq_session_reserve (&s, 1, BIG);
    if (p == NULL) {
      st = tbq_session_next_block (&s);
      if (st != TBQ_OK)
        break;
      /* Room made, extent taken: the retry cannot fail. */
      p = tbq_session_reserve (&s, 1, BIG);
      CHECK (p != NULL);
    }
    fill_payload (p, BIG, i);
  }
  tbq_session_end (&s);
  return st;
}

static void
session_next_block_drops_on_a_full_budget (void)
{
  Fixture f;
  TbqStats st;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_DROP);
  CHECK_STATUS (session_of_four (f.w), TBQ_DROPPED);
  st = stats_of (f.q);
  /* The session refused no record of its own: the caller gave up. */
  CHECK_EQ (st.records_dropped, 0);
  CHECK_EQ (st.records_in, 3);
  copier_step_or_fail (f.q);
  expect_big (f.r, BIG, 0, NULL);
  expect_big (f.r, BIG, 1, NULL);
  expect_big (f.r, BIG, 2, NULL);
  fixture_close (&f);
}

static void
session_next_block_waits_for_the_budget (void)
{
  Fixture f;
  BlockingCall c;
  uint64_t i;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_BLOCK);
  blocking_call_start (&c, f.q, session_of_four, f.w);
  CHECK_EQ (stats_of (f.q).extents.pressure_waits, 1);
  /* next_block published the session's records before it waited. */
  copier_step_or_fail (f.q);
  expect_big (f.r, BIG, 0, NULL);
  expect_big (f.r, BIG, 1, NULL);
  CHECK_OK (blocking_call_join (&c));
  copier_step_or_fail (f.q);
  for (i = 2; i < 4; i++)
    expect_big (f.r, BIG, i, NULL);
  CHECK_EQ (stats_of (f.q).handoffs, 0);
  fixture_close (&f);
}

/* ---- any size, every byte, in order ---- */

#define MAX_SIZE (16u << 20)

/* Record `seq`'s size: half small (0..64 bytes), half log-uniform from
 * 1 byte to 16 MiB. */
static uint32_t
any_size (uint64_t seq)
{
  uint64_t r = mix64 (seq ^ 0xa11512e5ull);
  unsigned bits = (unsigned) ((r >> 8) % 25);   /* 2^0 .. 2^24 */
  uint32_t size;

  if (r & 1)
    return (uint32_t) ((r >> 40) % 65);
  size = (uint32_t) (1 + ((r >> 16) & (((uint64_t) 1 << bits) - 1)));
  return size > MAX_SIZE ? MAX_SIZE : size;
}

typedef struct
{
  TbqReader *r;
  uint64_t n;
  uint64_t got;
  TbqBlock *held[4];
  char error[160];
} AnyReader;

static void *
any_reader_main (void *arg)
{
  AnyReader *a = arg;
  unsigned k;

  for (a->got = 0; a->got < a->n; a->got++) {
    TbqRecord rec;
    uint32_t size = any_size (a->got);

    if (read_record (a->r, &rec, 60 * SEC_NS) != TBQ_OK) {
      snprintf (a->error, sizeof a->error, "record %" PRIu64 " never came",
          a->got);
      break;
    }
    if (rec.type != (uint16_t) a->got || rec.size != size
        || payload_mismatch (rec.data, rec.size, a->got) >= 0) {
      snprintf (a->error, sizeof a->error, "record %" PRIu64 ": type %u "
          "size %u, want size %u, or its bytes differ", a->got, rec.type,
          rec.size, size);
      break;
    }
    /* Now and then keep a record's memory past the next take. */
    k = (unsigned) (a->got % 4);
    if (a->got % 7 == 0) {
      if (a->held[k] != NULL)
        tbq_block_unref (a->held[k]);
      tbq_block_ref (rec.block);
      a->held[k] = rec.block;
    }
  }
  for (k = 0; k < 4; k++)
    if (a->held[k] != NULL)
      tbq_block_unref (a->held[k]);
  return NULL;
}

/* Write record `seq` by write, reserve/commit or into the open session. */
static void
write_any (TbqWriter * w, TbqSession * s, uint64_t seq, unsigned char *buf)
{
  uint32_t size = any_size (seq);
  uint16_t type = (uint16_t) seq;
  void *p;

  switch (mix64 (seq) % 3) {
    case 0:
      fill_payload (buf, size, seq);
      CHECK_OK (tbq_writer_write (w, type, buf, size));
      break;
    case 1:
      CHECK_OK (tbq_writer_reserve (w, type, size, &p));
      fill_payload (p, size, seq);
      CHECK_OK (tbq_writer_commit (w));
      break;
    default:
      tbq_session_begin (w, s);
      while ((p = tbq_session_reserve (s, type, size)) == NULL)
        CHECK_OK (tbq_session_next_block (s));
      fill_payload (p, size, seq);
      tbq_session_end (s);
      break;
  }
}

static void
records_of_any_size_arrive_whole_and_in_order (void)
{
  TbqConfig cfg;
  Fixture f;
  AnyReader a;
  TbqSession s;
  TbqStats st;
  pthread_t th;
  unsigned char *buf = malloc (MAX_SIZE);
  uint64_t i, bytes = 0;

  CHECK (buf != NULL);
  /* A 32 MiB budget: large records wait for the reader now and then. */
  tbq_config_init (&cfg);
  cfg.sink.max_blocks = 512;
  fixture_open_cfg (&f, &cfg);
  CHECK (tbq_queue_max_extent_size (f.q) >= MAX_SIZE);
  CHECK_OK (tbq_queue_start (f.q));
  memset (&a, 0, sizeof a);
  a.r = f.r;
  a.n = scaled (400);
  CHECK (pthread_create (&th, NULL, any_reader_main, &a) == 0);
  for (i = 0; i < a.n; i++) {
    write_any (f.w, &s, i, buf);
    bytes += any_size (i);
  }
  tbq_writer_flush (f.w);
  pthread_join (th, NULL);
  if (a.error[0] != '\0')
    printf ("# %s\n", a.error);
  CHECK_EQ (a.got, a.n);
  st = stats_of (f.q);
  printf ("# %" PRIu64 " records, %" PRIu64 " MiB; %" PRIu64 " extents "
      "allocated, %" PRIu64 " reused, %" PRIu64 " writer waits\n", a.n,
      bytes >> 20, st.extents.allocations, st.extents.cache_hits,
      st.extents.pressure_waits);
  CHECK_EQ (st.records_out, a.n);
  CHECK_EQ (st.bytes_out, bytes);
  CHECK_EQ (st.records_dropped, 0);
  CHECK (st.extents.bytes_peak + SINK_BLOCK <= st.extents.budget_limit);
  fixture_close (&f);
  free (buf);
}

/* ---- the idle cache ---- */

static void
same_size_records_reuse_their_extents (void)
{
  Fixture f;
  TbqStats st;
  uint64_t i, n = 50;

  fixture_open_budget (&f, TBQ_BACKPRESSURE_DROP);
  for (i = 0; i < n; i++) {
    /* Sizes of one page class, and a little over: close sizes reuse. */
    CHECK_OK (write_big (f.w, 1, BIG - (uint32_t) (i % 3) * 1000, i));
    copier_step_or_fail (f.q);
    expect_big (f.r, BIG - (uint32_t) (i % 3) * 1000, i, NULL);
  }
  st = stats_of (f.q);
  /* The reader holds one while the next is written: two in all. */
  CHECK_EQ (st.extents.allocations, 2);
  CHECK_EQ (st.extents.cache_hits, n - 2);
  CHECK_EQ (st.extents.releases, 0);
  fixture_close (&f);
}

static void
idle_cache_is_bounded_and_trimmed_by_the_copier (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqStats st;
  uint64_t i, n = 20;

  /* A 64 MiB budget: 16 MiB idle kept (a quarter), at most 8 extents. */
  tbq_config_init (&cfg);
  cfg.sink.max_blocks = 1024;
  fixture_open_cfg (&f, &cfg);
  /* Twenty sizes, no two close enough to share an extent. */
  for (i = 0; i < n; i++)
    CHECK_OK (write_big (f.w, 1, (uint32_t) (20000 << (i % 8)) + (uint32_t)
            i * 4096, i));
  copier_step_or_fail (f.q);
  for (i = 0; i < n; i++)
    expect_big (f.r, (uint32_t) (20000 << (i % 8)) + (uint32_t) i * 4096, i,
        NULL);
  {
    TbqRecord rec;

    /* The reader leaves the last one too. */
    CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  }
  st = stats_of (f.q);
  CHECK_EQ (st.extents.allocations, n);
  CHECK_EQ (st.extents.idle, n);
  /* The copier's next pass trims to the bound, hottest kept. */
  CHECK_STATUS (tbq_copier_step (f.q, 0), TBQ_TIMEOUT);
  st = stats_of (f.q);
  CHECK (st.extents.idle <= 8);
  CHECK (st.extents.bytes_idle <= 16u << 20);
  CHECK_EQ (st.extents.releases, n - st.extents.idle);
  CHECK_EQ (st.extents.in_use, 0);
  fixture_close (&f);
}

static void
copier_thread_trims_the_cache_when_told (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqRecord held[12];
  uint64_t i, n = 12;

  tbq_config_init (&cfg);
  cfg.sink.max_blocks = 1024;
  fixture_open_cfg (&f, &cfg);
  CHECK_OK (tbq_queue_start (f.q));
  for (i = 0; i < n; i++) {
    CHECK_OK (write_big (f.w, 1, 3 * BIG, i));
    expect_big (f.r, 3 * BIG, i, &held[i]);
    tbq_block_ref (held[i].block);
  }
  /* The holders let go long after the reader: the idle copier must hear
   * of the surplus and trim it. */
  for (i = 0; i < n; i++)
    tbq_block_unref (held[i].block);
  /* The reader still holds the last one; of the rest the cache keeps
   * eight (a released extent is counted after its idle count drops). */
  WAIT_UNTIL (stats_of (f.q).extents.idle <= 8
      && stats_of (f.q).extents.idle + stats_of (f.q).extents.releases
      == n - 1);
  CHECK_EQ (stats_of (f.q).extents.in_use, 1);
  fixture_close (&f);
}

TAP_MAIN (TAP_TEST (records_above_the_inline_limit_travel_in_an_extent),
    TAP_TEST (reserve_hands_out_the_extent_itself),
    TAP_TEST (cancel_or_a_write_gives_a_large_reservation_up),
    TAP_TEST (session_reserve_puts_a_large_record_in_an_extent),
    TAP_TEST (reader_drops_its_extent_reference_at_the_next_take),
    TAP_TEST (extent_references_outlive_the_queue),
    TAP_TEST (discard_releases_every_extent_once),
    TAP_TEST (free_releases_every_extent_once),
    TAP_TEST (records_of_any_size_arrive_whole_and_in_order),
    TAP_TEST (full_budget_drops_with_drop_backpressure),
    TAP_TEST (budget_peak_is_the_highest_use_of_blocks_and_extents),
    TAP_TEST (full_budget_blocks_until_the_reader_frees_room),
    TAP_TEST (interrupt_ends_a_wait_for_the_budget),
    TAP_TEST (wait_for_the_budget_times_out),
    TAP_TEST (record_larger_than_the_budget_is_refused_at_once),
    TAP_TEST (session_next_block_drops_on_a_full_budget),
    TAP_TEST (session_next_block_waits_for_the_budget),
    TAP_TEST (same_size_records_reuse_their_extents),
    TAP_TEST (idle_cache_is_bounded_and_trimmed_by_the_copier),
    TAP_TEST (copier_thread_trims_the_cache_when_told))
