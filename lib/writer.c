/* The writer: one per producer thread, appends records to its source pool.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hot path touches only writer-owned fields and the current block; it
 * publishes with one release store and checks (without a fence, see
 * tbq-private.h) whether the copier sleeps.  malloc/mmap happen only when the
 * source pool grows beyond its pre-allocated blocks.
 */
#include "tbq-private.h"

#include <stdlib.h>

uint64_t
tbq_records_release (const unsigned char *data, uint32_t from, uint32_t to,
    TbqReleaseFunc release, void *user_data)
{
  uint64_t n = 0;

  while (from < to) {
    const TbqRecordHeader *h = tbq_record_at (data + from);

    if (release)
      release (h->type, data + from + TBQ_RECORD_HEADER_SIZE, h->size,
          user_data);
    from += (uint32_t) TBQ_RECORD_SPAN (h->size);
    n++;
  }
  return n;
}

static void
writer_start_block (TbqWriter * w, TbqBlock * b)
{
  w->cur = b;
  w->wpos = b->data;
  w->wend = b->data + b->capacity;
  w->pub_off = 0;
}

TbqStatus
tbq_writer_new (TbqQueue * q, TbqWriter ** out)
{
  TbqWriter *w;
  TbqBlock *b;
  TbqStatus st;
  uint32_t i;

  if (q == NULL || out == NULL)
    return TBQ_INVALID_ARGUMENT;
  w = aligned_alloc (TBQ_CACHELINE, (sizeof *w + TBQ_CACHELINE - 1)
      & ~(size_t) (TBQ_CACHELINE - 1));
  if (w == NULL)
    return TBQ_NO_MEMORY;
  memset (w, 0, sizeof *w);
  st = tbq_pool_init (&w->pool, &q->cfg.source);
  if (st != TBQ_OK) {
    free (w);
    return st;
  }
  w->q = q;
  w->asym = q->asym;
  w->publish = q->cfg.publish;
  w->publish_every = q->cfg.publish_every ? q->cfg.publish_every : 1;
  w->backpressure = q->cfg.backpressure;
  w->block_timeout_ns = q->cfg.block_timeout_ns;
  w->wake_lazy = q->cfg.wake == TBQ_WAKE_LAZY;
  w->wake_on_demand = q->cfg.wake == TBQ_WAKE_ON_DEMAND;
  w->handoff_wake = q->cfg.source.max_blocks / 2 > 1
      ? q->cfg.source.max_blocks / 2 : 1;

  b = tbq_pool_take (&w->pool);
  if (b == NULL) {
    tbq_pool_fini (&w->pool);
    free (w);
    return TBQ_NO_MEMORY;
  }
  atomic_store_explicit (&b->published, 0, memory_order_relaxed);
  atomic_store_explicit (&b->next, NULL, memory_order_relaxed);
  writer_start_block (w, b);
  w->copy_blk = b;
  w->copy_off = 0;

  pthread_mutex_lock (&q->lock);
  for (i = 0; i < q->cfg.max_writers; i++) {
    if (atomic_load_explicit (&q->writers[i], memory_order_relaxed) == NULL)
      break;
  }
  if (i == q->cfg.max_writers) {
    pthread_mutex_unlock (&q->lock);
    tbq_pool_put (&w->pool, b);
    tbq_pool_fini (&w->pool);
    free (w);
    return TBQ_LIMIT;
  }
  w->slot = i;
  if (w->wake_lazy)
    atomic_fetch_add_explicit (&q->lazy_writers, 1, memory_order_relaxed);
  /* Release: the copier sees a fully initialised writer. */
  atomic_store_explicit (&q->writers[i], w, memory_order_release);
  pthread_mutex_unlock (&q->lock);
  *out = w;
  return TBQ_OK;
}

/* Frees the writer's blocks and memory. Caller holds q->lock, the writer is
 * out of the registry and every record has been moved or discarded. */
