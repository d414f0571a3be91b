/* Several readers on one queue (SPMC), and several readers with several
 * writers (MPMC): batches claimed by whichever reader asks first.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every record carries its writer (the type tag) and its index (the first
 * 8 bytes), and bytes derived from both; some are large (extents).  What
 * the library promises, and what is checked: every record is delivered
 * exactly once, byte for byte, to one reader; the records one reader
 * takes come in each writer's order; a discard or a free releases every
 * record not delivered, exactly once.  Nothing is asserted about which
 * reader gets what, nor about timing: a test that waits for a thread to
 * block waits for the statistics that say so, and a hang is caught by
 * EVENTUALLY_NS.
 */
#include "lib-test.h"

#include <stdatomic.h>
#include <stdlib.h>

#define MAX_WRITERS 8
#define MAX_READERS 8
#define LARGE_MAX 30000

/* ---- records: writer `w`, index `i` ---- */

static uint32_t
size_of (uint16_t w, uint64_t i)
{
  uint64_t r = mix64 (i * MAX_WRITERS + w);

  if (r % 53 == 0)
    return 1100 + (uint32_t) (r % LARGE_MAX);   /* above the inline limit */
  return 8 + (uint32_t) (r % 200);
}

static void
fill_rec (unsigned char *buf, uint16_t w, uint64_t i)
{
  memcpy (buf, &i, 8);
  fill_payload (buf + 8, size_of (w, i) - 8, i * MAX_WRITERS + w);
}

/* The record's index, after checking its writer, its size and its
 * bytes. */
static uint64_t
check_rec (const TbqRecord * rec, uint16_t n_writers)
{
  uint64_t i;

  CHECK (rec->type < n_writers);
  CHECK (rec->size >= 8);
  memcpy (&i, rec->data, 8);
  if (rec->size != size_of (rec->type, i)
      || payload_mismatch ((const unsigned char *) rec->data + 8,
          rec->size - 8, i * MAX_WRITERS + rec->type) >= 0) {
    printf ("# writer %u record %" PRIu64 ": wrong bytes (size %u)\n",
        rec->type, i, rec->size);
    CHECK (0);
  }
  return i;
}

static TbqConfig
readers_config (uint32_t readers)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.source.block_size = 2048;
  cfg.source.min_blocks = cfg.source.max_blocks = 4;
  cfg.source.max_idle_blocks = 4;
  cfg.sink.block_size = 8192;   /* many block ends: batches stop there */
  cfg.sink.min_blocks = 2;
  cfg.sink.max_blocks = 128;    /* 1 MiB: extents of up to 30 KB fit */
  cfg.sink.max_idle_blocks = 8;
  cfg.max_readers = readers;
  return cfg;
}

/* ---- a run: writers and readers, each on a thread of its own ---- */

typedef struct Run Run;

typedef struct
{
  Run *run;
  uint16_t id;
  TbqReader *r;
  pthread_t th;
  uint64_t last[MAX_WRITERS];   /* index + 1 of the last record per writer */
  uint64_t got;
  /* Zero-copy: a few records kept by reference, checked again later. */
  TbqRecord kept[8];
  uint32_t n_kept;
} Reader;

typedef struct
{
  Run *run;
  uint16_t id;
  pthread_t th;
  TbqStatus st;
} Writer;

struct Run
{
  TbqQueue *q;
  uint16_t n_writers, n_readers;
  uint64_t per_writer;
  _Atomic uint64_t delivered;
  _Atomic unsigned char *seen[MAX_WRITERS];     /* deliveries per record */
  Writer w[MAX_WRITERS];
  Reader r[MAX_READERS];
};

static void *
writer_main (void *arg)
{
  Writer *wr = arg;
  Run *run = wr->run;
  TbqWriter *w;
  unsigned char *buf = malloc (LARGE_MAX + 1200);
  uint64_t i = 0;

  wr->st = tbq_writer_new (run->q, &w);
  if (wr->st != TBQ_OK)
    return NULL;
  /* Every writer behaves differently; the per-writer order must hold
   * regardless. */
  if (wr->id % 3 == 1)
    tbq_writer_set_publish (w, TBQ_PUBLISH_EVERY_N, 16);
  else if (wr->id % 3 == 2)
    tbq_writer_set_publish (w, TBQ_PUBLISH_AT_HANDOFF, 0);
  while (i < run->per_writer && wr->st == TBQ_OK) {
    uint32_t size = size_of (wr->id, i);

    if (i % 100 < 30) {
      TbqSession s;
      int k;

      tbq_session_begin (w, &s);
      for (k = 0; k < 10 && i < run->per_writer; k++, i++) {
        void *p;

        size = size_of (wr->id, i);
        while ((p = tbq_session_reserve (&s, wr->id, size)) == NULL)
          CHECK_OK (tbq_session_next_block (&s));
        fill_rec (p, wr->id, i);
      }
      tbq_session_end (&s);
    } else if (i % 2 == 0) {
      void *p;

      wr->st = tbq_writer_reserve (w, wr->id, size, &p);
      if (wr->st == TBQ_OK) {
        fill_rec (p, wr->id, i);
        wr->st = tbq_writer_commit (w);
      }
      i++;
    } else {
      fill_rec (buf, wr->id, i);
      wr->st = tbq_writer_write (w, wr->id, buf, size);
      i++;
    }
  }
  tbq_writer_flush (w);
  tbq_writer_close (w);
  free (buf);
  return NULL;
}

