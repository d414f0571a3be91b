/* The writer: one per producer thread, appends records to its source pool
 * (its write sessions are in session.c).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hot path touches only writer-owned fields and the current block; it
 * publishes with release stores (block.h, "Chains") and asks the wake
 * module whether anyone must be woken.  malloc/mmap happen only when the
 * source pool grows beyond its pre-allocated blocks, and for large records
 * when the extents' idle cache has none of their size.
 *
 * Large records: a record whose span exceeds the inline limit takes the
 * slow path, which puts its payload into an extent (extent.h) and an
 * indirect record (block.h) into the current block.  The inline limit is
 * a quarter of a source block: a record that does not fit the rest of a
 * block wastes at most that much of it, and above it one copy into an
 * extent costs less than the second copy, by the copier (docs).  A
 * record that no extent can ever hold (a sink pool too small) but a source
 * block can travels inline, as all records did before extents.
 */
#include "writer.h"

static inline void
writer_restore_end (TbqWriter * w)
{
  w->wend = w->cur->data + w->cur->capacity;
}

static void
writer_start_block (TbqWriter * w, TbqBlock * b)
{
  w->cur = b;
  w->wpos = b->data;
  writer_restore_end (w);
  w->pub_off = 0;
}

uint32_t
tbq_writer_inline_max (size_t block_size)
{
  size_t data = block_size - TBQ_BLOCK_HEADER_SIZE;
  size_t span = (data / 4) & ~(size_t) (TBQ_RECORD_ALIGN - 1);

  /* Small records always travel inline: no extent for a sensor sample,
   * however small the source blocks (and the inline session check folds
   * away for them).  Validation keeps blocks at 128 bytes or more, so an
   * indirect record always fits under the limit. */
  if (span < TBQ_RECORD_SPAN (TBQ_INLINE_MIN))
    span = TBQ_RECORD_SPAN (TBQ_INLINE_MIN);
  return (uint32_t) (span < data ? span : data);
}

TbqStatus
tbq_writer_open (const TbqConfig * cfg, TbqWake * wake,
    TbqExtents * extents, const _Atomic int *interrupted, TbqWriter ** out)
{
  TbqWriter *w = tbq_alloc_aligned (sizeof *w);
  TbqBlock *b;

  if (w == NULL)
    return TBQ_NO_MEMORY;
  if (tbq_pool_init (&w->pool, &cfg->source) != TBQ_OK
      || tbq_pool_take (&w->pool, true, &b) != TBQ_OK) {
    tbq_pool_fini (&w->pool);
    free (w);
    return TBQ_NO_MEMORY;
  }
  w->publish = cfg->publish;
  w->publish_every = cfg->publish_every ? cfg->publish_every : 1;
  w->wake_policy = cfg->wake;
  w->backpressure = cfg->backpressure;
  w->block_timeout_ns = cfg->block_timeout_ns;
  w->handoff_wake = tbq_wake_handoff_threshold (cfg->source.max_blocks);
  w->wake = wake;
  w->interrupted = interrupted;
  w->extents = extents;
  w->inline_max = tbq_writer_inline_max (cfg->source.block_size);
  w->large_refusal = TBQ_NO_SPACE;
  tbq_block_reset (b);
  writer_start_block (w, b);
  w->copy_blk = b;
  w->copy_off = 0;
  *out = w;
  return TBQ_OK;
}

void
tbq_writer_totals (TbqWriter * w, TbqWriterTotals * t)
{
  TbqPoolStats ps;

  t->records_in = atomic_load_explicit (&w->records_in, memory_order_relaxed);
  t->bytes_in = atomic_load_explicit (&w->bytes_in, memory_order_relaxed);
  t->records_dropped = atomic_load_explicit (&w->records_dropped,
      memory_order_relaxed);
  t->handoffs = atomic_load_explicit (&w->handoffs, memory_order_relaxed);
  t->pressure_waits = atomic_load_explicit (&w->pressure_waits,
      memory_order_relaxed);
  t->extent_waits = atomic_load_explicit (&w->extent_waits,
      memory_order_relaxed);
  t->wakeups = atomic_load_explicit (&w->wakeups, memory_order_relaxed);
  t->sleeps = tbq_event_sleeps (&w->pool.ev);
  tbq_pool_stats (&w->pool, &ps);
  t->source_allocations = ps.allocations;
  t->source_releases = ps.releases;
  t->source_alloc_failures = ps.alloc_failures;
}

/* Give up a reserved, uncommitted large record, and an extent taken for
 * a session's retry: they go back. */
