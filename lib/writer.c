/* The writer: one per producer thread, appends records to its source pool;
 * also its write sessions.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hot path touches only writer-owned fields and the current block; it
 * publishes with release stores (block.h, "Chains") and asks the wake
 * module whether anyone must be woken.  malloc/mmap happen only when the
 * source pool grows beyond its pre-allocated blocks.
 */
#include "writer.h"

static void
writer_start_block (TbqWriter * w, TbqBlock * b)
{
  w->cur = b;
  w->wpos = b->data;
  w->wend = b->data + b->capacity;
  w->pub_off = 0;
}

TbqStatus
tbq_writer_open (const TbqConfig * cfg, TbqWake * wake,
    const _Atomic int *interrupted, TbqWriter ** out)
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
  t->wakeups = atomic_load_explicit (&w->wakeups, memory_order_relaxed);
  t->sleeps = tbq_event_sleeps (&w->pool.ev);
  tbq_pool_stats (&w->pool, &ps);
  t->source_allocations = ps.allocations;
  t->source_releases = ps.releases;
  t->source_alloc_failures = ps.alloc_failures;
}

void
tbq_writer_destroy (TbqWriter * w, TbqWriterTotals * final)
{
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

/* Count the wake-ups (system calls) the writer's thread made. */
static inline void
writer_woke (TbqWriter * w, int wakeups)
{
  if (wakeups != 0)
    tbq_count (&w->wakeups, (uint64_t) wakeups);
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
  writer_woke (w, tbq_wake_copier (w->wake));
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
static TbqStatus
writer_handoff (TbqWriter * w)
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
  writer_woke (w, tbq_wake_handed_off (w->wake, w->wake_policy, sealed,
          w->handoff_wake));
  return TBQ_OK;
}

/* A record of `span` bytes can never fit a source block.  The one place
 * that decides about such records: refused for now. */
static TbqStatus
writer_large_record (TbqWriter * w, size_t span)
{
  (void) w;
  (void) span;
  return TBQ_TOO_LARGE;
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
    return writer_fail (w, writer_large_record (w, span));
  st = writer_handoff (w);
  if (st != TBQ_OK)
    return writer_fail (w, st);
  return TBQ_OK;
}

/* Bytes a record of `size` takes: SIZE_MAX where that does not fit a
 * 32-bit size_t (it can never fit a block). */
static inline size_t
writer_span (uint32_t size)
{
  size_t span = TBQ_RECORD_SPAN (size);

#if SIZE_MAX <= UINT32_MAX
  if (span < size)
    span = SIZE_MAX;
#endif
  return span;
}

static inline void
writer_header (unsigned char *p, uint16_t type, uint32_t size)
{
  TbqRecordHeader h;

  h.size = size;
  h.type = type;
  h.reserved = 0;
  memcpy (p, &h, sizeof h);
}

/* Write the header of a `size`-byte record at wpos (making room first). */
static inline TbqStatus
writer_reserve (TbqWriter * w, uint16_t type, uint32_t size)
{
  size_t span = writer_span (size);

  if (TBQ_UNLIKELY (span > (size_t) (w->wend - w->wpos))) {
    TbqStatus st = writer_make_room (w, span);

    if (st != TBQ_OK)
      return st;
  }
  writer_header (w->wpos, type, size);
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
  writer_woke (w, tbq_wake_published (w->wake, w->wake_policy));
}

/* Write a whole record that fits at wpos. */
static inline void
writer_put (TbqWriter * w, uint16_t type, const void *data, uint32_t size)
{
  unsigned char *p = w->wpos;

  writer_header (p, type, size);
  memcpy (p + TBQ_RECORD_HEADER_SIZE, data, size);
  writer_commit (w, size);
}

/* tbq_writer_write() when the current block has no room: a call of its
 * own, so that the fast path needs no stack frame. */
static __attribute__((noinline)) TbqStatus
writer_write_slow (TbqWriter * w, uint16_t type, const void *data,
    uint32_t size)
{
  TbqStatus st = writer_make_room (w, writer_span (size));

  if (st != TBQ_OK)
    return st;
  writer_put (w, type, data, size);
  return TBQ_OK;
}

TbqStatus
tbq_writer_reserve (TbqWriter * w, uint16_t type, uint32_t size, void **data)
{
  TbqStatus st;

  if (TBQ_UNLIKELY (w == NULL || data == NULL))
    return TBQ_INVALID_ARGUMENT;
  st = writer_reserve (w, type, size);
  if (TBQ_UNLIKELY (st != TBQ_OK))
    return st;
  w->reserved = w->wpos;
  *data = w->wpos + TBQ_RECORD_HEADER_SIZE;
  return TBQ_OK;
}

TbqStatus
tbq_writer_commit (TbqWriter * w)
{
  /* Nothing reserved, or written over since (a write between reserve and
   * commit): nothing to commit. */
  if (TBQ_UNLIKELY (w == NULL || w->reserved == NULL || w->reserved != w->wpos))
    return TBQ_INVALID_ARGUMENT;
  w->reserved = NULL;
  writer_commit (w, tbq_record_at (w->wpos)->size);
  return TBQ_OK;
}

void
tbq_writer_cancel (TbqWriter * w)
{
  if (w != NULL)
    w->reserved = NULL;
}

/* The source of an empty record written without a buffer: memcpy from
 * NULL is undefined even for 0 bytes. */
static const unsigned char writer_nothing;

/* Reserve, copy and commit in one call, without going through the exported
 * reserve/commit entry points. */
TbqStatus
tbq_writer_write (TbqWriter * w, uint16_t type, const void *data, uint32_t size)
{
  if (TBQ_UNLIKELY (w == NULL))
    return TBQ_INVALID_ARGUMENT;
  if (TBQ_UNLIKELY (data == NULL)) {
    /* A zero-size record may come with no buffer. */
    if (size != 0)
      return TBQ_INVALID_ARGUMENT;
    data = &writer_nothing;
  }
  if (TBQ_UNLIKELY (writer_span (size) > (size_t) (w->wend - w->wpos)))
    return writer_write_slow (w, type, data, size);
  writer_put (w, type, data, size);
  return TBQ_OK;
}

void
tbq_writer_flush (TbqWriter * w)
{
  if (w == NULL)
    return;
  writer_publish (w);
  writer_woke (w, tbq_wake_flushed (w->wake, w->wake_policy));
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
  tbq_writer_flush (w);
  /* Release: the copier that sees `closed` also sees the last publish.
   * From here on the copier may free `w`. */
  atomic_store_explicit (&w->closed, 1, memory_order_release);
  tbq_wake_copier (wake);
}

/* ---- write sessions ---- */

void
tbq_session_begin_impl (TbqWriter * w, TbqSession * s)
{
  if (s == NULL)
    return;
  memset (s, 0, sizeof *s);
  /* No writer: pos == end, so every reservation fails and
   * tbq_session_next_block() says TBQ_INVALID_ARGUMENT. */
  if (w == NULL)
    return;
  w->reserved = NULL;           /* a session ends an open reservation */
  s->pos = w->wpos;
  s->end = w->wend;
  s->writer = w;
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
  TbqWriter *w = s != NULL ? s->writer : NULL;

  if (w == NULL)
    return;
  session_account (s);
  writer_publish (w);
  writer_woke (w, tbq_wake_published (w->wake, w->wake_policy));
}

TbqStatus
tbq_session_next_block_impl (TbqSession * s)
{
  TbqWriter *w = s != NULL ? s->writer : NULL;
  size_t wanted;
  TbqStatus st;

  if (w == NULL)
    return TBQ_INVALID_ARGUMENT;
  wanted = s->wanted;
  session_account (s);
  s->wanted = 0;
  /* The record refused last would not fit a fresh block either. */
  if (TBQ_UNLIKELY (wanted > w->cur->capacity))
    return writer_large_record (w, wanted);
  st = writer_handoff (w);
  s->pos = w->wpos;
  s->end = w->wend;
  return st;
}

/* ---- discard ---- */

void
tbq_writer_discard (TbqWriter * w, TbqReleaseFunc release, void *user_data,
    uint64_t * count)
{
  TbqBlock *b = w->copy_blk;
  uint32_t off = w->copy_off;

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