static void
kept_check_and_drop (Reader * rd, TbqRecord * k)
{
  check_rec (k, rd->run->n_writers);
  tbq_block_unref (k->block);
}

/* One record taken by `rd`: exactly once overall, in order per writer for
 * this reader. */
static void
reader_took (Reader * rd, const TbqRecord * rec)
{
  Run *run = rd->run;
  uint64_t i = check_rec (rec, run->n_writers);

  CHECK (i < run->per_writer);
  if (i + 1 <= rd->last[rec->type]) {
    printf ("# reader %u: writer %u record %" PRIu64 " after %" PRIu64 "\n",
        rd->id, rec->type, i, rd->last[rec->type] - 1);
    CHECK (0);
  }
  rd->last[rec->type] = i + 1;
  if (atomic_fetch_add_explicit (&run->seen[rec->type][i], 1,
          memory_order_relaxed) != 0) {
    printf ("# writer %u record %" PRIu64 " delivered twice\n", rec->type, i);
    CHECK (0);
  }
  rd->got++;
  /* Keep every 97th record by reference: its bytes must stay valid while
   * the reader goes on through other batches. */
  if (i % 97 == (uint64_t) rd->id) {
    TbqRecord *k = &rd->kept[rd->n_kept % 8];

    if (rd->n_kept >= 8)
      kept_check_and_drop (rd, k);
    *k = *rec;
    tbq_block_ref (k->block);
    rd->n_kept++;
  }
}

static void
kick_everyone (Run * run)
{
  uint16_t k;

  for (k = 0; k < run->n_readers; k++)
    tbq_reader_wake (run->r[k].r);
}

static void *
reader_main (void *arg)
{
  Reader *rd = arg;
  Run *run = rd->run;
  uint64_t total = run->per_writer * run->n_writers;
  uint32_t k;

  for (;;) {
    TbqRecord rec;
    TbqStatus st = tbq_reader_next (rd->r, &rec);

    if (st == TBQ_OK) {
      reader_took (rd, &rec);
      /* The last record: nobody waits for more. */
      if (atomic_fetch_add (&run->delivered, 1) + 1 == total)
        kick_everyone (run);
      continue;
    }
    CHECK_STATUS (st, TBQ_EMPTY);
    if (atomic_load (&run->delivered) == total)
      break;
    /* Half the readers wait with the split wait, the others plainly. */
    if (rd->id % 2 == 0) {
      st = tbq_reader_wait (rd->r, EVENTUALLY_NS);
    } else {
      uint32_t key = tbq_reader_prepare_wait (rd->r);

      st = tbq_reader_peek (rd->r, &rec);
      if (st == TBQ_EMPTY)
        st = tbq_reader_sleep (rd->r, key, EVENTUALLY_NS);
    }
    if (st == TBQ_TIMEOUT && atomic_load (&run->delivered) < total) {
      printf ("# reader %u: nothing for %d s, %" PRIu64 " of %" PRIu64
          " delivered\n", rd->id, (int) (EVENTUALLY_NS / SEC_NS),
          atomic_load (&run->delivered), total);
      CHECK (0);
    }
  }
  for (k = 0; k < rd->n_kept && k < 8; k++)
    kept_check_and_drop (rd, &rd->kept[k]);
  return NULL;
}

/* `n_writers` writers and `n_readers` readers move `per_writer` records
 * each through a queue of `cfg`; every check of the file's top. */
static void
run_through (TbqConfig * cfg, uint16_t n_writers, uint16_t n_readers,
    uint64_t per_writer)
{
  Run *run = calloc (1, sizeof *run);
  uint64_t total = per_writer * n_writers, sum = 0, batches = 0, i;
  TbqStats st;
  uint16_t k;

  run->n_writers = n_writers;
  run->n_readers = n_readers;
  run->per_writer = per_writer;
  run->q = queue_new_or_fail (cfg);
  for (k = 0; k < n_writers; k++)
    run->seen[k] = calloc (per_writer, 1);
  /* Open every reader before any runs: the last delivery kicks them all. */
  for (k = 0; k < n_readers; k++) {
    run->r[k].run = run;
    run->r[k].id = k;
    CHECK_OK (tbq_reader_new (run->q, &run->r[k].r));
  }
  CHECK_OK (tbq_queue_start (run->q));
  for (k = 0; k < n_readers; k++)
    CHECK (pthread_create (&run->r[k].th, NULL, reader_main, &run->r[k]) == 0);
  for (k = 0; k < n_writers; k++) {
    run->w[k].run = run;
    run->w[k].id = k;
    CHECK (pthread_create (&run->w[k].th, NULL, writer_main, &run->w[k]) == 0);
  }
  for (k = 0; k < n_writers; k++) {
    pthread_join (run->w[k].th, NULL);
    CHECK_OK (run->w[k].st);
  }
  for (k = 0; k < n_readers; k++) {
    TbqReaderStats rs;

    pthread_join (run->r[k].th, NULL);
    tbq_reader_get_stats (run->r[k].r, &rs);
    CHECK_EQ (rs.records_out, run->r[k].got);
    printf ("# reader %u: %" PRIu64 " records in %" PRIu64 " batches, %"
        PRIu64 " claim waits\n", k, rs.records_out, rs.batches,
        rs.claim_waits);
    sum += rs.records_out;
    batches += rs.batches;
    /* A batch never holds more than reader_batch records. */
    CHECK (rs.batches * cfg->reader_batch >= rs.records_out);
  }
  /* The union is exactly the input. */
  CHECK_EQ (sum, total);
  for (k = 0; k < n_writers; k++)
    for (i = 0; i < per_writer; i++)
      if (atomic_load (&run->seen[k][i]) != 1) {
        printf ("# writer %u record %" PRIu64 " delivered %u times\n", k, i,
            atomic_load (&run->seen[k][i]));
        CHECK (0);
      }
  st = stats_of (run->q);
  CHECK_EQ (st.records_in, total);
  CHECK_EQ (st.records_out, total);
  CHECK_EQ (st.reader_batches, batches);
  CHECK_EQ (st.readers, n_readers);
  for (k = 0; k < n_readers; k++)
    tbq_reader_free (run->r[k].r);
  CHECK_EQ (stats_of (run->q).readers, 0);
  /* Counters of freed readers are kept. */
  CHECK_EQ (stats_of (run->q).records_out, total);
  tbq_queue_free (run->q, NULL, NULL);
  for (k = 0; k < n_writers; k++)
    free (run->seen[k]);
  free (run);
}