void
tbq_writer_drop_large (TbqWriter * w)
{
  if (w->session_extent != NULL) {
    tbq_extent_unref (w->session_extent);
    w->session_extent = NULL;
  }
  if (w->large == NULL)
    return;
  tbq_extent_unref (w->large);
  w->large = NULL;
  writer_restore_end (w);
}

void
tbq_writer_destroy (TbqWriter * w, TbqWriterTotals * final)
{
  tbq_writer_drop_large (w);
  /* Only the current block is still out of the pool. */
  tbq_pool_put (&w->pool, w->cur);
  tbq_pool_fini (&w->pool);
  if (final != NULL)
    tbq_writer_totals (w, final);
  free (w);
}

void
tbq_writer_retire_locked (TbqWriter * w, TbqRegistry * reg)
{
  uint32_t slot = w->slot;
  TbqWriterTotals final;

  tbq_writer_destroy (w, &final);
  tbq_registry_retire_locked (reg, slot, &final);
}

void
tbq_writer_wake (TbqWriter * w)
{
  tbq_event_wake (&w->pool.ev);
}

TbqStatus
tbq_writer_set_backpressure (TbqWriter * w, TbqBackpressure mode,
    int64_t timeout_ns)
{
  if (w == NULL || (unsigned) mode > TBQ_BACKPRESSURE_DROP)
    return TBQ_INVALID_ARGUMENT;
  w->backpressure = mode;
  w->block_timeout_ns = timeout_ns;
  return TBQ_OK;
}

TbqStatus
tbq_writer_set_publish (TbqWriter * w, TbqPublishPolicy policy, uint32_t every)
{
  if (w == NULL || (unsigned) policy > TBQ_PUBLISH_AT_HANDOFF)
    return TBQ_INVALID_ARGUMENT;
  w->publish = policy;
  w->publish_every = every ? every : 1;
  return TBQ_OK;
}

/* Make everything below wpos visible to the copier, when wpos moved past
 * what was published. */
static inline void
writer_publish_more (TbqWriter * w)
{
  uint32_t off = (uint32_t) (w->wpos - w->cur->data);

  /* Release: the record bytes (and the extents that indirect records
   * point to) before the offset that covers them. */
  atomic_store_explicit (&w->cur->published, off, memory_order_release);
  /* Release, and after `published`: a has-work check that sees the new
   * total (acquire) finds the records published when it then looks. */
  atomic_store_explicit (&w->published_bytes,
      atomic_load_explicit (&w->published_bytes, memory_order_relaxed)
      + (off - w->pub_off), memory_order_release);
  w->pub_off = off;
}

/* Make everything below wpos visible to the copier. */
static inline void
writer_publish (TbqWriter * w)
{
  if ((uint32_t) (w->wpos - w->cur->data) == w->pub_off)
    return;
  writer_publish_more (w);
  w->unpublished = 0;
}

void
tbq_writer_publish (TbqWriter * w)
{
  if (w != NULL)
    writer_publish (w);
}

static bool
writer_space_ready (void *arg)
{
  TbqWriter *w = arg;

  return tbq_pool_can_take (&w->pool);
}

/* No block to take (`st`: TBQ_NO_SPACE, or TBQ_NO_MEMORY when growing
 * failed just now).  Backpressure decides: drop, or wait for the copier
 * to return one.  A failed allocation is reported to this caller once;
 * after it the pool holds still and the next write sees backpressure. */
static TbqStatus
writer_wait_for_block (TbqWriter * w, TbqStatus st, TbqBlock ** nb)
{
  int64_t deadline;

  /* Let the copier drain what we have before anyone waits on it. */
  writer_publish (w);
  tbq_writer_woke (w, tbq_wake_copier (w->wake));
  if (st == TBQ_NO_MEMORY)
    return st;
  if (w->backpressure == TBQ_BACKPRESSURE_DROP)
    return TBQ_DROPPED;
  tbq_count (&w->pressure_waits, 1);
  deadline = tbq_deadline (w->block_timeout_ns);
  for (;;) {
    st = tbq_wait (&w->pool.ev, w->interrupted, 0, writer_space_ready, w,
        deadline);
    if (st != TBQ_OK)
      return st;
    st = tbq_pool_take (&w->pool, true, nb);
    if (st != TBQ_NO_SPACE)
      return st;
  }
}

