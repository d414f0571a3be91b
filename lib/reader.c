/* The reader: takes sink blocks in FIFO order and iterates their records.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The reader holds one reference to the sink block it is in; it drops it when
 * it moves past a sealed, fully read block.  Zero-copy consumers take more
 * references with tbq_block_ref().
 */
#include "tbq-private.h"

#include <stdlib.h>

TbqStatus
tbq_reader_new (TbqQueue * q, TbqReader ** out)
{
  TbqReader *r;

  if (q == NULL || out == NULL)
    return TBQ_INVALID_ARGUMENT;
  pthread_mutex_lock (&q->lock);
  if (q->reader != NULL) {
    pthread_mutex_unlock (&q->lock);
    return TBQ_BUSY;
  }
  r = calloc (1, sizeof *r);
  if (r == NULL) {
    pthread_mutex_unlock (&q->lock);
    return TBQ_NO_MEMORY;
  }
  r->q = q;
  q->reader = r;
  pthread_mutex_unlock (&q->lock);
  *out = r;
  return TBQ_OK;
}

void
tbq_reader_free (TbqReader * r)
{
  TbqQueue *q;

  if (r == NULL)
    return;
  q = r->q;
  if (r->consumer_running)
    tbq_consumer_stop (r);
  pthread_mutex_lock (&q->lock);
  q->reader = NULL;
  pthread_mutex_unlock (&q->lock);
  free (r);
}

/* Next record of the sink layer, without counting it. */
static inline TbqStatus
reader_take (TbqQueue * q, TbqRecord * rec)
{
  TbqBlock *b = q->rd_blk;
  uint32_t off = q->rd_off;
  const TbqRecordHeader *h;

  for (;;) {
    TbqBlock *next;

    /* Acquire: pairs with the copier's release store of `published`. */
    if (off < atomic_load_explicit (&b->published, memory_order_acquire))
      break;
    /* Acquire: a non-NULL link makes the block's final length visible. */
    next = atomic_load_explicit (&b->next, memory_order_acquire);
    if (next == NULL)
      return TBQ_EMPTY;
    if (off < atomic_load_explicit (&b->published, memory_order_relaxed))
      break;
    q->rd_blk = next;
    q->rd_off = 0;
    /* The last unref of a block wakes an idle copier if there is surplus
     * to trim (tbq_block_unref). */
    tbq_block_unref (b);
    b = next;
    off = 0;
  }
  h = tbq_record_at (b->data + off);
  rec->data = b->data + off + TBQ_RECORD_HEADER_SIZE;
  rec->size = h->size;
  rec->type = h->type;
  rec->block = b;
  q->rd_off = off + (uint32_t) TBQ_RECORD_SPAN (h->size);
  return TBQ_OK;
}

TbqStatus
tbq_reader_next (TbqReader * r, TbqRecord * rec)
{
  TbqQueue *q = r->q;
  TbqStatus st = reader_take (q, rec);

  if (st == TBQ_OK) {
    tbq_count (&q->records_out, 1);
    tbq_count (&q->bytes_out, rec->size);
  }
  return st;
}

TbqStatus
tbq_reader_peek (TbqReader * r, TbqRecord * rec)
{
  TbqQueue *q = r->q;
  TbqStatus st = reader_take (q, rec);

  /* Step back over the record; reader_take may have moved to a new block,
   * which is where the record is. */
  if (st == TBQ_OK)
    q->rd_off = (uint32_t) ((const unsigned char *) rec->data
        - TBQ_RECORD_HEADER_SIZE - rec->block->data);
  return st;
}

uint32_t
tbq_reader_prepare_wait (TbqReader * r)
{
  /* Acquire: pairs with the copier's release increment after publishing. */
  return atomic_load_explicit (&r->q->sink_seq, memory_order_acquire);
}

/* ---- waiting, and on-demand pulling ----
 *
 * With TBQ_WAKE_ON_DEMAND a writer does not wake the copier on publish; it
 * wakes the reader, and only while the reader says it is hungry.  The
 * reader then moves the records itself (tbq_copier_pull), if the copier is
 * not in a pass: one thread hop from writer to reader, as with a plain
 * queue.  Dekker pairs: the writer publishes, fences and reads
 * reader_hungry; the reader stores reader_hungry, fences and looks for
 * published work. */