static void
one_writer_two_readers_deliver_every_record_once (void)
{
  TbqConfig cfg = readers_config (2);

  run_through (&cfg, 1, 2, scaled (300000));
}

static void
one_writer_three_readers_deliver_every_record_once (void)
{
  TbqConfig cfg = readers_config (3);

  cfg.reader_batch = 7;
  run_through (&cfg, 1, 3, scaled (300000));
}

static void
one_writer_eight_readers_deliver_every_record_once (void)
{
  TbqConfig cfg = readers_config (8);

  run_through (&cfg, 1, 8, scaled (300000));
}

static void
four_writers_four_readers_keep_each_writers_order_per_reader (void)
{
  TbqConfig cfg = readers_config (4);

  run_through (&cfg, 4, 4, scaled (100000));
}

static void
on_demand_wake_and_coalescing_with_several_readers (void)
{
  TbqConfig cfg = readers_config (3);

  cfg.wake = TBQ_WAKE_ON_DEMAND;
  run_through (&cfg, 2, 3, scaled (60000));
  cfg.max_coalesce_ns = 50000;
  run_through (&cfg, 2, 3, scaled (60000));
}

static void
batches_of_one_record (void)
{
  TbqConfig cfg = readers_config (3);

  cfg.reader_batch = 1;
  run_through (&cfg, 2, 3, scaled (30000));
}

/* ---- claiming ---- */

/* A queue with `n` records of writer 0 moved into the sink layer, no
 * copier thread (the sink pool grows to hold them: 20000 records are about
 * 8 MB). */
