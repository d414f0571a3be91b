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
 * twice because copy_off only moves forward.  Which passes also take the
 * writers' current blocks is the wake module's decision (wake.c).  An
 * indirect record (a large record's, block.h) moves like any record: its
 * extent stays where it is.
 */
#include "copier.h"

#include <sched.h>

static inline bool
copier_interrupted (TbqCopier * c)
{
  /* Relaxed: raised before an unconditional wake (block.h, "Events"). */
  return atomic_load_explicit (c->interrupted, memory_order_relaxed) != 0;
}

static inline bool
copier_stopping (TbqCopier * c)
{
  /* Relaxed: as the interrupt flag. */
  return atomic_load_explicit (&c->stop, memory_order_relaxed) != 0;
}

static void
copier_start_sink (TbqCopier * c, TbqBlock * b)
{
  /* One reference for the copier (until sealed), one for the reader.
   * Relaxed: nobody sees the block before the link that publishes it. */
  atomic_store_explicit (&b->refs, 2, memory_order_relaxed);
  c->sink_cur = b;
  c->spos = b->data;
  c->send = b->data + b->capacity;
  c->spub_off = 0;
}

TbqStatus
tbq_copier_init (TbqCopier * c, TbqRegistry * registry, TbqWake * wake,
    TbqPool * sink, TbqExtents * extents, const _Atomic int *interrupted,
    uint32_t spins, TbqBlock ** first)
{
  TbqBlock *b;

  c->registry = registry;
  c->wake = wake;
  c->sink = sink;
  c->extents = extents;
  c->interrupted = interrupted;
  c->spins = spins;
  tbq_pickup_init (&c->pickup);
  if (tbq_pool_take (sink, true, &b) != TBQ_OK)
    return TBQ_NO_MEMORY;
  tbq_block_reset (b);
  copier_start_sink (c, b);
  *first = b;
  return TBQ_OK;
}

void
tbq_copier_fini (TbqCopier * c)
{
  tbq_block_unref (c->sink_cur);
}

void
tbq_copier_publish_sink (TbqCopier * c)
{
  uint32_t off = (uint32_t) (c->spos - c->sink_cur->data);

  if (off == c->spub_off)
    return;
  c->spub_off = off;
  /* Release: the copied bytes before the offset that covers them. */
  atomic_store_explicit (&c->sink_cur->published, off, memory_order_release);
  tbq_wake_sink_published (c->wake);
  if (TBQ_UNLIKELY (c->spill != NULL))
    tbq_spill_notify (c->spill);
}

static bool
sink_space_ready (void *arg)
{
  TbqCopier *c = arg;

  return tbq_pool_can_take (c->sink) || copier_stopping (c);
}

/* The sink pool is at its limit: wait for the reader to return a block. */
static TbqStatus
copier_wait_for_sink (TbqCopier * c, TbqBlock ** nb)
{
  tbq_count (&c->sink_pressure_waits, 1);
  for (;;) {
    TbqStatus st = tbq_wait (&c->sink->ev, c->interrupted, 0,
        sink_space_ready, c, -1);

    if (st != TBQ_OK)
      return st;
    if (copier_stopping (c))
      return TBQ_INTERRUPTED;
    st = tbq_pool_take (c->sink, true, nb);
    if (st != TBQ_NO_SPACE)
      return st;
  }
}

/* Seal the current sink block and continue in a fresh one.  A pulling
 * reader takes only a free block, never waits for one and never grows the
 * pool: it gets TBQ_NO_SPACE and leaves the rest to the copier.  A failed
 * allocation returns TBQ_NO_MEMORY to the step's caller; the pool then
 * holds still, so the next step waits for space instead of retrying. */
static TbqStatus
copier_next_sink (TbqCopier * c, bool pulling)
{
  TbqBlock *old = c->sink_cur;
  TbqBlock *nb, *link;
  TbqStatus st = tbq_pool_take (c->sink, !pulling, &nb);
  uint32_t old_len;
  bool run;

  if (st != TBQ_OK) {
    tbq_copier_publish_sink (c);
    if (pulling)
      return TBQ_NO_SPACE;
    if (c->grouped && (st == TBQ_NO_SPACE || st == TBQ_NO_MEMORY)) {
      /* The group serves the others; this one waits, and is ready again
       * when the pool can take (its events ring the group, share.h).
       * After a failed allocation the pool holds still (pool.h): the
       * same wait. */
      if (!c->sink_wait_counted) {
        c->sink_wait_counted = true;
        tbq_count (&c->sink_pressure_waits, 1);
        /* Once per wait: whoever waits for this copier to move records
         * (a leaky writer, a reader gathering) looks again; the pool
         * may have filled with the other members' memory after it
         * looked, and no publish of this member's ends its wait. */
        tbq_wake_kick (c->wake);
      }
      atomic_store_explicit (&c->sink_blocked, 1, memory_order_relaxed);
      return st;
    }
    if (st == TBQ_NO_SPACE)
      st = copier_wait_for_sink (c, &nb);
    if (st != TBQ_OK)
      return st;
  }
  c->sink_wait_counted = false;
  /* Past the spill mark the blocks from here on go to the spill thread
   * (spill.h); a pulling reader leaves that to the copier.  Asked with
   * the new block charged: the block that crosses the mark is the run's
   * first, never one more kept in memory before the marker (a block
   * charged after a look that came before a writer's extents would
   * leave the memory only a reader frees above the mark, and a writer
   * with no reader waiting for room for good). */
  run = TBQ_UNLIKELY (c->spill != NULL) && !pulling
      && tbq_spill_wants_run (c->spill);
  old_len = (uint32_t) (c->spos - old->data);
  tbq_block_reset (nb);
  copier_start_sink (c, nb);
  link = nb;
  if (run && (link = tbq_spill_begin_run (c->spill, nb)) == NULL)
    link = nb;                  /* no memory for a marker: no run */
  /* Final length of the old block (release: its bytes before it). */
  atomic_store_explicit (&old->published, old_len, memory_order_release);
  /* Release: the final `published` and nb's reset and references (or the
   * marker's) before the link (this store seals the block). */
  atomic_store_explicit (&old->next, link, memory_order_release);
  tbq_block_unref (old);
  tbq_wake_sink_published (c->wake);
  if (TBQ_UNLIKELY (c->spill != NULL))
    tbq_spill_notify (c->spill);
  return TBQ_OK;
}

/* Copy src[*off, end) into the sink layer. Updates *off as it goes. */
static TbqStatus
copier_copy_range (TbqCopier * c, const unsigned char *src, uint32_t * off,
    uint32_t end, bool pulling)
{
  while (*off < end) {
    size_t n = end - *off;
    size_t room = (size_t) (c->send - c->spos);
    size_t fit = 0;
    TbqStatus st;

    if (n <= room) {
      memcpy (c->spos, src + *off, n);
      c->spos += n;
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
      memcpy (c->spos, src + *off, fit);
      c->spos += fit;
      *off += (uint32_t) fit;
    }
    st = copier_next_sink (c, pulling);
    if (st != TBQ_OK)
      return st;
  }
  return TBQ_OK;
}

/* A consumed, sealed source block goes back to its writer's pool. */
static void
copier_return_block (TbqWriter * w, TbqBlock * b, TbqBlock * next)
{
  w->copy_blk = next;
  w->copy_off = 0;
  tbq_pool_put_or_release (&w->pool, b);
  tbq_count (&w->blocks_returned, 1);
  tbq_event_notify (&w->pool.ev);
}

/* Records moved: make them readable, then tell waiters for them. */
static void
copier_moved (TbqCopier * c, TbqWriter * w, uint64_t bytes)
{
  tbq_count (&c->bytes_copied, bytes);
  /* Moved means readable: publish the sink block before telling
   * tbq_writer_sync() and a stopping consumer, which then read it. */
  tbq_copier_publish_sink (c);
  /* Release: pairs with their acquire load of copied_bytes. */
  atomic_store_explicit (&w->copied_bytes,
      atomic_load_explicit (&w->copied_bytes, memory_order_relaxed) + bytes,
      memory_order_release);
  /* A tbq_writer_sync() may be asleep waiting for exactly this. */
  tbq_event_notify (&w->pool.ev);
}

/* Move what writer `w` published: its sealed blocks, and with `current`
 * the published part of its current block.  *moved is set when bytes
 * moved. */
static TbqStatus
copier_drain_writer (TbqCopier * c, TbqWriter * w, bool *moved, bool pulling,
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

      st = copier_copy_range (c, b->data, &w->copy_off, pub, pulling);
      bytes += w->copy_off - from;
      if (st != TBQ_OK)
        break;
    }
    if (next == NULL)
      break;
    copier_return_block (w, b, next);
  }
  if (bytes > 0) {
    *moved = true;
    copier_moved (c, w, bytes);
  }
  return st;
}