/* Seal the current block and continue in a fresh one. */
TbqStatus
tbq_writer_handoff (TbqWriter * w)
{
  TbqBlock *nb;
  TbqStatus st = tbq_pool_take (&w->pool, true, &nb);
  uint64_t sealed;

  if (TBQ_UNLIKELY (st != TBQ_OK)) {
    st = writer_wait_for_block (w, st, &nb);
    if (st != TBQ_OK)
      return st;
  }
  tbq_block_reset (nb);
  writer_publish (w);
  /* Release: the final `published` and nb's reset happen before the
   * copier can follow the link (this store seals the block). */
  atomic_store_explicit (&w->cur->next, nb, memory_order_release);
  tbq_count (&w->handoffs, 1);
  writer_start_block (w, nb);
  sealed = atomic_load_explicit (&w->handoffs, memory_order_relaxed)
      - atomic_load_explicit (&w->blocks_returned, memory_order_relaxed);
  tbq_writer_woke (w, tbq_wake_handed_off (w->wake, w->wake_policy, sealed,
          w->handoff_wake));
  return TBQ_OK;
}

static inline TbqStatus
writer_fail (TbqWriter * w, TbqStatus st)
{
  tbq_count (&w->records_dropped, 1);
  return st;
}

/* Room for `span` bytes at wpos: there already, or in a fresh block
 * (TBQ_TOO_LARGE when no block holds them).  Not counted. */
TbqStatus
tbq_writer_make_room (TbqWriter * w, size_t span)
{
  if (span <= (size_t) (w->wend - w->wpos))
    return TBQ_OK;
  if (span > w->cur->capacity)
    return TBQ_TOO_LARGE;
  return tbq_writer_handoff (w);
}

static bool
writer_room_ready (void *arg)
{
  TbqWriter *w = arg;

  return tbq_extents_have_room (w->extents, w->large_size);
}

/* The sink budget has no room for an extent of w->large_size bytes now.
 * Backpressure decides: drop, or wait until it may have (TBQ_OK: take
 * again) up to `deadline`.  Published first: the budget may be held by
 * this writer's own records. */
static TbqStatus
writer_wait_for_room (TbqWriter * w, int64_t deadline)
{
  writer_publish (w);
  /* The copier must move the current block too, whatever the wake
   * policy: the records that free the budget may be there. */
  tbq_wake_request_pickup (w->wake);
  tbq_writer_woke (w, tbq_wake_copier (w->wake));
  if (w->backpressure == TBQ_BACKPRESSURE_DROP)
    return TBQ_DROPPED;
  return tbq_wait (tbq_extents_event (w->extents), w->interrupted, 0,
      writer_room_ready, w, deadline);
}

/* An extent for a record of `size` bytes; waits or drops per
 * backpressure when the budget has no room. */
TbqStatus
tbq_writer_wait_for_extent (TbqWriter * w, uint32_t size, TbqBlock ** e)
{
  TbqStatus st = tbq_extent_take (w->extents, size, e);
  int64_t deadline;

  if (TBQ_LIKELY (st != TBQ_NO_SPACE))
    return st;
  w->large_size = size;
  if (w->backpressure == TBQ_BACKPRESSURE_BLOCK)
    tbq_count (&w->extent_waits, 1);
  deadline = tbq_deadline (w->block_timeout_ns);
  do {
    st = writer_wait_for_room (w, deadline);
    if (st == TBQ_OK)
      st = tbq_extent_take (w->extents, size, e);
  } while (st == TBQ_NO_SPACE);
  return st;
}

/* An extent for a record of `size` bytes, after making room for its
 * indirect record at wpos.  Not counted. */
static TbqStatus
writer_take_extent (TbqWriter * w, uint32_t size, TbqBlock ** e)
{
  TbqStatus st = tbq_writer_make_room (w, TBQ_INDIRECT_SPAN);

  if (st != TBQ_OK)
    return st;
  return tbq_writer_wait_for_extent (w, size, e);
}

/* Queue the record of `span` block bytes and `size` payload bytes at wpos,
 * and publish per policy. */
static inline void
writer_commit_span (TbqWriter * w, size_t span, uint32_t size)
{
  w->wpos += span;
  tbq_count (&w->records_in, 1);
  tbq_count (&w->bytes_in, size);
  /* The policies are bits (EVERY_RECORD 0, EVERY_N 1, AT_HANDOFF 2): one
   * test each, AT_HANDOFF's first. */
  if (w->publish & TBQ_PUBLISH_AT_HANDOFF)
    return;
  if (w->publish & TBQ_PUBLISH_EVERY_N) {
    if (++w->unpublished < w->publish_every)
      return;
    w->unpublished = 0;
  }
  /* wpos just moved: no check for nothing new. */
  writer_publish_more (w);
  tbq_writer_woke (w, tbq_wake_published (w->wake, w->wake_policy));
}