void
tbq_writer_destroy (TbqWriter * w)
{
  TbqQueue *q = w->q;
  TbqPoolStats ps;

  q->retired[0] += atomic_load_explicit (&w->records_in, memory_order_relaxed);
  q->retired[1] += atomic_load_explicit (&w->bytes_in, memory_order_relaxed);
  q->retired[2] += atomic_load_explicit (&w->records_dropped,
      memory_order_relaxed);
  q->retired[3] += atomic_load_explicit (&w->handoffs, memory_order_relaxed);
  q->retired[4] += atomic_load_explicit (&w->pressure_waits,
      memory_order_relaxed);
  if (w->wake_lazy)
    atomic_fetch_sub_explicit (&q->lazy_writers, 1, memory_order_relaxed);
  /* Only the current block is still out of the pool. */
  tbq_pool_put (&w->pool, w->cur);
  tbq_pool_clear (&w->pool);
  tbq_pool_stats (&w->pool, &ps);
  q->retired_source.allocations += ps.allocations;
  q->retired_source.releases += ps.releases;
  tbq_pool_fini (&w->pool);
  free (w);
}

void
tbq_writer_set_backpressure (TbqWriter * w, TbqBackpressure mode,
    int64_t timeout_ns)
{
  w->backpressure = mode;
  w->block_timeout_ns = timeout_ns;
}

void
tbq_writer_set_publish (TbqWriter * w, TbqPublishPolicy policy, uint32_t every)
{
  w->publish = policy;
  w->publish_every = every ? every : 1;
}

/* Make everything below wpos visible to the copier. */
static inline void
writer_publish (TbqWriter * w)
{
  uint32_t off = (uint32_t) (w->wpos - w->cur->data);

  if (off == w->pub_off)
    return;
  /* Release: the record bytes before the offset that covers them. */
  atomic_store_explicit (&w->cur->published, off, memory_order_release);
  /* Release, and after `published`: a has-work check that sees the new
   * total (acquire) finds the records published when it then looks. */
  atomic_store_explicit (&w->published_bytes,
      atomic_load_explicit (&w->published_bytes, memory_order_relaxed)
      + (off - w->pub_off), memory_order_release);
  w->pub_off = off;
  w->unpublished = 0;
}

/* On-demand wake: if the reader waits for records, tell it to pull them
 * itself (one hop; the copier sleeps on).  True if it was told. */
static inline bool
writer_wake_hungry_reader (TbqWriter * w)
{
  TbqQueue *q = w->q;

  /* Order the publish before the load (Dekker with the reader's hungry
   * store in reader_wait_until()). */
  if (w->asym)
    atomic_signal_fence (memory_order_seq_cst);
  else
    atomic_thread_fence (memory_order_seq_cst);
  if (!atomic_load_explicit (&q->reader_hungry, memory_order_relaxed))
    return false;
  /* Release: the reader that sees it sees the records. */
  atomic_fetch_add_explicit (&q->pull_seq, 1, memory_order_release);
  tbq_event_notify (&q->read_ev);
  return true;
}

static inline void
writer_notify (TbqWriter * w)
{
  if (w->wake_on_demand)
    writer_wake_hungry_reader (w);
  else
    tbq_event_notify_light (w->q->data_ev, w->asym);
}

static bool
writer_space_ready (void *arg)
{
  TbqWriter *w = arg;

  return tbq_pool_can_take (&w->pool);
}

/* Seal the current block and continue in a fresh one. */
static TbqStatus
writer_handoff (TbqWriter * w)
{
  TbqBlock *nb = tbq_pool_take (&w->pool);

  if (TBQ_UNLIKELY (nb == NULL)) {
    TbqStatus st;

    /* Let the copier drain what we have before anyone waits on it. */
    writer_publish (w);
    tbq_event_notify (w->q->data_ev);
    if (w->backpressure == TBQ_BACKPRESSURE_DROP)
      return TBQ_DROPPED;
    tbq_count (&w->pressure_waits, 1);
    for (;;) {
      st = tbq_wait (w->q, &w->pool.ev, false, 0, writer_space_ready, w,
          tbq_deadline (w->block_timeout_ns));
      if (st != TBQ_OK)
        return st;
      nb = tbq_pool_take (&w->pool);
      if (nb != NULL)
        break;
    }
  }
  atomic_store_explicit (&nb->published, 0, memory_order_relaxed);
  atomic_store_explicit (&nb->next, NULL, memory_order_relaxed);
  writer_publish (w);
  /* Release: the final `published` and nb's initialisation happen before
   * the copier can follow the link (this store seals the block). */
  atomic_store_explicit (&w->cur->next, nb, memory_order_release);
  tbq_count (&w->handoffs, 1);
  writer_start_block (w, nb);
  /* Someone must return the sealed block: a hungry reader pulling (one
   * hop for the records around the hand-off too), else the copier. */
  if (w->wake_on_demand && writer_wake_hungry_reader (w))
    return TBQ_OK;
  if (w->wake_lazy || w->wake_on_demand) {
    /* Acquire: pairs with the copier's release after returning a block. */
    uint64_t sealed = atomic_load_explicit (&w->handoffs, memory_order_relaxed)
        - atomic_load_explicit (&w->blocks_returned, memory_order_acquire);

    /* The copier returns blocks in batches: wake it once half the pool is
     * sealed and waiting, early enough that this writer never runs dry,
     * and half as often as every hand-off.  Each wake-up costs this thread
     * a system call, and the woken thread often lands on this thread's own
     * CPU, preempting it and running through its caches. */
    if (sealed < w->handoff_wake)
      return TBQ_OK;
  }
  tbq_event_notify (w->q->data_ev);
  return TBQ_OK;
}

