/* Several writers, each on its own thread, into one copier and one reader.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "lib-test.h"

#include <sched.h>
#include <stdatomic.h>

#define MAX_THREADS 8

/* Record of writer `id`, number `seq`: the type tag is the writer, the
 * first 8 bytes the number, the rest derived from both. */
static uint32_t
size_of (uint16_t id, uint64_t seq)
{
  return 8 + (uint32_t) (mix64 (seq * MAX_THREADS + id) % 41);
}

static void
fill_rec (unsigned char *buf, uint16_t id, uint64_t seq)
{
  memcpy (buf, &seq, 8);
  fill_payload (buf + 8, size_of (id, seq) - 8, seq * MAX_THREADS + id);
}

/* Check one record against the per-writer expectations. */
static void
check_rec (const TbqRecord * rec, uint64_t * next, size_t n_writers)
{
  uint64_t seq;

  CHECK (rec->type < n_writers);
  CHECK (rec->size >= 8);
  memcpy (&seq, rec->data, 8);
  if (seq != next[rec->type]) {
    printf ("# writer %u: expected %" PRIu64 ", got %" PRIu64 "\n",
        rec->type, next[rec->type], seq);
    CHECK (0);
  }
  CHECK_EQ (rec->size, size_of (rec->type, seq));
  CHECK (payload_mismatch ((const unsigned char *) rec->data + 8,
          rec->size - 8, seq * MAX_THREADS + rec->type) < 0);
  next[rec->type]++;
}

typedef struct
{
  TbqQueue *q;
  uint16_t id;
  uint64_t n;
  TbqStatus st;
} Producer;

static void *
producer_main (void *arg)
{
  Producer *p = arg;
  TbqWriter *w;
  uint64_t seq = 0;
  unsigned char buf[64];

  /* Writers are opened on the thread that uses them. */
  p->st = tbq_writer_new (p->q, &w);
  if (p->st != TBQ_OK)
    return NULL;
  /* Every writer behaves differently; the per-writer order must hold
   * regardless. */
  if (p->id % 3 == 1)
    tbq_writer_set_publish (w, TBQ_PUBLISH_EVERY_N, 16);
  else if (p->id % 3 == 2)
    tbq_writer_set_publish (w, TBQ_PUBLISH_AT_HANDOFF, 0);
  while (seq < p->n && p->st == TBQ_OK) {
    if (p->id % 2 == 0 && seq % 100 < 50) {
      TbqSession s;
      int k;

      tbq_session_begin (w, &s);
      for (k = 0; k < 10 && seq < p->n; k++, seq++) {
        fill_rec (buf, p->id, seq);
        if (tbq_session_write (&s, p->id, buf, size_of (p->id, seq))
            == TBQ_NO_SPACE) {
          p->st = tbq_session_next_block (&s);
          if (p->st != TBQ_OK)
            break;
          CHECK_OK (tbq_session_write (&s, p->id, buf, size_of (p->id, seq)));
        }
      }
      tbq_session_end (&s);
    } else {
      fill_rec (buf, p->id, seq);
      p->st = tbq_writer_write (w, p->id, buf, size_of (p->id, seq));
      seq++;
    }
  }
  tbq_writer_close (w);
  return NULL;
}

static void
writers_on_several_threads_keep_per_writer_fifo (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqReader *r;
  Producer p[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  uint64_t next[MAX_THREADS] = { 0 }, total = 0, got = 0;
  size_t i, n = 6;

  small_config (&cfg, 512);
  cfg.source.max_blocks = 3;
  cfg.sink.block_size = 2048;
  cfg.sink.max_blocks = 16;
  cfg.block_timeout_ns = EVENTUALLY_NS;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_reader_new (q, &r));
  CHECK_OK (tbq_queue_start (q));
  for (i = 0; i < n; i++) {
    p[i].q = q;
    p[i].id = (uint16_t) i;
    p[i].n = scaled (40000) + i * 7;
    total += p[i].n;
    CHECK (pthread_create (&th[i], NULL, producer_main, &p[i]) == 0);
  }
  while (got < total) {
    TbqRecord rec;

    CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
    check_rec (&rec, next, n);
    got++;
  }
  for (i = 0; i < n; i++) {
    pthread_join (th[i], NULL);
    CHECK_OK (p[i].st);
    CHECK_EQ (next[i], p[i].n);
  }
  /* Closed writers are freed once their records have moved. */
  WAIT_UNTIL (stats_of (q).writers == 0);
  CHECK_EQ (stats_of (q).records_in, total);
  CHECK_EQ (stats_of (q).records_out, total);
  tbq_queue_free (q, NULL, NULL);
}

static void
closed_writer_is_freed_after_its_records_are_moved (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  uint64_t i;

  tbq_config_init (&cfg);
  /* Unflushed records must not be lost by closing. */
  cfg.publish = TBQ_PUBLISH_AT_HANDOFF;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_reader_new (q, &r));
  CHECK_OK (tbq_writer_new (q, &w));
  for (i = 0; i < 10; i++)
    CHECK_OK (write_seq (w, 0, i));
  tbq_writer_close (w);
  /* No copier yet: the writer lives on with its records. */
  CHECK_EQ (stats_of (q).writers, 1);
  CHECK_OK (tbq_queue_start (q));
  for (i = 0; i < 10; i++)
    expect_seq (r, i);
  WAIT_UNTIL (stats_of (q).writers == 0);
  CHECK_EQ (stats_of (q).source.blocks_total, 0);
  tbq_queue_free (q, NULL, NULL);
}