/* Queue the inline record at wpos, `size` payload bytes. */
static inline void
writer_commit (TbqWriter * w, uint32_t size)
{
  writer_commit_span (w, TBQ_RECORD_SPAN (size), size);
}

/* Write a whole record that fits at wpos. */
static inline void
writer_put (TbqWriter * w, uint16_t type, const void *data, uint32_t size)
{
  unsigned char *p = w->wpos;

  tbq_writer_put_header (p, type, size);
  memcpy (p + TBQ_RECORD_HEADER_SIZE, data, size);
  writer_commit (w, size);
}

/* Queue the indirect record of a large record whose payload is in `e`
 * (room made by writer_take_extent()). */
static void
writer_put_indirect (TbqWriter * w, uint16_t type, uint32_t size, TbqBlock * e)
{
  tbq_record_put_indirect (w->wpos, type, size, e);
  writer_commit_span (w, TBQ_INDIRECT_SPAN, size);
}

/* tbq_writer_write() when the record is large or the current block has
 * no room: a call of its own, so that the fast path needs no stack
 * frame. */
static __attribute__((noinline)) TbqStatus
writer_write_slow (TbqWriter * w, uint16_t type, const void *data,
    uint32_t size)
{
  size_t span = tbq_writer_span (size);
  TbqBlock *e;
  TbqStatus st;

  /* A write gives up a large reservation (wend held at wpos for it). */
  tbq_writer_drop_large (w);
  if (tbq_writer_is_inline (w, span, size)) {
    st = tbq_writer_make_room (w, span);
    if (st != TBQ_OK)
      return writer_fail (w, st);
    writer_put (w, type, data, size);
    return TBQ_OK;
  }
  st = writer_take_extent (w, size, &e);
  if (st != TBQ_OK)
    return writer_fail (w, st);
  /* The one copy of a large record. */
  memcpy (e->data, data, size);
  writer_put_indirect (w, type, size, e);
  return TBQ_OK;
}

/* tbq_writer_reserve() when the record is large or the current block has
 * no room.  A large record's reservation is its extent; wend is held at
 * wpos until the commit, so that any other write or reserve comes here
 * first and gives it up. */
static __attribute__((noinline)) TbqStatus
writer_reserve_slow (TbqWriter * w, uint16_t type, uint32_t size, void **data)
{
  size_t span = tbq_writer_span (size);
  TbqBlock *e;
  TbqStatus st;

  tbq_writer_drop_large (w);
  w->reserved = NULL;
  if (tbq_writer_is_inline (w, span, size)) {
    st = tbq_writer_make_room (w, span);
    if (st != TBQ_OK)
      return writer_fail (w, st);
    tbq_writer_put_header (w->wpos, type, size);
    w->reserved = w->wpos;
    *data = w->wpos + TBQ_RECORD_HEADER_SIZE;
    return TBQ_OK;
  }
  st = writer_take_extent (w, size, &e);
  if (st != TBQ_OK)
    return writer_fail (w, st);
  w->large = e;
  w->large_size = size;
  w->large_type = type;
  w->wend = w->wpos;
  *data = e->data;
  return TBQ_OK;
}

TbqStatus
tbq_writer_reserve (TbqWriter * w, uint16_t type, uint32_t size, void **data)
{
  size_t span;

  if (TBQ_UNLIKELY (w == NULL || data == NULL))
    return TBQ_INVALID_ARGUMENT;
  span = tbq_writer_span (size);
  if (TBQ_UNLIKELY (span > (size_t) (w->wend - w->wpos)
          || span > w->inline_max))
    return writer_reserve_slow (w, type, size, data);
  tbq_writer_put_header (w->wpos, type, size);
  w->reserved = w->wpos;
  *data = w->wpos + TBQ_RECORD_HEADER_SIZE;
  return TBQ_OK;
}

/* Commit a reserved large record: its indirect record goes where the
 * reservation made room. */
static TbqStatus
writer_commit_large (TbqWriter * w)
{
  TbqBlock *e = w->large;

  w->large = NULL;
  writer_restore_end (w);
  writer_put_indirect (w, w->large_type, w->large_size, e);
  return TBQ_OK;
}

TbqStatus
tbq_writer_commit (TbqWriter * w)
{
  /* Nothing reserved, or written over since (a write between reserve and
   * commit): nothing to commit.  A large record has no `reserved`. */
  if (TBQ_UNLIKELY (w == NULL || w->reserved == NULL || w->reserved != w->wpos)) {
    if (w != NULL && w->large != NULL)
      return writer_commit_large (w);
    return TBQ_INVALID_ARGUMENT;
  }
  w->reserved = NULL;
  writer_commit (w, tbq_record_at (w->wpos)->size);
  return TBQ_OK;
}