static TbqQueue *
queue_with_records (TbqConfig * cfg, uint64_t n)
{
  TbqQueue *q;
  TbqWriter *w;
  unsigned char *buf = malloc (LARGE_MAX + 1200);
  uint64_t i;

  cfg->sink.max_blocks = 4096;
  q = queue_new_or_fail (cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  for (i = 0; i < n; i++) {
    fill_rec (buf, 0, i);
    CHECK_OK (tbq_writer_write (w, 0, buf, size_of (0, i)));
    /* Before the source pool (4 blocks of 2 KiB) is full: the copier
     * runs on this thread. */
    if (i % 8 == 7)
      copier_step_or_fail (q);
  }
  tbq_writer_flush (w);
  CHECK_OK (tbq_writer_sync (w, EVENTUALLY_NS));
  copier_step_or_fail (q);
  tbq_writer_close (w);
  free (buf);
  return q;
}

/* A queue with records carrying 0 .. n - 1 (8 bytes each: a sink block of
 * 8 KiB holds 508 of them), moved into the sink layer. */
static TbqQueue *
queue_with_seqs (TbqConfig * cfg, uint64_t n)
{
  TbqQueue *q = queue_new_or_fail (cfg);
  TbqWriter *w;
  uint64_t i;

  CHECK_OK (tbq_writer_new (q, &w));
  for (i = 0; i < n; i++) {
    CHECK_OK (write_seq (w, 1, i));
    copier_step_or_fail (q);
  }
  tbq_writer_close (w);
  copier_step_or_fail (q);
  return q;
}

/* Take the next record of `r` and check it is writer 0's record `i`. */
static void
expect_index (TbqReader * r, uint64_t i)
{
  TbqRecord rec;

  CHECK_OK (tbq_reader_next (r, &rec));
  CHECK_EQ (check_rec (&rec, 1), i);
}

typedef struct
{
  TbqReader *r;
  uint64_t got;
  uint64_t last;                /* index + 1 */
  uint64_t stop_at;             /* the total the readers stop at */
  _Atomic uint64_t *delivered;
} Drain;

static void *
drain_main (void *arg)
{
  Drain *d = arg;
  TbqRecord rec;

  while (atomic_load (d->delivered) < d->stop_at) {
    TbqStatus st = tbq_reader_next (d->r, &rec);

    if (st == TBQ_OK) {
      uint64_t i = check_rec (&rec, 1);

      CHECK (i + 1 > d->last);
      d->last = i + 1;
      d->got++;
      atomic_fetch_add (d->delivered, 1);
      continue;
    }
    /* Everything was written before: what is not claimable now is in
     * another reader's batch. */
    CHECK_STATUS (st, TBQ_EMPTY);
    sched_yield ();
  }
  return NULL;
}

static void
a_stalled_reader_holding_nothing_stops_nobody (void)
{
  TbqConfig cfg = readers_config (3);
  uint64_t n = scaled (20000);
  TbqQueue *q = queue_with_records (&cfg, n);
  _Atomic uint64_t delivered = 0;
  TbqReader *stalled;
  Drain d[2] = { { 0 } };
  TbqReaderStats rs;
  TbqRecord rec;
  int k;

  /* Open, and then does nothing at all while the others read. */
  CHECK_OK (tbq_reader_new (q, &stalled));
  for (k = 0; k < 2; k++) {
    CHECK_OK (tbq_reader_new (q, &d[k].r));
    d[k].delivered = &delivered;
    d[k].stop_at = n;
  }
  {
    pthread_t th[2];

    for (k = 0; k < 2; k++)
      CHECK (pthread_create (&th[k], NULL, drain_main, &d[k]) == 0);
    for (k = 0; k < 2; k++)
      pthread_join (th[k], NULL);
  }
  CHECK_EQ (d[0].got + d[1].got, n);
  CHECK_STATUS (tbq_reader_next (stalled, &rec), TBQ_EMPTY);
  tbq_reader_get_stats (stalled, &rs);
  CHECK_EQ (rs.records_out, 0);
  CHECK_EQ (rs.batches, 0);
  tbq_queue_free (q, NULL, NULL);
}

static void
a_stalled_reader_holding_a_batch_keeps_only_that_batch (void)
{
  TbqConfig cfg = readers_config (3);
  uint64_t n = scaled (20000), i;
  TbqQueue *q;
  _Atomic uint64_t delivered = 0;
  TbqReader *stalled;
  Drain d[2] = { { 0 } };
  pthread_t th[2];
  TbqRecord rec;
  int k;

  cfg.reader_batch = 8;
  q = queue_with_records (&cfg, n);
  /* The first claim: records 0 .. 7 (the first sink block holds more);
   * the reader takes one and stalls with 7 in its batch. */
  CHECK_OK (tbq_reader_new (q, &stalled));
  expect_index (stalled, 0);
  for (k = 0; k < 2; k++) {
    CHECK_OK (tbq_reader_new (q, &d[k].r));
    d[k].delivered = &delivered;
    d[k].stop_at = n - 8;
    CHECK (pthread_create (&th[k], NULL, drain_main, &d[k]) == 0);
  }
  for (k = 0; k < 2; k++)
    pthread_join (th[k], NULL);
  /* The others got everything but the stalled reader's batch. */
  CHECK_EQ (d[0].got + d[1].got, n - 8);
  for (k = 0; k < 2; k++)
    CHECK_STATUS (tbq_reader_next (d[k].r, &rec), TBQ_EMPTY);
  /* And the stalled reader, once it goes on, the rest of its batch. */
  for (i = 1; i < 8; i++)
    expect_index (stalled, i);
  CHECK_STATUS (tbq_reader_next (stalled, &rec), TBQ_EMPTY);
  tbq_queue_free (q, NULL, NULL);
}

static void
a_batch_never_passes_a_sink_block_nor_the_batch_size (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqReader *r, *other;
  TbqReaderStats rs;
  TbqWriter *w;
  uint64_t i, n = 240;

  /* 256-byte sink blocks hold 12 records of 8 bytes (16 bytes each). */
  small_config (&cfg, 256);
  cfg.sink.max_blocks = 64;
  cfg.max_readers = 2;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  CHECK_OK (tbq_reader_new (q, &r));
  CHECK_OK (tbq_reader_new (q, &other));
  for (i = 0; i < n; i++) {
    CHECK_OK (write_seq (w, 1, i));
    copier_step_or_fail (q);
  }
  /* A batch of up to 32 stops at each sink block's end. */
  for (i = 0; i < n / 2; i++)
    expect_seq (r, i);
  tbq_reader_get_stats (r, &rs);
  CHECK (rs.batches >= n / 2 / 12);
  /* Five at a time from the next claim on (the current batch ends
   * first). */
  CHECK_OK (tbq_reader_set_batch (other, 5));
  CHECK_STATUS (tbq_reader_set_batch (other, 0), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_reader_set_batch (other, TBQ_READER_BATCH_MAX + 1),
      TBQ_INVALID_ARGUMENT);
  for (i = n / 2; i < n; i++)
    expect_seq (other, i);
  tbq_reader_get_stats (other, &rs);
  CHECK_EQ (rs.records_out, n / 2);
  CHECK (rs.batches >= n / 2 / 5);
  tbq_queue_free (q, NULL, NULL);
}

static void
peek_claims_and_next_takes_the_same_record (void)
{
  TbqConfig cfg = readers_config (2);
  TbqQueue *q = queue_with_seqs (&cfg, 100);
  TbqReader *a, *b;
  TbqRecord rec;

  CHECK_OK (tbq_reader_new (q, &a));
  CHECK_OK (tbq_reader_new (q, &b));
  CHECK_OK (tbq_reader_peek (a, &rec));
  CHECK_EQ (record_seq (&rec), 0);
  CHECK_OK (tbq_reader_peek (a, &rec));
  CHECK_EQ (record_seq (&rec), 0);
  /* `a` holds records 0 .. 31 (a batch of the default 32): `b` claims
   * from 32. */
  expect_seq (b, 32);
  expect_seq (a, 0);
  expect_seq (a, 1);
  tbq_queue_free (q, NULL, NULL);
}

static void
a_freed_readers_batch_goes_to_the_next_claim (void)
{
  TbqConfig cfg = readers_config (2);
  TbqQueue *q = queue_with_seqs (&cfg, 200);
  TbqReader *a, *b, *third;
  uint64_t i;

  CHECK_OK (tbq_reader_new (q, &a));
  CHECK_OK (tbq_reader_new (q, &b));
  expect_seq (a, 0);
  expect_seq (a, 1);
  expect_seq (b, 32);
  /* `a` gives records 2 .. 31 back, and its slot. */
  tbq_reader_free (a);
  CHECK_OK (tbq_reader_new (q, &a));
  CHECK_STATUS (tbq_reader_new (q, &third), TBQ_BUSY);
  /* `b` takes its own batch first; the next claim, anyone's, takes the
   * batch given back, before the cursor's records. */
  for (i = 33; i < 64; i++)
    expect_seq (b, i);
  for (i = 2; i < 32; i++)
    expect_seq (b, i);
  expect_seq (a, 64);
  tbq_queue_free (q, NULL, NULL);
}

/* ---- waits ---- */

typedef struct
{
  TbqReader *r;
  bool split;                   /* prepare_wait, peek, sleep */
  int64_t timeout;
  TbqStatus st;
  pthread_t th;
} Waiter;

static void *
waiter_main (void *arg)
{
  Waiter *wt = arg;

  if (wt->split) {
    uint32_t key = tbq_reader_prepare_wait (wt->r);
    TbqRecord rec;

    wt->st = tbq_reader_peek (wt->r, &rec);
    if (wt->st == TBQ_EMPTY)
      wt->st = tbq_reader_sleep (wt->r, key, wt->timeout);
  } else {
    wt->st = tbq_reader_wait (wt->r, wt->timeout);
  }
  return NULL;
}

/* `n` readers of `q` wait on threads of their own (every other one with
 * the split wait); returns once all of them sleep. */
static void
waiters_start (TbqQueue * q, Waiter * wt, int n, int64_t timeout)
{
  uint64_t sleeps = stats_of (q).reader_sleeps;
  int k;

  for (k = 0; k < n; k++) {
    wt[k].split = k % 2 == 1;
    wt[k].timeout = timeout;
    wt[k].st = TBQ_EMPTY;
    CHECK (pthread_create (&wt[k].th, NULL, waiter_main, &wt[k]) == 0);
  }
  /* One waits for the queue, the others for it: each sleep is counted
   * once the sleeper is registered (any wake from now on reaches it). */
  WAIT_UNTIL (stats_of (q).reader_sleeps >= sleeps + (uint64_t) n);
}

static TbqQueue *
waiting_queue (TbqWakePolicy wake, TbqReader ** r, int n)
{
  TbqConfig cfg = readers_config ((uint32_t) n);
  TbqQueue *q;
  int k;

  cfg.wake = wake;
  q = queue_new_or_fail (&cfg);
  for (k = 0; k < n; k++)
    CHECK_OK (tbq_reader_new (q, &r[k]));
  CHECK_OK (tbq_queue_start (q));
  return q;
}

static void
waiting_readers_all_wake_on_interrupt (void)
{
  TbqWakePolicy policies[] = { TBQ_WAKE_IMMEDIATE, TBQ_WAKE_ON_DEMAND };
  int p, k, n = 4;

  for (p = 0; p < 2; p++) {
    TbqReader *r[4];
    Waiter wt[4];
    TbqQueue *q = waiting_queue (policies[p], r, n);

    for (k = 0; k < n; k++)
      wt[k].r = r[k];
    waiters_start (q, wt, n, -1);
    tbq_queue_interrupt (q);
    for (k = 0; k < n; k++) {
      pthread_join (wt[k].th, NULL);
      CHECK_STATUS (wt[k].st, TBQ_INTERRUPTED);
    }
    /* Every later wait too, until resumed. */
    CHECK_STATUS (tbq_reader_wait (r[0], -1), TBQ_INTERRUPTED);
    tbq_queue_resume (q);
    CHECK_STATUS (tbq_reader_wait (r[1], 0), TBQ_TIMEOUT);
    tbq_queue_free (q, NULL, NULL);
  }
}

static void
waiting_readers_all_wake_on_a_record (void)
{
  TbqWakePolicy policies[] = { TBQ_WAKE_IMMEDIATE, TBQ_WAKE_ON_DEMAND };
  int p, k, n = 4;

  for (p = 0; p < 2; p++) {
    TbqReader *r[4];
    Waiter wt[4];
    TbqQueue *q = waiting_queue (policies[p], r, n);
    TbqWriter *w;
    TbqRecord rec;

    CHECK_OK (tbq_writer_new (q, &w));
    for (k = 0; k < n; k++)
      wt[k].r = r[k];
    waiters_start (q, wt, n, -1);
    /* Nobody takes it: every reader sees it there. */
    CHECK_OK (write_seq (w, 1, 42));
    tbq_writer_flush (w);
    for (k = 0; k < n; k++) {
      pthread_join (wt[k].th, NULL);
      CHECK_STATUS (wt[k].st, TBQ_OK);
    }
    CHECK_OK (tbq_reader_next (r[2], &rec));
    CHECK_EQ (record_seq (&rec), 42);
    tbq_queue_free (q, NULL, NULL);
  }
}

static void
a_kick_ends_one_readers_wait_wherever_it_waits (void)
{
  int k, n = 3, which;

  /* Kick each in turn: one of them waits for the queue, the others for
   * it. */
  for (which = 0; which < n; which++) {
    TbqReader *r[3];
    Waiter wt[3];
    TbqQueue *q = waiting_queue (TBQ_WAKE_ON_DEMAND, r, n);

    for (k = 0; k < n; k++)
      wt[k].r = r[k];
    waiters_start (q, wt, n, -1);
    tbq_reader_wake (r[which]);
    pthread_join (wt[which].th, NULL);
    CHECK_STATUS (wt[which].st, TBQ_OK);
    tbq_queue_interrupt (q);
    for (k = 0; k < n; k++) {
      if (k == which)
        continue;
      pthread_join (wt[k].th, NULL);
      /* The kick was r[which]'s alone. */
      CHECK_STATUS (wt[k].st, TBQ_INTERRUPTED);
    }
    tbq_queue_free (q, NULL, NULL);
  }
}

static void
timeouts_of_waiting_readers_are_their_own (void)
{
  TbqReader *r[3];
  TbqQueue *q = waiting_queue (TBQ_WAKE_IMMEDIATE, r, 3);
  Waiter wt[3];
  int k;

  for (k = 0; k < 3; k++)
    wt[k].r = r[k];
  waiters_start (q, wt, 3, 20 * MS_NS);
  for (k = 0; k < 3; k++) {
    pthread_join (wt[k].th, NULL);
    CHECK_STATUS (wt[k].st, TBQ_TIMEOUT);
  }
  tbq_queue_free (q, NULL, NULL);
}

typedef struct
{
  TbqReader *r;
  int style;
  _Atomic uint64_t *got;
  _Atomic int *stop;
  pthread_t th;
} Looper;

static void *
looper_main (void *arg)
{
  Looper *l = arg;

  while (!atomic_load (l->stop)) {
    TbqRecord rec;
    TbqStatus st = tbq_reader_next (l->r, &rec);

    if (st == TBQ_OK) {
      atomic_fetch_add (l->got, 1);
      continue;
    }
    CHECK_STATUS (st, TBQ_EMPTY);
    if (l->style == 0) {
      st = tbq_reader_wait (l->r, -1);
    } else {
      uint32_t key = tbq_reader_prepare_wait (l->r);

      st = tbq_reader_peek (l->r, &rec);
      if (st == TBQ_EMPTY)
        st = tbq_reader_sleep (l->r, key, -1);
    }
    CHECK (st == TBQ_OK || st == TBQ_EMPTY);
  }
  return NULL;
}

/* Rounds of one record each: the next is written only once a reader took
 * this one.  A lost wake-up leaves a record untaken: WAIT_UNTIL fails. */
static void
stress_rounds (TbqWakePolicy wake, int64_t coalesce, int64_t rounds)
{
  TbqConfig cfg = readers_config (3);
  TbqQueue *q;
  TbqWriter *w;
  Looper l[3];
  _Atomic uint64_t got = 0;
  _Atomic int stop = 0;
  uint64_t want = 0;
  int64_t k;
  int i;

  cfg.wake = wake;
  cfg.max_coalesce_ns = coalesce;
  cfg.reader_batch = 2;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, &w));
  for (i = 0; i < 3; i++) {
    l[i].style = i % 2;
    l[i].got = &got;
    l[i].stop = &stop;
    CHECK_OK (tbq_reader_new (q, &l[i].r));
  }
  CHECK_OK (tbq_queue_start (q));
  for (i = 0; i < 3; i++)
    CHECK (pthread_create (&l[i].th, NULL, looper_main, &l[i]) == 0);
  for (k = 0; k < rounds; k++) {
    CHECK_OK (write_seq (w, 1, want++));
    /* Every other round a burst of two: one claim may take both. */
    if (k % 2 == 1)
      CHECK_OK (write_seq (w, 1, want++));
    tbq_writer_flush (w);
    WAIT_UNTIL (atomic_load (&got) == want);
  }
  atomic_store (&stop, 1);
  for (i = 0; i < 3; i++)
    tbq_reader_wake (l[i].r);
  for (i = 0; i < 3; i++)
    pthread_join (l[i].th, NULL);
  tbq_queue_free (q, NULL, NULL);
}

