/* The copier: moves published ranges from source blocks into sink blocks.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One pass visits every writer, copies [copy_off, published) of its oldest
 * block with one memcpy when it fits the current sink block (record by
 * record at a sink block's end, so records never straddle), follows sealed
 * blocks, and returns each consumed source block at once.  The sink block is
 * published once per pass.  Per writer the order is FIFO; nothing is copied
 * twice because copy_off only moves forward.
 *
 * Sealed blocks and the current block.  A pass always moves sealed blocks;
 * it moves the published part of a writer's *current* block (the one it is
 * still writing) only when that is asked for: always with immediate wake,
 * by a pulling reader (it is waiting for exactly those records), after a
 * flush, sync or close (pickup_req), for a closed writer, and with lazy
 * wake once per pickup interval.  A copier that followed the writer through
 * its current block record by record would share every cache line the
 * writer is filling, and the block's `published` word, with the writer's
 * CPU: each record would cost the writer a cache-line transfer.  With
 * lazy and on-demand wake nothing is lost by waiting: the records cannot
 * overtake the sink backlog, and a reader that runs dry pulls them itself.
 */
#include "tbq-private.h"

#include <sched.h>

void
tbq_copier_publish_sink (TbqQueue * q)
{
  uint32_t off = (uint32_t) (q->spos - q->sink_cur->data);

  if (off == q->spub_off)
    return;
  q->spub_off = off;
  /* Release: the copied bytes before the offset that covers them. */
  atomic_store_explicit (&q->sink_cur->published, off, memory_order_release);
  /* Release: a reader that sees the new sequence sees the bytes. */
  atomic_fetch_add_explicit (&q->sink_seq, 1, memory_order_release);
  tbq_event_notify (&q->read_ev);
}

static bool
sink_space_ready (void *arg)
{
  TbqQueue *q = arg;

  return tbq_pool_can_take (q->sink_pool)
      || atomic_load_explicit (&q->copier_stop, memory_order_relaxed);
}

/* Seal the current sink block and continue in a fresh one.  A pulling
 * reader must not wait for sink space (only it could make some): it gets
 * TBQ_NO_SPACE and leaves the rest to the copier. */
static TbqStatus
copier_next_sink (TbqQueue * q, bool pulling)
{
  TbqBlock *nb = tbq_pool_take (q->sink_pool);
  TbqBlock *old = q->sink_cur;

  if (nb == NULL) {
    tbq_copier_publish_sink (q);
    if (pulling)
      return TBQ_NO_SPACE;
    tbq_count (&q->sink_pressure_waits, 1);
    for (;;) {
      TbqStatus st = tbq_wait (q, &q->sink_pool->ev, false, 0, sink_space_ready, q,
          -1);

      if (st != TBQ_OK)
        return st;
      if (atomic_load_explicit (&q->copier_stop, memory_order_relaxed))
        return TBQ_INTERRUPTED;
      nb = tbq_pool_take (q->sink_pool);
      if (nb != NULL)
        break;
    }
  }
  atomic_store_explicit (&nb->published, 0, memory_order_relaxed);
  atomic_store_explicit (&nb->next, NULL, memory_order_relaxed);
  /* One reference for the copier (until sealed), one for the reader. */
  atomic_store_explicit (&nb->refs, 2, memory_order_relaxed);
  /* Final length of the old block (release: its bytes before it). */
  atomic_store_explicit (&old->published, (uint32_t) (q->spos - old->data),
      memory_order_release);
  /* Release: final `published` and nb's fields before the link (seal). */
  atomic_store_explicit (&old->next, nb, memory_order_release);
  q->sink_cur = nb;
  q->spos = nb->data;
  q->send = nb->data + nb->capacity;
  q->spub_off = 0;
  tbq_block_unref (old);
  atomic_fetch_add_explicit (&q->sink_seq, 1, memory_order_release);
  tbq_event_notify (&q->read_ev);
  return TBQ_OK;
}

/* Copy src[*off, end) into the sink layer. Updates *off as it goes. */
static TbqStatus
copier_copy_range (TbqQueue * q, const unsigned char *src, uint32_t * off,
    uint32_t end, bool pulling)
{
  while (*off < end) {
    size_t n = end - *off;
    size_t room = (size_t) (q->send - q->spos);
    size_t fit = 0;
    TbqStatus st;

    if (n <= room) {
      memcpy (q->spos, src + *off, n);
      q->spos += n;
      *off = end;
      break;
    }
    while (*off + fit < end) {
      size_t span = TBQ_RECORD_SPAN (tbq_record_at (src + *off + fit)->size);

      if (fit + span > room)
        break;
      fit += span;
    }
    if (fit > 0) {
      memcpy (q->spos, src + *off, fit);
      q->spos += fit;
      *off += (uint32_t) fit;
    }
    st = copier_next_sink (q, pulling);
    if (st != TBQ_OK)
      return st;
  }
  return TBQ_OK;
}