static void
writer_beyond_max_writers_is_refused (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w1, *w2, *w3 = NULL;
  TbqReader *r;

  tbq_config_init (&cfg);
  cfg.max_writers = 2;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_reader_new (q, &r));
  CHECK_OK (tbq_writer_new (q, &w1));
  CHECK_OK (tbq_writer_new (q, &w2));
  CHECK_STATUS (tbq_writer_new (q, &w3), TBQ_LIMIT);
  CHECK (w3 == NULL);
  CHECK_EQ (stats_of (q).writers, 2);
  /* The refused attempt left no source pool behind. */
  CHECK_EQ (stats_of (q).source.blocks_total, 2 * cfg.source.min_blocks);
  /* Once a closed writer is freed its slot is free again. */
  CHECK_OK (write_seq (w1, 0, 1));
  tbq_writer_close (w1);
  CHECK_STATUS (tbq_writer_new (q, &w3), TBQ_LIMIT);
  copier_step_or_fail (q);
  CHECK_OK (tbq_writer_new (q, &w3));
  CHECK_OK (write_seq (w3, 0, 2));
  copier_step_or_fail (q);
  expect_seq (r, 1);
  expect_seq (r, 2);
  tbq_queue_free (q, NULL, NULL);
}

#define CHURN_PER_WRITER 20

typedef struct
{
  TbqQueue *q;
  uint16_t id;
  uint64_t n;
  bool ok;
} Churn;

static void *
churn_main (void *arg)
{
  Churn *c = arg;
  uint64_t seq = 0;
  unsigned char buf[64];

  c->ok = true;
  while (seq < c->n) {
    TbqWriter *w;
    TbqStatus st = tbq_writer_new (c->q, &w);
    int k;

    if (st == TBQ_LIMIT) {
      /* Every slot taken by writers not freed yet: try again. */
      sched_yield ();
      continue;
    }
    if (st != TBQ_OK) {
      c->ok = false;
      return NULL;
    }
    /* Each writer carries records [k * 20, k * 20 + 20) of this thread. */
    for (k = 0; k < CHURN_PER_WRITER && seq < c->n; k++, seq++) {
      fill_rec (buf, c->id, seq);
      if (tbq_writer_write (w, c->id, buf, size_of (c->id, seq)) != TBQ_OK) {
        c->ok = false;
        return NULL;
      }
    }
    tbq_writer_close (w);
  }
  return NULL;
}

static void
short_lived_writers_lose_and_reorder_nothing (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqReader *r;
  Churn c[4];
  pthread_t th[4];
  uint8_t *seen[4];
  uint64_t total = 0, got = 0;
  size_t i, n = 4;

  /* Fewer slots than threads: writers come and go through the slots.
   * Order is per writer: a thread's next writer may overtake the rest of
   * its previous one, so only each writer's share must be in order. */
  tbq_config_init (&cfg);
  cfg.max_writers = 3;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_reader_new (q, &r));
  CHECK_OK (tbq_queue_start (q));
  for (i = 0; i < n; i++) {
    c[i].q = q;
    c[i].id = (uint16_t) i;
    c[i].n = scaled (20000);
    total += c[i].n;
    seen[i] = calloc (c[i].n, 1);
    CHECK (seen[i] != NULL);
    CHECK (pthread_create (&th[i], NULL, churn_main, &c[i]) == 0);
  }
  while (got < total) {
    TbqRecord rec;
    uint64_t seq, first;

    CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
    got++;
    CHECK (rec.type < n);
    memcpy (&seq, rec.data, 8);
    CHECK (seq < c[rec.type].n);
    CHECK (!seen[rec.type][seq]);
    /* Its writer's earlier records came before it. */
    first = seq - seq % CHURN_PER_WRITER;
    if (seq > first)
      CHECK (seen[rec.type][seq - 1]);
    seen[rec.type][seq] = 1;
    CHECK_EQ (rec.size, size_of (rec.type, seq));
    CHECK (payload_mismatch ((const unsigned char *) rec.data + 8,
            rec.size - 8, seq * MAX_THREADS + rec.type) < 0);
  }
  for (i = 0; i < n; i++) {
    pthread_join (th[i], NULL);
    CHECK (c[i].ok);
    free (seen[i]);
  }
  WAIT_UNTIL (stats_of (q).writers == 0);
  CHECK_EQ (stats_of (q).records_out, total);
  tbq_queue_free (q, NULL, NULL);
}

TAP_MAIN (TAP_TEST (writers_on_several_threads_keep_per_writer_fifo),
    TAP_TEST (closed_writer_is_freed_after_its_records_are_moved),
    TAP_TEST (writer_beyond_max_writers_is_refused),
    TAP_TEST (short_lived_writers_lose_and_reorder_nothing))