void
tbq_writer_cancel (TbqWriter * w)
{
  if (w == NULL)
    return;
  w->reserved = NULL;
  tbq_writer_drop_large (w);
}

/* The source of an empty record written without a buffer: memcpy from
 * NULL is undefined even for 0 bytes. */
static const unsigned char writer_nothing;

/* Reserve, copy and commit in one call, without going through the exported
 * reserve/commit entry points. */
TbqStatus
tbq_writer_write (TbqWriter * w, uint16_t type, const void *data, uint32_t size)
{
  size_t span;

  if (TBQ_UNLIKELY (w == NULL))
    return TBQ_INVALID_ARGUMENT;
  if (TBQ_UNLIKELY (data == NULL)) {
    /* A zero-size record may come with no buffer. */
    if (size != 0)
      return TBQ_INVALID_ARGUMENT;
    data = &writer_nothing;
  }
  span = tbq_writer_span (size);
  if (TBQ_UNLIKELY (span > (size_t) (w->wend - w->wpos)
          || span > w->inline_max))
    return writer_write_slow (w, type, data, size);
  writer_put (w, type, data, size);
  return TBQ_OK;
}

static void
writer_flush (TbqWriter * w, bool reader_only)
{
  if (w == NULL)
    return;
  writer_publish (w);
  tbq_writer_woke (w, tbq_wake_flushed (w->wake, w->wake_policy,
          reader_only));
}

void
tbq_writer_flush (TbqWriter * w)
{
  writer_flush (w, false);
}

void
tbq_writer_offer (TbqWriter * w)
{
  writer_flush (w, true);
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

  /* Acquire: pairs with the copier's release after publishing the sink
   * block, so the records are readable once this holds. */
  return atomic_load_explicit (&s->w->copied_bytes, memory_order_acquire)
      >= s->target;
}

TbqStatus
tbq_writer_sync (TbqWriter * w, int64_t timeout_ns)
{
  if (w == NULL)
    return TBQ_INVALID_ARGUMENT;
  /* Waiting for the copier asks it to move the current block, if needed. */
  writer_publish (w);
  return tbq_writer_wait_copied (w, timeout_ns);
}

TbqStatus
tbq_writer_wait_copied (TbqWriter * w, int64_t timeout_ns)
{
  SyncArg s;

  if (w == NULL)
    return TBQ_INVALID_ARGUMENT;
  s.w = w;
  /* What the writer has published so far (it may be another thread).
   * Acquire: pairs with writer_publish(); passed on to the copier by the
   * pickup request's release. */
  s.target = atomic_load_explicit (&w->published_bytes, memory_order_acquire);
  /* With on-demand wake nobody may have woken the copier. */
  if (!writer_synced (&s)) {
    tbq_wake_request_pickup (w->wake);
    tbq_wake_copier (w->wake);
  }
  return tbq_wait (&w->pool.ev, w->interrupted, 0, writer_synced, &s,
      tbq_deadline (timeout_ns));
}

void
tbq_writer_close (TbqWriter * w)
{
  TbqWake *wake;

  if (w == NULL)
    return;
  wake = w->wake;
  tbq_writer_drop_large (w);
  tbq_writer_flush (w);
  /* Release: the copier that sees `closed` also sees the last publish.
   * From here on the copier may free `w`. */
  atomic_store_explicit (&w->closed, 1, memory_order_release);
  tbq_wake_copier (wake);
}

/* ---- discard ---- */

void
tbq_writer_discard (TbqWriter * w, TbqReleaseFunc release, void *user_data,
    uint64_t * count)
{
  TbqBlock *b = w->copy_blk;
  uint32_t off = w->copy_off;

  tbq_writer_drop_large (w);
  /* Relaxed loads and stores: nothing else runs, and the caller's own
   * synchronisation with the other parties orders their stores before
   * ours. */
  for (;;) {
    uint32_t end = b == w->cur ? (uint32_t) (w->wpos - b->data)
        : atomic_load_explicit (&b->published, memory_order_relaxed);
    TbqBlock *next;

    *count += tbq_records_release (b->data, off, end, release, user_data);
    if (b == w->cur)
      break;
    next = atomic_load_explicit (&b->next, memory_order_relaxed);
    tbq_pool_put (&w->pool, b);
    /* A sealed block given back: else the copier would count it as
     * waiting for it forever (copier_has_work). */
    tbq_count (&w->blocks_returned, 1);
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
      memory_order_relaxed);
}