static void
no_lost_wake_up_over_many_rounds (void)
{
  int64_t rounds = (int64_t) scaled (4000);

  stress_rounds (TBQ_WAKE_IMMEDIATE, 0, rounds);
  stress_rounds (TBQ_WAKE_ON_DEMAND, 0, rounds);
  stress_rounds (TBQ_WAKE_ON_DEMAND, 20000, rounds / 4);
}

/* ---- callback consumers ---- */

typedef struct
{
  uint16_t id;
  uint64_t last;
  _Atomic uint64_t got;
  _Atomic unsigned char *seen;
} Consumed;

static void
consume (const TbqRecord * rec, void *data)
{
  Consumed *c = data;
  uint64_t i = check_rec (rec, 1);

  CHECK (i + 1 > c->last);
  c->last = i + 1;
  CHECK_EQ (atomic_fetch_add (&c->seen[i], 1), 0);
  atomic_fetch_add (&c->got, 1);
}

static void
a_callback_consumer_on_each_of_several_readers (void)
{
  TbqConfig cfg = readers_config (3);
  TbqQueue *q = queue_new_or_fail (&cfg);
  uint64_t n = scaled (100000), i, sum;
  _Atomic unsigned char *seen = calloc (n, 1);
  unsigned char *buf = malloc (LARGE_MAX + 1200);
  Consumed c[3];
  TbqReader *r[3];
  TbqWriter *w;
  int k;

  CHECK_OK (tbq_writer_new (q, &w));
  for (k = 0; k < 3; k++) {
    c[k].id = (uint16_t) k;
    c[k].last = 0;
    atomic_init (&c[k].got, 0);
    c[k].seen = seen;
    CHECK_OK (tbq_reader_new (q, &r[k]));
    CHECK_OK (tbq_consumer_start (r[k], consume, &c[k]));
    CHECK_STATUS (tbq_consumer_start (r[k], consume, &c[k]), TBQ_BUSY);
  }
  CHECK_OK (tbq_queue_start (q));
  for (i = 0; i < n; i++) {
    fill_rec (buf, 0, i);
    CHECK_OK (tbq_writer_write (w, 0, buf, size_of (0, i)));
  }
  tbq_writer_flush (w);
  WAIT_UNTIL (atomic_load (&c[0].got) + atomic_load (&c[1].got)
      + atomic_load (&c[2].got) == n);
  for (k = 0; k < 3; k++)
    tbq_consumer_stop (r[k]);
  for (sum = 0, k = 0; k < 3; k++)
    sum += atomic_load (&c[k].got);
  CHECK_EQ (sum, n);
  for (i = 0; i < n; i++)
    CHECK_EQ (atomic_load (&seen[i]), 1);
  /* A consumer running at free is stopped by it. */
  CHECK_OK (tbq_consumer_start (r[1], consume, &c[1]));
  tbq_queue_free (q, NULL, NULL);
  free (buf);
  free (seen);
}