/* Move what writer `w` published: its sealed blocks, and with `current`
 * the published part of its current block.  *moved is set when bytes
 * moved. */
static TbqStatus
copier_drain_writer (TbqQueue * q, TbqWriter * w, bool *moved, bool pulling,
    bool current)
{
  TbqStatus st = TBQ_OK;
  uint64_t bytes = 0;

  for (;;) {
    TbqBlock *b = w->copy_blk;
    /* Acquire: a non-NULL link makes the block's final `published` (and
     * its bytes) visible: it is sealed. */
    TbqBlock *next = atomic_load_explicit (&b->next, memory_order_acquire);
    uint32_t pub;

    if (next == NULL && !current)
      break;
    /* Acquire: pairs with the writer's release store of `published` (for
     * a sealed block the acquire on `next` already covers it). */
    pub = atomic_load_explicit (&b->published, next != NULL
        ? memory_order_relaxed : memory_order_acquire);
    if (w->copy_off < pub) {
      uint32_t from = w->copy_off;

      st = copier_copy_range (q, b->data, &w->copy_off, pub, pulling);
      bytes += w->copy_off - from;
      if (st != TBQ_OK)
        break;
    }
    if (next == NULL)
      break;
    w->copy_blk = next;
    w->copy_off = 0;
    tbq_pool_put_or_release (&w->pool, b);
    /* Release: the copier's has-work check compares it with handoffs. */
    atomic_store_explicit (&w->blocks_returned,
        atomic_load_explicit (&w->blocks_returned, memory_order_relaxed) + 1,
        memory_order_release);
    tbq_event_notify (&w->pool.ev);
  }
  if (bytes > 0) {
    *moved = true;
    tbq_count (&q->bytes_copied, bytes);
    /* Moved means readable: publish the sink block before telling
     * tbq_writer_sync() and a stopping consumer, which then read it. */
    tbq_copier_publish_sink (q);
    /* Release: pairs with their acquire load of copied_bytes. */
    atomic_store_explicit (&w->copied_bytes,
        atomic_load_explicit (&w->copied_bytes, memory_order_relaxed)
        + bytes, memory_order_release);
    /* A tbq_writer_sync() may be asleep waiting for exactly this. */
    tbq_event_notify (&w->pool.ev);
  }
  return st;
}

/* A closed writer whose records have all moved: free it. */
static void
copier_retire_writer (TbqQueue * q, TbqWriter * w)
{
  if (w->copy_blk != w->cur || w->copy_off !=
      atomic_load_explicit (&w->cur->published, memory_order_acquire))
    return;
  pthread_mutex_lock (&q->lock);
  atomic_store_explicit (&q->writers[w->slot], NULL, memory_order_relaxed);
  tbq_writer_destroy (w);
  pthread_mutex_unlock (&q->lock);
}

/* Whether this pass also moves the writers' current blocks (see the top
 * of the file).  Called by the owner of the copier's state only. */
static bool
copier_pickup_due (TbqQueue * q, bool pulling)
{
  /* Acquire: pairs with the release increment after a flush's publish. */
  uint32_t req = atomic_load_explicit (&q->pickup_req, memory_order_acquire);

  if (pulling || q->cfg.wake == TBQ_WAKE_IMMEDIATE)
    return true;
  if (req != atomic_load_explicit (&q->pickup_seen, memory_order_relaxed)) {
    atomic_store_explicit (&q->pickup_seen, req, memory_order_relaxed);
    return true;
  }
  if (q->cfg.wake == TBQ_WAKE_LAZY
      && atomic_load_explicit (&q->lazy_writers, memory_order_relaxed) > 0) {
    int64_t now = tbq_now_ns ();

    if (now >= q->next_pickup_ns) {
      q->next_pickup_ns = now + q->cfg.pickup_interval_ns;
      return true;
    }
  }
  return false;
}

