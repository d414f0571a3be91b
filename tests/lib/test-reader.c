/* Reader: FIFO iteration, waiting and waking, the single-reader rule, and
 * zero-copy block references.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "lib-test.h"

#include <stdatomic.h>

/* Four inline records fill one 256-byte block: records seq * PER_BLOCK
 * .. seq * PER_BLOCK + 3 make "block seq". */
#define BLOCK 256
#define PER_BLOCK 4
#define FULL ((uint32_t) ((BLOCK - TBQ_BLOCK_HEADER_SIZE) / PER_BLOCK \
        - TBQ_RECORD_HEADER_SIZE))

static void
fixture_open (Fixture * f, const TbqConfig * cfg)
{
  f->q = queue_new_or_fail (cfg);
  CHECK_OK (tbq_writer_new (f->q, &f->w));
  CHECK_OK (tbq_reader_new (f->q, &f->r));
}

static void
fixture_open_small (Fixture * f)
{
  TbqConfig cfg;

  small_config (&cfg, BLOCK);
  cfg.sink.min_blocks = 4;
  cfg.sink.max_blocks = 4;
  fixture_open (f, &cfg);
}

static void
fixture_close (Fixture * f)
{
  tbq_queue_free (f->q, NULL, NULL);
}

/* Write block `seq`'s records. */
static void
write_full (TbqWriter * w, uint64_t seq)
{
  write_records (w, 0, FULL, seq * PER_BLOCK, PER_BLOCK);
}

/* Read block `seq`'s records; the first goes to `out`. */
static void
read_full (TbqReader * r, uint64_t seq, TbqRecord * out)
{
  read_records (r, FULL, seq * PER_BLOCK, PER_BLOCK, out);
}

static void
reader_returns_records_in_fifo_order (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqRecord rec;
  uint64_t i, next = 0, n = 5000;

  small_config (&cfg, 512);
  /* 50 records between copier steps need up to three source blocks. */
  cfg.source.max_blocks = 3;
  fixture_open (&f, &cfg);
  for (i = 0; i < n; i++) {
    CHECK_OK (write_seq (f.w, (uint16_t) i, i));
    if (i % 50 == 49) {
      copier_step_or_fail (f.q);
      while (tbq_reader_next (f.r, &rec) == TBQ_OK) {
        CHECK_EQ (rec.type, (uint16_t) next);
        CHECK_EQ (record_seq (&rec), next);
        next++;
      }
    }
  }
  CHECK_EQ (next, n);
  fixture_close (&f);
}

static void
reader_next_is_empty_when_nothing_is_queued (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqRecord rec;

  tbq_config_init (&cfg);
  fixture_open (&f, &cfg);
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  CHECK_OK (write_seq (f.w, 0, 1));
  /* Written but not moved yet. */
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  copier_step_or_fail (f.q);
  CHECK_OK (tbq_reader_next (f.r, &rec));
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  CHECK_EQ (stats_of (f.q).records_out, 1);
  fixture_close (&f);
}

typedef struct
{
  TbqReader *r;
  int64_t timeout_ns;
  TbqStatus st;
} WaitArgs;

static void *
wait_main (void *arg)
{
  WaitArgs *a = arg;

  a->st = tbq_reader_wait (a->r, a->timeout_ns);
  return NULL;
}

/* A thread waiting in tbq_reader_wait(); returns once it sleeps there. */
static void
start_waiter (WaitArgs * a, pthread_t * th, Fixture * f, int64_t timeout)
{
  uint64_t sleeps = stats_of (f->q).reader_sleeps;

  a->r = f->r;
  a->timeout_ns = timeout;
  a->st = TBQ_EMPTY;
  CHECK (pthread_create (th, NULL, wait_main, a) == 0);
  WAIT_UNTIL (stats_of (f->q).reader_sleeps > sleeps);
}

static void
reader_wait_returns_when_data_arrives (void)
{
  TbqConfig cfg;
  Fixture f;
  WaitArgs a;
  pthread_t th;
  TbqRecord rec;

  tbq_config_init (&cfg);
  fixture_open (&f, &cfg);
  CHECK_OK (tbq_queue_start (f.q));
  start_waiter (&a, &th, &f, EVENTUALLY_NS);
  CHECK_OK (write_seq (f.w, 0, 42));
  pthread_join (th, NULL);
  CHECK_OK (a.st);
  CHECK_OK (tbq_reader_next (f.r, &rec));
  CHECK_EQ (record_seq (&rec), 42);
  fixture_close (&f);
}