/* ---- discard and free ---- */

typedef struct
{
  uint64_t n;
  _Atomic unsigned char *delivered;     /* per record: taken by a reader */
  unsigned char *released;      /* per record: released */
  uint64_t releases;
  uint64_t last;                /* index + 1 of the last released */
  bool in_order;
} Ledger;

static void
release_rec (uint16_t type, const void *data, uint32_t size, void *user_data)
{
  Ledger *l = user_data;
  TbqRecord rec = { data, size, type, NULL };
  uint64_t i = check_rec (&rec, 1);

  CHECK (i < l->n);
  CHECK_EQ (l->delivered[i], 0);
  CHECK_EQ (l->released[i], 0);
  l->released[i] = 1;
  l->releases++;
  /* Oldest first: readers' batches in claim order, then the rest. */
  if (i + 1 <= l->last)
    l->in_order = false;
  l->last = i + 1;
}

static void
ledger_take (Ledger * l, TbqReader * r, int n)
{
  int k;

  for (k = 0; k < n; k++) {
    TbqRecord rec;

    CHECK_OK (tbq_reader_next (r, &rec));
    l->delivered[check_rec (&rec, 1)] = 1;
  }
}

static void
ledger_consume (const TbqRecord * rec, void *data)
{
  Ledger *l = data;

  atomic_store (&l->delivered[check_rec (rec, 1)], 1);
}