void
tbq_copier_request_pickup (TbqQueue * q)
{
  /* Release: the copier that sees the request sees what was published
   * before it. */
  atomic_fetch_add_explicit (&q->pickup_req, 1, memory_order_release);
}

/* One pass over every writer.  `pulling`: run by a reader (see
 * tbq_copier_pull): no waiting for sink space, and closed writers are left
 * for the copier to free (its has-work check reads them unowned). */
static TbqStatus
copier_pass (TbqQueue * q, bool *moved, bool pulling)
{
  bool current = copier_pickup_due (q, pulling);
  uint32_t i;

  *moved = false;
  for (i = 0; i < q->cfg.max_writers; i++) {
    /* Acquire: pairs with the registration's release store. */
    TbqWriter *w = atomic_load_explicit (&q->writers[i], memory_order_acquire);
    TbqStatus st;
    bool closed;

    if (w == NULL)
      continue;
    /* Read `closed` before draining: the last publish precedes it. */
    closed = atomic_load_explicit (&w->closed, memory_order_acquire);
    st = copier_drain_writer (q, w, moved, pulling, current || closed);
    if (st != TBQ_OK) {
      tbq_copier_publish_sink (q);
      return st;
    }
    if (closed && !pulling)
      copier_retire_writer (q, w);
  }
  if (*moved) {
    tbq_count (&q->copier_passes, 1);
    tbq_copier_publish_sink (q);
  }
  return TBQ_OK;
}

bool
tbq_copier_has_work (TbqQueue * q, bool current)
{
  uint32_t i;

  for (i = 0; i < q->cfg.max_writers; i++) {
    /* Only the copier frees writers, never while it waits: `w` stays. */
    TbqWriter *w = atomic_load_explicit (&q->writers[i], memory_order_acquire);

    if (w == NULL)
      continue;
    if (atomic_load_explicit (&w->handoffs, memory_order_relaxed)
        != atomic_load_explicit (&w->blocks_returned, memory_order_relaxed)
        || atomic_load_explicit (&w->closed, memory_order_relaxed))
      return true;
    /* Acquire: pairs with writer_publish(), so a pass that follows sees
     * the `published` offset this total covers. */
    if (current && atomic_load_explicit (&w->published_bytes,
            memory_order_acquire)
        != atomic_load_explicit (&w->copied_bytes, memory_order_relaxed))
      return true;
  }
  return false;
}

/* Checked without owning the copier's state (a reader may be pulling). */
static bool
copier_work_ready (void *arg)
{
  TbqQueue *q = arg;

  if (atomic_load_explicit (&q->copier_stop, memory_order_relaxed))
    return true;
  /* The reader returned blocks above the idle limit: trim them. */
  if (tbq_pool_trim_due (q->sink_pool))
    return true;
  return tbq_copier_has_work (q, q->cfg.wake == TBQ_WAKE_IMMEDIATE
      || atomic_load_explicit (&q->pickup_req, memory_order_relaxed)
      != atomic_load_explicit (&q->pickup_seen, memory_order_relaxed));
}

static inline bool
copier_own (TbqQueue * q)
{
  /* Acquire: see everything the previous owner did to the copier's state. */
  return !atomic_exchange_explicit (&q->copier_busy, 1, memory_order_acquire);
}

static inline void
copier_release (TbqQueue * q)
{
  /* Release: pairs with the next owner's acquire. */
  atomic_store_explicit (&q->copier_busy, 0, memory_order_release);
}

bool
tbq_copier_pull (TbqQueue * q)
{
  TbqStatus st;
  bool moved = false;

  if (atomic_load_explicit (&q->interrupted, memory_order_acquire))
    return false;
  if (!copier_own (q)) {
    /* The copier is in a pass, which may be moving sealed blocks only:
     * make its next pass take the current blocks too, and publish (the
     * reader sleeps until the sink sequence moves). */
    tbq_copier_request_pickup (q);
    tbq_event_notify (q->data_ev);
    return false;
  }
  st = copier_pass (q, &moved, true);
  copier_release (q);
  /* Sink pool full: the copier waits for space, a reader must not. */
  if (st == TBQ_NO_SPACE)
    tbq_event_notify (q->data_ev);
  return moved;
}

/* One pass, and if there was nothing to do, a wait for work.  The wait is
 * not made owning the copier's state, so a hungry reader may pull in the
 * meantime; the pass after the wait is skipped if a reader is pulling. */