static void
reader_wait_returns_at_once_when_a_record_is_ready (void)
{
  TbqConfig cfg;
  Fixture f;

  tbq_config_init (&cfg);
  fixture_open (&f, &cfg);
  CHECK_OK (write_seq (f.w, 0, 1));
  copier_step_or_fail (f.q);
  /* A lost check would sleep the whole (effectively unlimited) timeout. */
  CHECK_OK (tbq_reader_wait (f.r, 1000 * SEC_NS));
  expect_seq (f.r, 1);
  fixture_close (&f);
}

static void
reader_wait_times_out_when_nothing_arrives (void)
{
  TbqConfig cfg;
  Fixture f;
  int64_t t0;

  tbq_config_init (&cfg);
  fixture_open (&f, &cfg);
  t0 = now_ns ();
  CHECK_STATUS (tbq_reader_wait (f.r, 30 * MS_NS), TBQ_TIMEOUT);
  CHECK (now_ns () - t0 >= 30 * MS_NS);
  CHECK_STATUS (tbq_reader_wait (f.r, 0), TBQ_TIMEOUT);
  fixture_close (&f);
}

static void
reader_wake_makes_a_pending_wait_return (void)
{
  TbqConfig cfg;
  Fixture f;
  WaitArgs a;
  pthread_t th;
  TbqRecord rec;

  tbq_config_init (&cfg);
  fixture_open (&f, &cfg);
  start_waiter (&a, &th, &f, -1);
  tbq_reader_wake (f.r);
  pthread_join (th, NULL);
  CHECK_OK (a.st);
  /* Woken, not fed: there is still nothing to read. */
  CHECK_STATUS (tbq_reader_next (f.r, &rec), TBQ_EMPTY);
  fixture_close (&f);
}

static void
reader_wake_before_wait_makes_the_next_wait_return (void)
{
  TbqConfig cfg;
  Fixture f;

  tbq_config_init (&cfg);
  fixture_open (&f, &cfg);
  tbq_reader_wake (f.r);
  CHECK_OK (tbq_reader_wait (f.r, 1000 * SEC_NS));
  /* One wake, one return. */
  CHECK_STATUS (tbq_reader_wait (f.r, 20 * MS_NS), TBQ_TIMEOUT);
  fixture_close (&f);
}

static void
second_reader_is_busy (void)
{
  TbqConfig cfg;
  Fixture f;
  TbqReader *r2 = NULL;
  TbqRecord rec;

  tbq_config_init (&cfg);
  fixture_open (&f, &cfg);
  CHECK_STATUS (tbq_reader_new (f.q, &r2), TBQ_BUSY);
  CHECK (r2 == NULL);
  CHECK_OK (write_seq (f.w, 0, 1));
  CHECK_OK (write_seq (f.w, 0, 2));
  copier_step_or_fail (f.q);
  CHECK_OK (tbq_reader_next (f.r, &rec));
  CHECK_EQ (record_seq (&rec), 1);
  /* Once the first reader is gone, a new one continues where it left. */
  tbq_reader_free (f.r);
  CHECK_OK (tbq_reader_new (f.q, &r2));
  CHECK_OK (tbq_reader_next (r2, &rec));
  CHECK_EQ (record_seq (&rec), 2);
  CHECK_STATUS (tbq_reader_next (r2, &rec), TBQ_EMPTY);
  fixture_close (&f);
}

static void
reader_rejects_missing_arguments (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqReader *r;

  tbq_config_init (&cfg);
  q = queue_new_or_fail (&cfg);
  CHECK_STATUS (tbq_reader_new (NULL, &r), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_new (q, NULL), TBQ_INVALID_ARGUMENT);
  tbq_reader_free (NULL);
  tbq_queue_free (q, NULL, NULL);
}

static void
block_ref_keeps_record_bytes_after_iteration_moves_on (void)
{
  Fixture f;
  TbqRecord held, rec;
  uint64_t i;

  fixture_open_small (&f);
  CHECK (FULL <= tbq_queue_max_inline_size (f.q));
  write_full (f.w, 0);
  copier_step_or_fail (f.q);
  read_full (f.r, 0, &held);
  tbq_block_ref (held.block);
  /* Cycle the remaining three sink blocks many times over. */
  for (i = 1; i < 100; i++) {
    write_full (f.w, i);
    copier_step_or_fail (f.q);
    read_full (f.r, i, &rec);
    CHECK (rec.block != held.block);
  }
  CHECK (payload_mismatch (held.data, held.size, 0) < 0);
  CHECK (stats_of (f.q).sink.blocks_peak <= 4);
  tbq_block_unref (held.block);
  fixture_close (&f);
}