static void
ledger_check_once (Ledger * l)
{
  uint64_t i;

  for (i = 0; i < l->n; i++)
    if (l->delivered[i] + l->released[i] != 1) {
      printf ("# record %" PRIu64 ": delivered %u, released %u\n", i,
          l->delivered[i], l->released[i]);
      CHECK (0);
    }
}

/* Readers hold batches partly taken, one reader gave its batch back. */
static TbqQueue *
queue_with_batches_out (Ledger * l, TbqReader ** r, uint64_t n)
{
  TbqConfig cfg = readers_config (4);
  TbqQueue *q;
  TbqReader *gone;

  cfg.reader_batch = 16;
  q = queue_with_records (&cfg, n);
  memset (l, 0, sizeof *l);
  l->n = n;
  l->delivered = calloc (n, 1);
  l->released = calloc (n, 1);
  l->in_order = true;
  CHECK_OK (tbq_reader_new (q, &r[0]));
  CHECK_OK (tbq_reader_new (q, &r[1]));
  CHECK_OK (tbq_reader_new (q, &r[2]));
  CHECK_OK (tbq_reader_new (q, &gone));
  ledger_take (l, r[0], 3);
  ledger_take (l, r[1], 1);
  ledger_take (l, gone, 5);
  ledger_take (l, r[2], 16);    /* read out: holds nothing unread */
  ledger_take (l, r[0], 20);    /* a second batch */
  tbq_reader_free (gone);
  return q;
}