typedef struct
{
  TbqQueue *q;
  TbqReadyFunc ready;
  void *arg;
  bool on_demand;
  bool pull;                    /* set: woken to pull, not by `ready` */
  uint32_t pull_key;
} WaitArg;

static bool
wait_ready (void *arg)
{
  WaitArg *a = arg;

  if (a->ready (a->arg))
    return true;
  /* Acquire: pairs with the writer's release increment after publishing. */
  if (a->on_demand && atomic_load_explicit (&a->q->pull_seq,
          memory_order_acquire) != a->pull_key) {
    a->pull = true;
    return true;
  }
  return false;
}

/* Under q->lock: only the copier frees writers, and it takes the lock. */
static bool
reader_sees_work (TbqQueue * q)
{
  bool work;

  pthread_mutex_lock (&q->lock);
  work = tbq_copier_has_work (q, true);
  pthread_mutex_unlock (&q->lock);
  return work;
}

static TbqStatus
reader_wait_until (TbqQueue * q, TbqReadyFunc ready, void *arg,
    int64_t deadline)
{
  WaitArg a;
  TbqStatus st;

  a.q = q;
  a.ready = ready;
  a.arg = arg;
  a.on_demand = q->cfg.wake == TBQ_WAKE_ON_DEMAND;
  a.pull = false;
  a.pull_key = 0;
  if (a.on_demand) {
    atomic_store_explicit (&q->reader_hungry, 1, memory_order_relaxed);
    /* Order the hungry store before looking for published work. */
    if (q->asym)
      tbq_asym_barrier ();
    else
      atomic_thread_fence (memory_order_seq_cst);
    a.pull_key = atomic_load_explicit (&q->pull_seq, memory_order_acquire);
    /* Published before we said we were hungry: nobody will wake us. */
    if (reader_sees_work (q) && tbq_copier_pull (q)) {
      st = TBQ_OK;
      goto fed;
    }
  }
  for (;;) {
    a.pull = false;
    st = tbq_wait (q, &q->read_ev, false, q->cfg.spin_iterations,
        wait_ready, &a, deadline);
    if (st != TBQ_OK || !a.pull)
      break;
    a.pull_key = atomic_load_explicit (&q->pull_seq, memory_order_acquire);
    if (tbq_copier_pull (q))
      break;
    /* The copier is in a pass: it publishes and wakes us. */
  }
fed:
  if (a.on_demand)
    atomic_store_explicit (&q->reader_hungry, 0, memory_order_relaxed);
  return st;
}

typedef struct
{
  TbqQueue *q;
  uint32_t key;
} SleepArg;

static bool
reader_seq_moved (void *arg)
{
  SleepArg *a = arg;

  return atomic_load_explicit (&a->q->sink_seq, memory_order_acquire) != a->key
      || atomic_exchange_explicit (&a->q->reader_kick, 0, memory_order_acq_rel);
}

TbqStatus
tbq_reader_sleep (TbqReader * r, uint32_t key, int64_t timeout_ns)
{
  SleepArg a;

  a.q = r->q;
  a.key = key;
  return reader_wait_until (r->q, reader_seq_moved, &a,
      tbq_deadline (timeout_ns));
}

static bool
reader_ready (void *arg)
{
  TbqReader *r = arg;
  TbqBlock *b = r->q->rd_blk;

  return r->q->rd_off < atomic_load_explicit (&b->published,
      memory_order_acquire)
      || atomic_load_explicit (&b->next, memory_order_acquire) != NULL
      || atomic_load_explicit (&r->consumer_stop, memory_order_relaxed)
      || atomic_exchange_explicit (&r->q->reader_kick, 0,
      memory_order_acq_rel);
}