static void
block_ref_keeps_record_bytes_after_the_queue_is_freed (void)
{
  Fixture f;
  TbqRecord held[3];
  uint64_t i;

  fixture_open_small (&f);
  for (i = 0; i < 3; i++) {
    write_full (f.w, i);
    copier_step_or_fail (f.q);
    read_full (f.r, i, &held[i]);
    tbq_block_ref (held[i].block);
  }
  /* More queued and unread, so the free has blocks of its own to drop. */
  write_full (f.w, 3);
  fixture_close (&f);
  for (i = 0; i < 3; i++)
    CHECK (payload_mismatch (held[i].data, held[i].size, i * PER_BLOCK) < 0);
  /* The last holder frees the blocks and the pool (ASan checks both). */
  tbq_block_unref (held[1].block);
  tbq_block_unref (held[0].block);
  CHECK (payload_mismatch (held[2].data, held[2].size, 2 * PER_BLOCK) < 0);
  tbq_block_unref (held[2].block);
}

static void
block_returns_to_the_pool_on_last_unref (void)
{
  Fixture f;
  TbqRecord held;
  TbqStats st;

  fixture_open_small (&f);
  write_full (f.w, 0);
  copier_step_or_fail (f.q);
  read_full (f.r, 0, &held);
  tbq_block_ref (held.block);
  tbq_block_ref (held.block);
  write_full (f.w, 1);
  copier_step_or_fail (f.q);
  /* The reader leaves the first block; the holder keeps it out of the pool. */
  read_full (f.r, 1, NULL);
  st = stats_of (f.q);
  CHECK_EQ (st.sink.blocks_in_use, 2);
  CHECK_EQ (st.sink.blocks_idle, 2);
  tbq_block_unref (held.block);
  CHECK_EQ (stats_of (f.q).sink.blocks_in_use, 2);
  tbq_block_unref (held.block);
  st = stats_of (f.q);
  CHECK_EQ (st.sink.blocks_in_use, 1);
  CHECK_EQ (st.sink.blocks_idle, 3);
  fixture_close (&f);
}

typedef struct
{
  TbqBlock *block;
  const void *data;
  uint32_t size;
  uint64_t seq;
} Held;

static void *
unref_main (void *arg)
{
  Held *h = arg;

  CHECK (payload_mismatch (h->data, h->size, h->seq) < 0);
  tbq_block_unref (h->block);
  return NULL;
}

static void
block_unref_works_from_any_thread (void)
{
  TbqConfig cfg;
  Fixture f;
  Held held[64];
  pthread_t th[64];
  uint64_t i, n = 64;

  small_config (&cfg, BLOCK);
  cfg.sink.max_blocks = 128;
  fixture_open (&f, &cfg);
  CHECK_OK (tbq_queue_start (f.q));
  for (i = 0; i < n; i++) {
    TbqRecord rec;

    uint64_t k;

    write_full (f.w, i);
    CHECK_OK (read_record (f.r, &rec, EVENTUALLY_NS));
    CHECK (payload_mismatch (rec.data, rec.size, i * PER_BLOCK) < 0);
    tbq_block_ref (rec.block);
    held[i].block = rec.block;
    held[i].data = rec.data;
    held[i].size = rec.size;
    held[i].seq = i * PER_BLOCK;
    CHECK (pthread_create (&th[i], NULL, unref_main, &held[i]) == 0);
    for (k = 1; k < PER_BLOCK; k++)
      CHECK_OK (read_record (f.r, &rec, EVENTUALLY_NS));
  }
  for (i = 0; i < n; i++)
    pthread_join (th[i], NULL);
  /* All came back: only the reader's current block is in use. */
  WAIT_UNTIL (stats_of (f.q).sink.blocks_in_use == 1);
  fixture_close (&f);
}

static void
reader_peek_shows_the_next_record_without_taking_it (void)
{
  Fixture f;
  TbqRecord peeked, rec;
  uint64_t i;

  fixture_open_small (&f);
  CHECK_STATUS (tbq_reader_peek (f.r, &rec), TBQ_EMPTY);
  /* One block's worth at a time: each peek after the first crosses a
   * block boundary. */
  for (i = 0; i < 3; i++) {
    write_full (f.w, i);
    copier_step_or_fail (f.q);
    CHECK_OK (tbq_reader_peek (f.r, &peeked));
    CHECK (payload_mismatch (peeked.data, peeked.size, i * PER_BLOCK) < 0);
    /* Peeking again shows the same record; nothing was taken. */
    CHECK_OK (tbq_reader_peek (f.r, &rec));
    CHECK (rec.data == peeked.data);
    CHECK_EQ (stats_of (f.q).records_out, i * PER_BLOCK);
    read_full (f.r, i, &rec);
    CHECK (rec.data == peeked.data);
    CHECK (rec.block == peeked.block);
  }
  CHECK_STATUS (tbq_reader_peek (f.r, &rec), TBQ_EMPTY);
  fixture_close (&f);
}