/* A closed writer whose records have all moved: free it. */
static void
copier_retire_writer (TbqCopier * c, TbqWriter * w)
{
  /* Acquire: as in copier_drain_writer(). */
  if (w->copy_blk != w->cur || w->copy_off !=
      atomic_load_explicit (&w->cur->published, memory_order_acquire))
    return;
  tbq_registry_lock (c->registry);
  tbq_writer_retire_locked (w, c->registry);
  tbq_registry_unlock (c->registry);
}

/* One pass over every writer.  `pulling`: run by a reader (pull.c): no
 * waiting for sink space, and closed writers are left for the copier to
 * free (its has-work check reads them without the lock). */
static TbqStatus
copier_pass (TbqCopier * c, bool *moved, bool pulling)
{
  bool current = tbq_wake_pickup_due (c->wake, &c->pickup, pulling);
  uint32_t i, n = tbq_registry_span (c->registry);

  *moved = false;
  for (i = 0; i < n; i++) {
    TbqWriter *w = tbq_registry_at (c->registry, i);
    TbqStatus st;
    bool closed;

    if (w == NULL)
      continue;
    /* Acquire: read `closed` before draining; the last publish precedes
     * its release store. */
    closed = atomic_load_explicit (&w->closed, memory_order_acquire);
    st = copier_drain_writer (c, w, moved, pulling, current || closed);
    if (st != TBQ_OK) {
      tbq_copier_publish_sink (c);
      return st;
    }
    if (closed && !pulling)
      copier_retire_writer (c, w);
  }
  if (*moved) {
    tbq_count (&c->passes, 1);
    tbq_copier_publish_sink (c);
  }
  /* Past the spill mark, or a writer's extent refused by the spill's
   * hold: what comes next goes to the file (spill.h). */
  if (TBQ_UNLIKELY (c->spill != NULL) && !pulling
      && tbq_spill_wants_run (c->spill))
    return copier_next_sink (c, false);
  return TBQ_OK;
}