static inline TbqStatus
writer_fail (TbqWriter * w, TbqStatus st)
{
  tbq_count (&w->records_dropped, 1);
  return st;
}

/* Slow path of a reservation: the current block has no room for `span`
 * bytes.  Refuse what can never fit, else hand the block off. */
static TbqStatus
writer_make_room (TbqWriter * w, size_t span)
{
  TbqStatus st;

  if (span > w->cur->capacity)
    return writer_fail (w, TBQ_TOO_LARGE);
  st = writer_handoff (w);
  if (st != TBQ_OK)
    return writer_fail (w, st);
  return TBQ_OK;
}

/* Write the header of a `size`-byte record at wpos (making room first). */
static inline TbqStatus
writer_reserve (TbqWriter * w, uint16_t type, uint32_t size)
{
  size_t span = TBQ_RECORD_SPAN (size);
  TbqRecordHeader h;

  if (TBQ_UNLIKELY (span > (size_t) (w->wend - w->wpos))) {
    TbqStatus st = writer_make_room (w, span);

    if (st != TBQ_OK)
      return st;
  }
  h.size = size;
  h.type = type;
  h.reserved = 0;
  memcpy (w->wpos, &h, sizeof h);
  return TBQ_OK;
}

/* Queue the record at wpos, `size` payload bytes, and publish per policy. */
static inline void
writer_commit (TbqWriter * w, uint32_t size)
{
  w->wpos += TBQ_RECORD_SPAN (size);
  tbq_count (&w->records_in, 1);
  tbq_count (&w->bytes_in, size);
  switch (w->publish) {
    case TBQ_PUBLISH_EVERY_RECORD:
      break;
    case TBQ_PUBLISH_EVERY_N:
      if (++w->unpublished < w->publish_every)
        return;
      break;
    default:
      return;
  }
  writer_publish (w);
  if (!w->wake_lazy)
    writer_notify (w);
}

TbqStatus
tbq_writer_reserve (TbqWriter * w, uint16_t type, uint32_t size, void **data)
{
  TbqStatus st = writer_reserve (w, type, size);

  if (TBQ_UNLIKELY (st != TBQ_OK))
    return st;
  w->reserved = w->wpos;
  *data = w->wpos + TBQ_RECORD_HEADER_SIZE;
  return TBQ_OK;
}

void
tbq_writer_commit (TbqWriter * w)
{
  const TbqRecordHeader *h = tbq_record_at (w->reserved);

  w->wpos = w->reserved;
  w->reserved = NULL;
  writer_commit (w, h->size);
}

void
tbq_writer_cancel (TbqWriter * w)
{
  w->reserved = NULL;
}

/* Reserve, copy and commit in one call, without going through the exported
 * (interposable) reserve/commit entry points. */
TbqStatus
tbq_writer_write (TbqWriter * w, uint16_t type, const void *data,
    uint32_t size)
{
  TbqStatus st = writer_reserve (w, type, size);

  if (TBQ_UNLIKELY (st != TBQ_OK))
    return st;
  /* A zero-size record may come with no buffer: memcpy from NULL is
   * undefined even for 0 bytes. */
  if (TBQ_LIKELY (size != 0))
    memcpy (w->wpos + TBQ_RECORD_HEADER_SIZE, data, size);
  writer_commit (w, size);
  return TBQ_OK;
}

