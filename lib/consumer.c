/* The callback consumer: a thread of the library's own that takes every
 * record from the reader and hands it to the user's function.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Its state lives in the TbqReader it drives (reader.h); it waits like any
 * reader (pull.c), and pauses while the queue is interrupted.
 */
#include "reader.h"

static bool
consumer_stopping (TbqReader * r)
{
  /* Acquire: pairs with tbq_consumer_stop(): every publish that preceded
   * the stop is seen by the check for what is still owed. */
  return atomic_load_explicit (&r->consumer.stop, memory_order_acquire) != 0;
}

static bool
consumer_resumed_or_stopped (void *arg)
{
  TbqReader *r = arg;

  /* Relaxed: raised before an unconditional wake (block.h, "Events"). */
  return !atomic_load_explicit (r->interrupted, memory_order_relaxed)
      || consumer_stopping (r);
}

static bool
consumer_stopped (void *arg)
{
  return consumer_stopping (arg);
}

/* Stopping: deliver what was published before the stop.  True when all of
 * it has been delivered, or when the rest never can be (TBQ_IO_ERROR: a
 * unit of the spill file cannot be read back). */
static bool
consumer_finish (TbqReader * r)
{
  TbqRecord rec;

  /* Past the error nothing comes, whatever the copier still owes (it may
   * owe for ever: the budget fills behind the error). */
  if (tbq_reader_peek (r, &rec) == TBQ_IO_ERROR)
    return true;
  if (tbq_copier_thread_owes (r->copier)) {
    /* The copier thread still moves some: wait for it (the timeout
     * re-checks whether it still owes anything). */
    tbq_reader_wait (r, 1000000);
    return false;
  }
  /* Owing nothing, it made visible all it moved: what is not visible now
   * was never published. */
  if (tbq_reader_next (r, &rec) != TBQ_OK)
    return true;
  r->consumer.fn (&rec, r->consumer.data);
  return false;
}

/* Paused by tbq_queue_interrupt(): sleep until resumed or stopped. */
static void
consumer_pause (TbqReader * r)
{
  tbq_wait (&r->wake->reader_ev, NULL, 0, consumer_resumed_or_stopped, r, -1);
}

/* The reader stands at a unit of the spill file that cannot be read back
 * (tbq_queue_take_error() says why): nothing after it is delivered, and
 * waiting for records would return at once (the reader is "ready" with
 * its error).  Sleep until stopped; an interrupt pauses as usual (a
 * discard may follow it, after which the reader reads again). */
static void
consumer_stuck (TbqReader * r)
{
  if (tbq_wait (&r->wake->reader_ev, r->interrupted, 0, consumer_stopped, r,
          -1) == TBQ_INTERRUPTED)
    consumer_pause (r);
}

static void *
consumer_main (void *arg)
{
  TbqReader *r = arg;
  TbqRecord rec;
  TbqStatus st;

  for (;;) {
    while ((st = tbq_reader_next (r, &rec)) == TBQ_OK)
      r->consumer.fn (&rec, r->consumer.data);
    if (consumer_stopping (r)) {
      if (consumer_finish (r))
        break;
      continue;
    }
    if (st == TBQ_IO_ERROR)
      consumer_stuck (r);
    else if (tbq_reader_wait (r, -1) == TBQ_INTERRUPTED)
      consumer_pause (r);
  }
  return NULL;
}

TbqStatus
tbq_consumer_start (TbqReader * r, TbqConsumeFunc cb, void *user_data)
{
  if (r == NULL || cb == NULL)
    return TBQ_INVALID_ARGUMENT;
  if (r->consumer.running)
    return TBQ_BUSY;
  r->consumer.fn = cb;
  r->consumer.data = user_data;
  /* Relaxed: the thread is created after it (pthread_create orders). */
  atomic_store_explicit (&r->consumer.stop, 0, memory_order_relaxed);
  if (pthread_create (&r->consumer.thread, NULL, consumer_main, r) != 0)
    return TBQ_NO_MEMORY;
  r->consumer.running = true;
  return TBQ_OK;
}

void
tbq_consumer_stop (TbqReader * r)
{
  if (r == NULL || !r->consumer.running)
    return;
  /* Release: pairs with consumer_stopping(). */
  atomic_store_explicit (&r->consumer.stop, 1, memory_order_release);
  /* A waiting consumer returns (the kick) and sees the flag. */
  tbq_reader_wake (r);
  pthread_join (r->consumer.thread, NULL);
  r->consumer.running = false;
}