static void
a_discard_releases_unread_batches_exactly_once (void)
{
  Ledger l;
  TbqReader *r[3];
  uint64_t n = 3000, before;
  TbqQueue *q = queue_with_batches_out (&l, r, n);
  TbqRecord rec;

  before = stats_of (q).records_discarded;
  tbq_queue_discard (q, release_rec, &l);
  CHECK_EQ (l.releases, n - 45);
  CHECK_EQ (stats_of (q).records_discarded - before, n - 45);
  CHECK (l.in_order);
  ledger_check_once (&l);
  /* The readers hold nothing now, and read on. */
  for (int k = 0; k < 3; k++)
    CHECK_STATUS (tbq_reader_next (r[k], &rec), TBQ_EMPTY);
  {
    TbqWriter *w;

    CHECK_OK (tbq_writer_new (q, &w));
    CHECK_OK (write_seq (w, 1, 7));
    copier_step_or_fail (q);
    CHECK_OK (tbq_reader_next (r[1], &rec));
    CHECK_EQ (record_seq (&rec), 7);
  }
  tbq_queue_free (q, NULL, NULL);
  free (l.delivered);
  free (l.released);
}

static void
freeing_the_queue_with_readers_open_releases_everything_once (void)
{
  Ledger l;
  TbqReader *r[3];
  uint64_t n = 3000;
  TbqQueue *q = queue_with_batches_out (&l, r, n);

  /* The reader that holds nothing runs a callback consumer: free stops it
   * first, and it delivers what it can claim meanwhile (the records after
   * the cursor, and the batch given back); the batches the others hold
   * are released. */
  CHECK_OK (tbq_consumer_start (r[2], ledger_consume, &l));
  tbq_queue_free (q, release_rec, &l);
  CHECK (l.releases > 0);
  CHECK (l.in_order);
  ledger_check_once (&l);
  free (l.delivered);
  free (l.released);
}

/* ---- opening ---- */

static void
a_reader_beyond_max_readers_is_refused (void)
{
  TbqConfig cfg = readers_config (3);
  TbqQueue *q = queue_new_or_fail (&cfg);
  TbqReader *r[4];
  int k;

  for (k = 0; k < 3; k++)
    CHECK_OK (tbq_reader_new (q, &r[k]));
  CHECK_STATUS (tbq_reader_new (q, &r[3]), TBQ_BUSY);
  CHECK_EQ (stats_of (q).readers, 3);
  /* A slot freed is a slot again. */
  tbq_reader_free (r[1]);
  CHECK_OK (tbq_reader_new (q, &r[1]));
  CHECK_STATUS (tbq_reader_new (q, &r[3]), TBQ_BUSY);
  tbq_queue_free (q, NULL, NULL);
  /* With the default of 1: the second reader, as always. */
  cfg.max_readers = 1;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_reader_new (q, &r[0]));
  CHECK_STATUS (tbq_reader_new (q, &r[1]), TBQ_BUSY);
  CHECK_EQ (stats_of (q).readers, 1);
  tbq_queue_free (q, NULL, NULL);
}

TAP_MAIN (TAP_TEST (one_writer_two_readers_deliver_every_record_once),
    TAP_TEST (one_writer_three_readers_deliver_every_record_once),
    TAP_TEST (one_writer_eight_readers_deliver_every_record_once),
    TAP_TEST (four_writers_four_readers_keep_each_writers_order_per_reader),
    TAP_TEST (on_demand_wake_and_coalescing_with_several_readers),
    TAP_TEST (batches_of_one_record),
    TAP_TEST (a_stalled_reader_holding_nothing_stops_nobody),
    TAP_TEST (a_stalled_reader_holding_a_batch_keeps_only_that_batch),
    TAP_TEST (a_batch_never_passes_a_sink_block_nor_the_batch_size),
    TAP_TEST (peek_claims_and_next_takes_the_same_record),
    TAP_TEST (a_freed_readers_batch_goes_to_the_next_claim),
    TAP_TEST (waiting_readers_all_wake_on_interrupt),
    TAP_TEST (waiting_readers_all_wake_on_a_record),
    TAP_TEST (a_kick_ends_one_readers_wait_wherever_it_waits),
    TAP_TEST (timeouts_of_waiting_readers_are_their_own),
    TAP_TEST (no_lost_wake_up_over_many_rounds),
    TAP_TEST (a_callback_consumer_on_each_of_several_readers),
    TAP_TEST (a_discard_releases_unread_batches_exactly_once),
    TAP_TEST (freeing_the_queue_with_readers_open_releases_everything_once),
    TAP_TEST (a_reader_beyond_max_readers_is_refused));