TbqStatus
tbq_reader_wait (TbqReader * r, int64_t timeout_ns)
{
  if (reader_ready (r))
    return TBQ_OK;
  return reader_wait_until (r->q, reader_ready, r, tbq_deadline (timeout_ns));
}

void
tbq_reader_wake (TbqReader * r)
{
  /* The flag keeps a wake that comes before the wait. */
  atomic_store_explicit (&r->q->reader_kick, 1, memory_order_seq_cst);
  tbq_event_wake (&r->q->read_ev);
}

void
tbq_reader_discard (TbqQueue * q, TbqReleaseFunc release, void *user_data,
    uint64_t * count)
{
  TbqRecord rec;

  /* The copier is stopped: make what it copied last visible to ourselves. */
  tbq_copier_publish_sink (q);
  while (reader_take (q, &rec) == TBQ_OK) {
    if (release)
      release (rec.type, rec.data, rec.size, user_data);
    (*count)++;
  }
}

/* ---- callback consumer ---- */

static bool
consumer_pending (TbqQueue * q)
{
  uint32_t i;

  /* Records published by a writer but not yet moved by a running copier.
   * While the queue is interrupted the copier moves nothing: waiting for
   * it would never end. */
  if (!atomic_load_explicit (&q->copier_thread_running, memory_order_acquire)
      || tbq_queue_is_interrupted (q))
    return false;
  for (i = 0; i < q->cfg.max_writers; i++) {
    TbqWriter *w = atomic_load_explicit (&q->writers[i], memory_order_acquire);

    if (w != NULL
        && atomic_load_explicit (&w->copied_bytes, memory_order_acquire)
        < atomic_load_explicit (&w->published_bytes, memory_order_acquire))
      return true;
  }
  return false;
}

static void *
consumer_main (void *arg)
{
  TbqReader *r = arg;
  TbqRecord rec;

  for (;;) {
    while (tbq_reader_next (r, &rec) == TBQ_OK)
      r->consume (&rec, r->consume_data);
    if (atomic_load_explicit (&r->consumer_stop, memory_order_acquire)) {
      bool pending;

      pthread_mutex_lock (&r->q->lock);
      pending = consumer_pending (r->q);
      pthread_mutex_unlock (&r->q->lock);
      if (!pending && tbq_reader_next (r, &rec) == TBQ_EMPTY)
        break;
      if (!pending) {
        r->consume (&rec, r->consume_data);
        continue;
      }
      tbq_reader_wait (r, 1000000);
      continue;
    }
    if (tbq_reader_wait (r, -1) == TBQ_INTERRUPTED) {
      /* Paused by tbq_queue_interrupt(): sleep until resumed or stopped. */
      while (tbq_queue_is_interrupted (r->q)
          && !atomic_load_explicit (&r->consumer_stop, memory_order_acquire)) {
        uint32_t key = tbq_event_prepare (&r->q->read_ev, false);

        if (!tbq_queue_is_interrupted (r->q)
            || atomic_load_explicit (&r->consumer_stop, memory_order_acquire))
          tbq_event_cancel (&r->q->read_ev);
        else
          tbq_event_sleep (&r->q->read_ev, key, -1);
      }
    }
  }
  return NULL;
}

TbqStatus
tbq_consumer_start (TbqReader * r, TbqConsumeFunc cb, void *user_data)
{
  if (r == NULL || cb == NULL)
    return TBQ_INVALID_ARGUMENT;
  if (r->consumer_running)
    return TBQ_BUSY;
  r->consume = cb;
  r->consume_data = user_data;
  atomic_store_explicit (&r->consumer_stop, 0, memory_order_relaxed);
  if (pthread_create (&r->consumer, NULL, consumer_main, r) != 0)
    return TBQ_NO_MEMORY;
  r->consumer_running = true;
  return TBQ_OK;
}

void
tbq_consumer_stop (TbqReader * r)
{
  if (r == NULL || !r->consumer_running)
    return;
  atomic_store_explicit (&r->consumer_stop, 1, memory_order_release);
  tbq_event_wake (&r->q->read_ev);
  pthread_join (r->consumer, NULL);
  r->consumer_running = false;
}