void
tbq_writer_flush (TbqWriter * w)
{
  writer_publish (w);
  tbq_copier_request_pickup (w->q);
  tbq_event_notify (w->q->data_ev);
}

typedef struct
{
  TbqWriter *w;
  uint64_t target;
} SyncArg;

static bool
writer_synced (void *arg)
{
  SyncArg *s = arg;

  return atomic_load_explicit (&s->w->copied_bytes, memory_order_acquire)
      >= s->target;
}

TbqStatus
tbq_writer_sync (TbqWriter * w, int64_t timeout_ns)
{
  /* Waiting for the copier asks it to move the current block, if needed. */
  writer_publish (w);
  return tbq_writer_wait_copied (w, timeout_ns);
}

TbqStatus
tbq_writer_wait_copied (TbqWriter * w, int64_t timeout_ns)
{
  SyncArg s;

  s.w = w;
  /* What the writer has published so far (it may be another thread).
   * Acquire: pairs with writer_publish(); passed on to the copier by the
   * pickup request's release. */
  s.target = atomic_load_explicit (&w->published_bytes, memory_order_acquire);
  /* With on-demand or lazy wake nobody may have woken the copier. */
  if (!writer_synced (&s)) {
    tbq_copier_request_pickup (w->q);
    tbq_event_notify (w->q->data_ev);
  }
  return tbq_wait (w->q, &w->pool.ev, false, 0, writer_synced, &s,
      tbq_deadline (timeout_ns));
}

void
tbq_writer_close (TbqWriter * w)
{
  TbqQueue *q;

  if (w == NULL)
    return;
  q = w->q;
  tbq_writer_flush (w);
  /* Release: the copier that sees `closed` also sees the last publish.
   * From here on the copier may free `w`: touch only `q`. */
  atomic_store_explicit (&w->closed, 1, memory_order_release);
  tbq_event_notify (q->data_ev);
}

void
tbq_session_begin_impl (TbqWriter * w, TbqSession * s)
{
  s->pos = w->wpos;
  s->end = w->wend;
  s->writer = w;
  s->records = 0;
  s->bytes = 0;
}

static void
session_account (TbqSession * s)
{
  TbqWriter *w = s->writer;

  /* The session tallied records and payload bytes as it went: no walk
   * over the block's headers here. */
  w->wpos = s->pos;
  tbq_count (&w->records_in, s->records);
  tbq_count (&w->bytes_in, s->bytes);
  s->records = 0;
  s->bytes = 0;
}

void
tbq_session_end_impl (TbqSession * s)
{
  TbqWriter *w = s->writer;

  session_account (s);
  writer_publish (w);
  /* Lazy writers never wake the copier on publish (see TbqWakePolicy). */
  if (!w->wake_lazy)
    writer_notify (w);
}

TbqStatus
tbq_session_next_block_impl (TbqSession * s)
{
  TbqWriter *w = s->writer;
  TbqStatus st;

  session_account (s);
  st = writer_handoff (w);
  s->pos = w->wpos;
  s->end = w->wend;
  return st;
}

/* Discard every record the copier has not moved yet, including unpublished
 * ones, and restart the writer in its current block. Nothing else runs. */
void
tbq_writer_discard (TbqWriter * w, TbqReleaseFunc release, void *user_data,
    uint64_t * count)
{
  TbqBlock *b = w->copy_blk;
  uint32_t off = w->copy_off;

  for (;;) {
    uint32_t end = b == w->cur ? (uint32_t) (w->wpos - b->data)
        : atomic_load_explicit (&b->published, memory_order_acquire);
    TbqBlock *next;

    *count += tbq_records_release (b->data, off, end, release, user_data);
    if (b == w->cur)
      break;
    next = atomic_load_explicit (&b->next, memory_order_acquire);
    tbq_pool_put (&w->pool, b);
    b = next;
    off = 0;
  }
  w->reserved = NULL;
  w->wpos = w->cur->data;
  w->pub_off = 0;
  w->unpublished = 0;
  atomic_store_explicit (&w->cur->published, 0, memory_order_relaxed);
  w->copy_blk = w->cur;
  w->copy_off = 0;
  atomic_store_explicit (&w->copied_bytes,
      atomic_load_explicit (&w->published_bytes, memory_order_relaxed),
      memory_order_release);
}
