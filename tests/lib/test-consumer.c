/* Callback consumer: a library thread that hands every record to a
 * callback, in order, and delivers everything queued before it stops.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "lib-test.h"

#include <stdatomic.h>

/* State of the consuming callback (runs on the consumer thread). */
typedef struct
{
  _Atomic uint64_t next;        /* sequence number expected next */
  _Atomic int bad;
} Sink;

static uint32_t
size_of (uint64_t seq)
{
  return 8 + (uint32_t) (mix64 (seq) % 57);
}

static TbqStatus
write_rec (TbqWriter * w, uint64_t seq)
{
  unsigned char buf[64];
  uint32_t size = size_of (seq);

  memcpy (buf, &seq, 8);
  fill_payload (buf + 8, size - 8, seq);
  return tbq_writer_write (w, 1, buf, size);
}

static void
consume_cb (const TbqRecord * rec, void *user_data)
{
  Sink *s = user_data;
  uint64_t want = atomic_load_explicit (&s->next, memory_order_relaxed);
  uint64_t seq;

  if (rec->size < 8) {
    atomic_store (&s->bad, 1);
    return;
  }
  memcpy (&seq, rec->data, 8);
  if (seq != want || rec->size != size_of (seq) || rec->type != 1
      || payload_mismatch ((const unsigned char *) rec->data + 8,
          rec->size - 8, seq) >= 0)
    atomic_store (&s->bad, 1);
  atomic_store_explicit (&s->next, want + 1, memory_order_release);
}

typedef struct
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  Sink sink;
} ConsumerFixture;

static void
fixture_open (ConsumerFixture * f)
{
  TbqConfig cfg;

  small_config (&cfg, 512);
  cfg.source.max_blocks = 4;
  f->q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (f->q, &f->w));
  CHECK_OK (tbq_reader_new (f->q, &f->r));
  atomic_init (&f->sink.next, 0);
  atomic_init (&f->sink.bad, 0);
  CHECK_OK (tbq_queue_start (f->q));
}

static void
fixture_close (ConsumerFixture * f)
{
  tbq_queue_free (f->q, NULL, NULL);
}

static void
consumer_delivers_everything_written_before_stop_in_order (void)
{
  ConsumerFixture f;
  uint64_t round, seq = 0, rounds = scaled (200);

  fixture_open (&f);
  /* Stop right after writing, many times: whatever the copier and the
   * consumer were doing at that moment, nothing written may be left. */
  for (round = 0; round < rounds; round++) {
    uint64_t i, n = mix64 (round) % 3000;

    CHECK_OK (tbq_consumer_start (f.r, consume_cb, &f.sink));
    for (i = 0; i < n; i++)
      CHECK_OK (write_rec (f.w, seq++));
    tbq_consumer_stop (f.r);
    CHECK (!atomic_load (&f.sink.bad));
    CHECK_EQ (atomic_load (&f.sink.next), seq);
  }
  CHECK_EQ (stats_of (f.q).records_out, seq);
  fixture_close (&f);
}

static void
consumer_start_twice_is_busy (void)
{
  ConsumerFixture f;

  fixture_open (&f);
  CHECK_STATUS (tbq_consumer_start (f.r, NULL, NULL), TBQ_INVALID_ARGUMENT);
  CHECK_STATUS (tbq_consumer_start (NULL, consume_cb, &f.sink),
      TBQ_INVALID_ARGUMENT);
  CHECK_OK (tbq_consumer_start (f.r, consume_cb, &f.sink));
  CHECK_STATUS (tbq_consumer_start (f.r, consume_cb, &f.sink), TBQ_BUSY);
  CHECK_OK (write_rec (f.w, 0));
  tbq_consumer_stop (f.r);
  CHECK_EQ (atomic_load (&f.sink.next), 1);
  /* Stopping again, or a consumer never started, is harmless. */
  tbq_consumer_stop (f.r);
  tbq_consumer_stop (NULL);
  fixture_close (&f);
}

static void
consumer_delivers_while_running (void)
{
  ConsumerFixture f;
  uint64_t i;

  fixture_open (&f);
  CHECK_OK (tbq_consumer_start (f.r, consume_cb, &f.sink));
  /* No stop needed for records to arrive. */
  for (i = 0; i < 100; i++) {
    CHECK_OK (write_rec (f.w, i));
    WAIT_UNTIL (atomic_load (&f.sink.next) == i + 1);
  }
  CHECK (!atomic_load (&f.sink.bad));
  tbq_consumer_stop (f.r);
  fixture_close (&f);
}

static void
consumer_pauses_while_interrupted_and_continues_after_resume (void)
{
  ConsumerFixture f;
  uint64_t i;

  fixture_open (&f);
  CHECK_OK (tbq_consumer_start (f.r, consume_cb, &f.sink));
  CHECK_OK (write_rec (f.w, 0));
  WAIT_UNTIL (atomic_load (&f.sink.next) == 1);
  tbq_queue_interrupt (f.q);
  for (i = 1; i < 10; i++)
    CHECK_OK (write_rec (f.w, i));
  tbq_queue_resume (f.q);
  WAIT_UNTIL (atomic_load (&f.sink.next) == 10);
  CHECK (!atomic_load (&f.sink.bad));
  tbq_consumer_stop (f.r);
  fixture_close (&f);
}

static void
consumer_can_be_stopped_while_interrupted (void)
{
  ConsumerFixture f;
  uint64_t i;

  fixture_open (&f);
  CHECK_OK (tbq_consumer_start (f.r, consume_cb, &f.sink));
  CHECK_OK (write_rec (f.w, 0));
  WAIT_UNTIL (atomic_load (&f.sink.next) == 1);
  tbq_queue_interrupt (f.q);
  /* The paused copier cannot move these: stop must not wait for them. */
  for (i = 1; i < 10; i++)
    CHECK_OK (write_rec (f.w, i));
  tbq_consumer_stop (f.r);
  tbq_queue_resume (f.q);
  /* They stayed queued and come with the next consumer. */
  CHECK_OK (tbq_consumer_start (f.r, consume_cb, &f.sink));
  WAIT_UNTIL (atomic_load (&f.sink.next) == 10);
  tbq_consumer_stop (f.r);
  CHECK (!atomic_load (&f.sink.bad));
  fixture_close (&f);
}

static void
freeing_the_reader_or_queue_stops_the_consumer (void)
{
  ConsumerFixture f;
  uint64_t i;

  fixture_open (&f);
  CHECK_OK (tbq_consumer_start (f.r, consume_cb, &f.sink));
  for (i = 0; i < 500; i++)
    CHECK_OK (write_rec (f.w, i));
  /* Freeing the reader stops its consumer, which delivers first. */
  tbq_reader_free (f.r);
  CHECK_EQ (atomic_load (&f.sink.next), 500);
  CHECK_OK (tbq_reader_new (f.q, &f.r));
  CHECK_OK (tbq_consumer_start (f.r, consume_cb, &f.sink));
  for (; i < 1000; i++)
    CHECK_OK (write_rec (f.w, i));
  /* Freeing the queue with the consumer running is fine too. */
  fixture_close (&f);
  CHECK (!atomic_load (&f.sink.bad));
}

TAP_MAIN (TAP_TEST (consumer_delivers_everything_written_before_stop_in_order),
    TAP_TEST (consumer_start_twice_is_busy),
    TAP_TEST (consumer_delivers_while_running),
    TAP_TEST (consumer_pauses_while_interrupted_and_continues_after_resume),
    TAP_TEST (consumer_can_be_stopped_while_interrupted),
    TAP_TEST (freeing_the_reader_or_queue_stops_the_consumer))