/* Whether any writer has sealed blocks the copier has not handled, or is
 * closed; with `current`, also published records in a current block.
 * Atomics only; the caller keeps the writers alive (it is the copier, or
 * holds the registry lock). */
static bool
copier_has_work (TbqCopier * c, bool current)
{
  uint32_t i, n = tbq_registry_span (c->registry);

  for (i = 0; i < n; i++) {
    TbqWriter *w = tbq_registry_at (c->registry, i);

    if (w == NULL)
      continue;
    /* Relaxed: the pass that follows loads the chain with acquire. */
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

bool
tbq_copier_has_work_now (TbqCopier * c)
{
  bool work;

  /* Under the lock: only the copier frees writers, and it takes it. */
  tbq_registry_lock (c->registry);
  work = copier_has_work (c, true);
  tbq_registry_unlock (c->registry);
  return work;
}

/* Checked without owning the copier's state (a reader may be pulling). */
static bool
copier_work_ready (void *arg)
{
  TbqCopier *c = arg;

  if (copier_stopping (c))
    return true;
  /* The reader returned blocks or extents above the idle limit: trim
   * them. */
  if (tbq_pool_trim_due (c->sink) || tbq_extents_trim_due (c->extents))
    return true;
  if (c->spill != NULL && tbq_spill_wants_run (c->spill))
    return true;
  return copier_has_work (c, tbq_wake_pickup_wanted (c->wake, &c->pickup));
}

static inline bool
copier_own (TbqCopier * c)
{
  /* Acquire: see everything the previous owner did to the copier's state. */
  return !atomic_exchange_explicit (&c->busy, 1, memory_order_acquire);
}

static inline void
copier_release (TbqCopier * c)
{
  /* Release: pairs with the next owner's acquire. */
  atomic_store_explicit (&c->busy, 0, memory_order_release);
}

TbqStatus
tbq_copier_pull (TbqCopier * c, bool *moved)
{
  TbqStatus st;

  *moved = false;
  if (copier_interrupted (c))
    return TBQ_INTERRUPTED;
  if (!copier_own (c))
    return TBQ_BUSY;
  st = copier_pass (c, moved, true);
  copier_release (c);
  return st;
}

/* A pass by the copier itself, owning its state (released here); a pass
 * that finds nothing to move gives surplus sink blocks back.  Idle
 * extents above what their cache keeps go back after any pass: a busy
 * stream of records of ever new sizes would grow the cache otherwise. */
static TbqStatus
copier_own_pass (TbqCopier * c, bool *moved)
{
  TbqStatus st = TBQ_INTERRUPTED;

  *moved = false;
  if (!copier_interrupted (c)) {
    st = copier_pass (c, moved, false);
    if (st == TBQ_OK && !*moved)
      tbq_pool_trim (c->sink, c->sink_cur != NULL ? 1 : 0);
    if (tbq_extents_trim_due (c->extents))
      tbq_extents_trim (c->extents);
  }
  copier_release (c);
  return st;
}

/* One pass, and if there was nothing to do, a wait for work.  The wait is
 * not made owning the copier's state, so a hungry reader may pull in the
 * meantime; the pass after the wait is skipped if a reader is pulling. */
static TbqStatus
copier_step (TbqCopier * c, int64_t timeout_ns)
{
  TbqStatus st, wst;
  bool moved;

  if (!copier_own (c))
    return TBQ_BUSY;
  st = copier_own_pass (c, &moved);
  if (st != TBQ_OK || moved)
    return st;
  wst = tbq_wait (c->wake->copier_ev, c->interrupted, c->spins,
      copier_work_ready, c, tbq_deadline (timeout_ns));
  if (wst == TBQ_OK)
    tbq_count (&c->wakeups, 1);
  else if (wst != TBQ_TIMEOUT)
    return wst;
  if (!copier_own (c))
    return TBQ_OK;              /* a reader is moving the records */
  st = copier_own_pass (c, &moved);
  if (st != TBQ_OK)
    return st;
  if (wst == TBQ_TIMEOUT && !moved && timeout_ns >= 0)
    return TBQ_TIMEOUT;
  return TBQ_OK;
}

static inline bool
copier_thread_exists (TbqCopier * c)
{
  /* A group's member is the group's threads' (or its host's).  Relaxed:
   * only decides whether a host's step may run; the copier's state is
   * guarded by `busy`. */
  return c->grouped
      || atomic_load_explicit (&c->thread_running, memory_order_relaxed);
}

TbqStatus
tbq_copier_group_pass (TbqCopier * c, bool *moved)
{
  *moved = false;
  /* Acquire: pairs with tbq_queue_resume(); no thread of the group
   * touched the queue while it was interrupted, so `busy` alone does not
   * order the caller's work of that time before this pass. */
  if (atomic_load_explicit (c->interrupted, memory_order_acquire))
    return TBQ_INTERRUPTED;
  if (!copier_own (c))
    return TBQ_BUSY;
  /* Relaxed: owned by whoever holds `busy`; read as a hint. */
  atomic_store_explicit (&c->sink_blocked, 0, memory_order_relaxed);
  return copier_own_pass (c, moved);
}

bool
tbq_copier_group_ready (TbqCopier * c)
{
  bool ready;

  if (copier_interrupted (c))
    return false;
  /* Relaxed: a hint; a pool that can take again rang the doorbell after
   * its change (share.h).  A blocked member's surplus of idle sink blocks
   * waits: its pass stops at the full pool before it would trim them (and
   * they are no part of the budget that blocks it), so they made it ready
   * round after round, for nothing.  Its idle extents are trimmed after
   * any pass, which gives budget back. */
  if (atomic_load_explicit (&c->sink_blocked, memory_order_relaxed)
      && !tbq_pool_can_take (c->sink) && !tbq_extents_trim_due (c->extents))
    return false;
  tbq_registry_lock (c->registry);
  ready = copier_work_ready (c);
  tbq_registry_unlock (c->registry);
  return ready;
}

void
tbq_copier_wait_idle (TbqCopier * c)
{
  /* Owning and releasing `busy` orders this caller's interrupt before the
   * next owner's check of it (release/acquire on `busy`). */
  while (!copier_own (c))
    sched_yield ();
  copier_release (c);
}

TbqStatus
tbq_copier_host_step (TbqCopier * c, int64_t timeout_ns)
{
  /* While the library's copier thread exists it owns the copier, paused
   * or not; `busy` alone would let a step slip in between two of its
   * steps (and make that thread give up). */
  if (copier_thread_exists (c))
    return TBQ_BUSY;
  return copier_step (c, timeout_ns);
}

static TbqStatus
copier_loop (TbqCopier * c)
{
  TbqStatus st = TBQ_OK;

  while (!copier_stopping (c)) {
    st = copier_step (c, -1);
    if (st == TBQ_INTERRUPTED)
      break;
    /* A reader pulling (a short pass), or a stray caller step. */
    if (st == TBQ_BUSY)
      sched_yield ();
  }
  return st;
}

TbqStatus
tbq_copier_host_run (TbqCopier * c)
{
  if (copier_thread_exists (c))
    return TBQ_BUSY;
  return copier_loop (c);
}

static bool
copier_resumed_or_stopped (void *arg)
{
  TbqCopier *c = arg;

  return !copier_interrupted (c) || copier_stopping (c);
}

static void *
copier_thread_main (void *arg)
{
  TbqCopier *c = arg;

  /* Unlike tbq_copier_run(), the library's thread outlives an interrupt:
   * it pauses until resumed or stopped (both wake the copier's event). */
  while (!copier_stopping (c)) {
    if (copier_loop (c) == TBQ_INTERRUPTED)
      tbq_wait (c->wake->copier_ev, NULL, 0, copier_resumed_or_stopped, c, -1);
  }
  return NULL;
}

TbqStatus
tbq_copier_thread_start (TbqCopier * c)
{
  if (c->grouped)
    return TBQ_BUSY;
  /* Relaxed: claimed before the thread exists, so that host steps are
   * refused from now on; nothing else depends on it. */
  if (atomic_exchange_explicit (&c->thread_running, 1, memory_order_relaxed))
    return TBQ_BUSY;
  atomic_store_explicit (&c->stop, 0, memory_order_relaxed);
  if (pthread_create (&c->thread, NULL, copier_thread_main, c) != 0) {
    atomic_store_explicit (&c->thread_running, 0, memory_order_relaxed);
    return TBQ_NO_MEMORY;
  }
  return TBQ_OK;
}

void
tbq_copier_thread_stop (TbqCopier * c)
{
  if (c->grouped || !copier_thread_exists (c))
    return;
  /* Relaxed: raised before unconditional wakes (block.h, "Events"). */
  atomic_store_explicit (&c->stop, 1, memory_order_relaxed);
  tbq_event_wake (c->wake->copier_ev);
  tbq_event_wake (&c->sink->ev);
  pthread_join (c->thread, NULL);
  /* The flag is for that thread only: left set, it would make every later
   * host step see work (so never time out) and give up on sink pressure
   * at once. */
  atomic_store_explicit (&c->stop, 0, memory_order_relaxed);
  atomic_store_explicit (&c->thread_running, 0, memory_order_relaxed);
}

bool
tbq_copier_thread_owes (TbqCopier * c)
{
  bool owes = false;
  uint32_t i, n;

  /* While the queue is interrupted the copier moves nothing: waiting for
   * it would never end. */
  /* Relaxed: the group's flag, a hint as the thread's. */
  if (c->grouped ? !atomic_load_explicit (c->group_serving,
          memory_order_relaxed) : !copier_thread_exists (c))
    return false;
  if (copier_interrupted (c))
    return false;
  tbq_registry_lock (c->registry);
  n = tbq_registry_span (c->registry);
  for (i = 0; i < n && !owes; i++) {
    TbqWriter *w = tbq_registry_at (c->registry, i);

    /* Acquire on copied_bytes: pairs with copier_moved(), so what it
     * covers is readable; the published total is only a number. */
    owes = w != NULL
        && atomic_load_explicit (&w->copied_bytes, memory_order_acquire)
        < atomic_load_explicit (&w->published_bytes, memory_order_relaxed);
  }
  tbq_registry_unlock (c->registry);
  return owes;
}

void
tbq_copier_wake (TbqCopier * c)
{
  tbq_event_wake (&c->sink->ev);
}

void
tbq_copier_stats (TbqCopier * c, TbqStats * st)
{
  st->bytes_copied = atomic_load_explicit (&c->bytes_copied,
      memory_order_relaxed);
  st->copier_passes = atomic_load_explicit (&c->passes, memory_order_relaxed);
  st->copier_wakeups = atomic_load_explicit (&c->wakeups, memory_order_relaxed);
  st->copier_sleeps = tbq_event_sleeps (c->wake->copier_ev)
      + tbq_event_sleeps (&c->sink->ev);
  st->sink_pressure_waits = atomic_load_explicit (&c->sink_pressure_waits,
      memory_order_relaxed);
  tbq_pool_stats (c->sink, &st->sink);
}