static TbqStatus
copier_step (TbqQueue * q, int64_t timeout_ns)
{
  TbqStatus st;
  bool moved;
  int64_t deadline;

  if (!copier_own (q))
    return TBQ_BUSY;
  if (atomic_load_explicit (&q->interrupted, memory_order_acquire)) {
    copier_release (q);
    return TBQ_INTERRUPTED;
  }
  st = copier_pass (q, &moved, false);
  if (st != TBQ_OK || moved) {
    copier_release (q);
    return st;
  }

  /* Idle: give surplus sink blocks back, then wait for work. */
  tbq_pool_trim (q->sink_pool);
  copier_release (q);
  deadline = tbq_deadline (timeout_ns);
  if (atomic_load_explicit (&q->lazy_writers, memory_order_relaxed) > 0) {
    /* Lazy writers never wake us on publish: bound the pickup delay. */
    int64_t pickup = q->next_pickup_ns;

    if (deadline < 0 || pickup < deadline)
      deadline = pickup;
  }
  /* Asymmetric barrier: writers notify with a compiler barrier only. */
  st = tbq_wait (q, q->data_ev, q->asym, q->cfg.spin_iterations,
      copier_work_ready, q, deadline);
  if (st == TBQ_OK)
    tbq_count (&q->copier_wakeups, 1);
  if (st != TBQ_OK && st != TBQ_TIMEOUT)
    return st;
  if (!copier_own (q))
    return TBQ_OK;              /* a reader is moving the records */
  if (atomic_load_explicit (&q->interrupted, memory_order_acquire)) {
    copier_release (q);
    return TBQ_INTERRUPTED;
  }
  /* After a wake, or at a lazy writer's pickup interval. */
  {
    TbqStatus pst = copier_pass (q, &moved, false);

    if (pst == TBQ_OK && !moved)
      tbq_pool_trim (q->sink_pool);
    copier_release (q);
    if (pst != TBQ_OK)
      return pst;
  }
  if (st == TBQ_TIMEOUT && !moved && timeout_ns >= 0)
    return TBQ_TIMEOUT;
  return TBQ_OK;
}

TbqStatus
tbq_copier_step (TbqQueue * q, int64_t timeout_ns)
{
  if (q == NULL)
    return TBQ_INVALID_ARGUMENT;
  /* While the library's copier thread exists it owns the copier, paused
   * or not; copier_busy alone would let a step slip in between two of its
   * steps (and make that thread give up). */
  if (atomic_load_explicit (&q->copier_thread_running, memory_order_acquire))
    return TBQ_BUSY;
  return copier_step (q, timeout_ns);
}

static TbqStatus
copier_loop (TbqQueue * q)
{
  TbqStatus st = TBQ_OK;

  while (!atomic_load_explicit (&q->copier_stop, memory_order_acquire)) {
    st = copier_step (q, -1);
    if (st == TBQ_INTERRUPTED)
      break;
    /* A reader pulling (a short pass), or a stray caller step. */
    if (st == TBQ_BUSY)
      sched_yield ();
  }
  return st;
}

TbqStatus
tbq_copier_run (TbqQueue * q)
{
  if (q == NULL)
    return TBQ_INVALID_ARGUMENT;
  if (atomic_load_explicit (&q->copier_thread_running, memory_order_acquire))
    return TBQ_BUSY;
  return copier_loop (q);
}

/* Interrupted: sleep until tbq_queue_resume() or tbq_queue_stop(), both of
 * which wake data_ev. */
static void
copier_thread_pause (TbqQueue * q)
{
  while (atomic_load_explicit (&q->interrupted, memory_order_acquire)
      && !atomic_load_explicit (&q->copier_stop, memory_order_acquire)) {
    uint32_t key = tbq_event_prepare (q->data_ev, false);

    if (!atomic_load_explicit (&q->interrupted, memory_order_acquire)
        || atomic_load_explicit (&q->copier_stop, memory_order_acquire))
      tbq_event_cancel (q->data_ev);
    else
      tbq_event_sleep (q->data_ev, key, -1);
  }
}

void *
tbq_copier_thread_main (void *arg)
{
  TbqQueue *q = arg;

  /* Unlike tbq_copier_run(), the library's thread outlives an interrupt:
   * it pauses, so tbq_queue_resume() restores normal operation. */
  while (!atomic_load_explicit (&q->copier_stop, memory_order_acquire)) {
    TbqStatus st = copier_loop (q);

    if (st == TBQ_INTERRUPTED)
      copier_thread_pause (q);
  }
  return NULL;
}