typedef struct
{
  TbqReader *r;
  uint32_t key;
  TbqStatus st;
} SleepArgs;

static void *
sleep_main (void *arg)
{
  SleepArgs *a = arg;

  a->st = tbq_reader_sleep (a->r, a->key, EVENTUALLY_NS);
  return NULL;
}

static void
reader_sleep_returns_once_records_are_published_after_the_key (void)
{
  Fixture f;
  SleepArgs a;
  pthread_t th;
  TbqRecord rec;
  uint32_t key;
  uint64_t sleeps;

  fixture_open_small (&f);
  /* Published after the key was taken: the sleep returns at once. */
  key = tbq_reader_prepare_wait (f.r);
  CHECK_STATUS (tbq_reader_peek (f.r, &rec), TBQ_EMPTY);
  write_full (f.w, 0);
  copier_step_or_fail (f.q);
  CHECK_OK (tbq_reader_sleep (f.r, key, 1000 * SEC_NS));
  /* The sleep does not move the read position. */
  read_full (f.r, 0, NULL);
  /* Nothing new since the key: it times out. */
  key = tbq_reader_prepare_wait (f.r);
  CHECK_STATUS (tbq_reader_sleep (f.r, key, 20 * MS_NS), TBQ_TIMEOUT);
  /* A sleeper is woken by the copier's next publish. */
  a.r = f.r;
  a.key = tbq_reader_prepare_wait (f.r);
  sleeps = stats_of (f.q).reader_sleeps;
  CHECK (pthread_create (&th, NULL, sleep_main, &a) == 0);
  WAIT_UNTIL (stats_of (f.q).reader_sleeps > sleeps);
  write_full (f.w, 1);
  copier_step_or_fail (f.q);
  pthread_join (th, NULL);
  CHECK_OK (a.st);
  read_full (f.r, 1, NULL);
  fixture_close (&f);
}

static void
reader_sleep_returns_on_wake_and_on_interrupt (void)
{
  Fixture f;
  SleepArgs a;
  pthread_t th;
  uint64_t sleeps;

  fixture_open_small (&f);
  a.r = f.r;
  a.key = tbq_reader_prepare_wait (f.r);
  sleeps = stats_of (f.q).reader_sleeps;
  CHECK (pthread_create (&th, NULL, sleep_main, &a) == 0);
  WAIT_UNTIL (stats_of (f.q).reader_sleeps > sleeps);
  tbq_reader_wake (f.r);
  pthread_join (th, NULL);
  CHECK_OK (a.st);

  a.key = tbq_reader_prepare_wait (f.r);
  sleeps = stats_of (f.q).reader_sleeps;
  CHECK (pthread_create (&th, NULL, sleep_main, &a) == 0);
  WAIT_UNTIL (stats_of (f.q).reader_sleeps > sleeps);
  tbq_queue_interrupt (f.q);
  pthread_join (th, NULL);
  CHECK_STATUS (a.st, TBQ_INTERRUPTED);
  fixture_close (&f);
}

TAP_MAIN (TAP_TEST (reader_returns_records_in_fifo_order),
    TAP_TEST (reader_next_is_empty_when_nothing_is_queued),
    TAP_TEST (reader_wait_returns_when_data_arrives),
    TAP_TEST (reader_wait_returns_at_once_when_a_record_is_ready),
    TAP_TEST (reader_wait_times_out_when_nothing_arrives),
    TAP_TEST (reader_wake_makes_a_pending_wait_return),
    TAP_TEST (reader_wake_before_wait_makes_the_next_wait_return),
    TAP_TEST (second_reader_is_busy),
    TAP_TEST (reader_rejects_missing_arguments),
    TAP_TEST (block_ref_keeps_record_bytes_after_iteration_moves_on),
    TAP_TEST (block_ref_keeps_record_bytes_after_the_queue_is_freed),
    TAP_TEST (block_returns_to_the_pool_on_last_unref),
    TAP_TEST (block_unref_works_from_any_thread),
    TAP_TEST (reader_peek_shows_the_next_record_without_taking_it),
    TAP_TEST (reader_sleep_returns_once_records_are_published_after_the_key),
    TAP_TEST (reader_sleep_returns_on_wake_and_on_interrupt))
