/* Block pools: allocation, the LIFO free list, growth, trim, the shared
 * sink pool, its byte budget and its blocks' last references.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Page-multiple blocks are mmap'ed so that releasing one gives its memory
 * back to the system at once (glibc keeps freed heap chunks); pre-allocated
 * blocks are pre-faulted so the first burst does not page-fault.  See
 * pool.h for allocation failures and block.h for the free-list protocol.
 */
#include "pool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static void pool_unref (TbqPool * pool);

/* A failed allocation: remember why, and hold the pool where it is. */
static void
pool_alloc_failed (TbqPool * pool, int err)
{
  uint64_t total = atomic_load_explicit (&pool->total, memory_order_relaxed);

  atomic_store_explicit (&pool->limit, total, memory_order_relaxed);
  atomic_store_explicit (&pool->fail_errno, err, memory_order_relaxed);
  atomic_store_explicit (&pool->fail_total, total, memory_order_relaxed);
  /* Release: tbq_pool_take_error() that sees the count sees the details. */
  atomic_fetch_add_explicit (&pool->failures, 1, memory_order_release);
}

static TbqBlock *
block_alloc (TbqPool * pool, bool prefault)
{
  size_t size = pool->cfg.block_size;
  TbqBlock *b = NULL;

  /* A copy group's idle block first (faulted in already). */
  if (pool->share != NULL
      && (b = tbq_share_take_block (pool->share, size)) != NULL) {
  } else if (pool->use_mmap) {
    void *p = mmap (NULL, size, PROT_READ | PROT_WRITE,
        MAP_PRIVATE | MAP_ANONYMOUS | (prefault ? MAP_POPULATE : 0), -1, 0);

    if (p == MAP_FAILED) {
      pool_alloc_failed (pool, errno);
      return NULL;
    }
    b = p;
    b->mapped = 1;
  } else {
    b = aligned_alloc (TBQ_CACHELINE, size);
    if (b == NULL) {
      pool_alloc_failed (pool, errno != 0 ? errno : ENOMEM);
      return NULL;
    }
    if (prefault)
      memset (b, 0, size);
    b->mapped = 0;
  }
  atomic_init (&b->published, 0);
  atomic_init (&b->refs, 0);
  atomic_init (&b->next, NULL);
  b->free_next = NULL;
  b->pool = pool;
  b->extents = NULL;
  b->from_file = TBQ_FROM_FILE_NO;
  atomic_init (&b->unbudgeted, 0);
  b->capacity = (uint32_t) (size - TBQ_BLOCK_HEADER_SIZE);
  if (pool->shared)
    atomic_fetch_add_explicit (&pool->refs, 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&pool->total, 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&pool->allocations, 1, memory_order_relaxed);
  return b;
}

static void
block_release (TbqPool * pool, TbqBlock * b)
{
  atomic_fetch_sub_explicit (&pool->total, 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&pool->releases, 1, memory_order_relaxed);
  /* The pool shrinks: memory came back, so growth may be tried again. */
  atomic_store_explicit (&pool->limit, pool->cfg.max_blocks,
      memory_order_relaxed);
  tbq_pool_budget_lift (pool);
  /* A copy group's reserve keeps it for the members, up to its size. */
  if (pool->share != NULL
      && tbq_share_keep_block (pool->share, b, pool->cfg.block_size))
    ;
  else if (b->mapped)
    munmap (b, pool->cfg.block_size);
  else
    free (b);
  if (pool->shared)
    pool_unref (pool);
}

static void
pool_clear (TbqPool * pool)
{
  /* Acquire: we walk the pushers' free_next links. */
  TbqBlock *b = atomic_exchange_explicit (&pool->free_head, NULL,
      memory_order_acquire);

  while (b != NULL) {
    TbqBlock *n = b->free_next;

    atomic_fetch_sub_explicit (&pool->idle, 1, memory_order_relaxed);
    block_release (pool, b);
    b = n;
  }
}

static void
pool_events_clear (TbqPool * pool)
{
  tbq_event_clear (&pool->ev);
  tbq_event_clear (&pool->owner_ev);
}

/* Out of the copy group's share (holding nothing now), and let go of it. */
static void
pool_leave_share (TbqPool * pool)
{
  if (pool->share == NULL)
    return;
  if (pool->share_floor != 0)
    tbq_share_leave (pool->share, pool->share_floor);
  tbq_share_unref (pool->share);
}

static void
pool_unref (TbqPool * pool)
{
  /* Acq_rel: every use of the pool happens before the free. */
  if (atomic_fetch_sub_explicit (&pool->refs, 1, memory_order_acq_rel) == 1) {
    pool_events_clear (pool);
    pool_leave_share (pool);
    free (pool);
  }
}

static TbqStatus
pool_setup (TbqPool * pool, const TbqPoolConfig * cfg, bool shared,
    TbqShare * share, char *msg, size_t msg_size)
{
  long page = sysconf (_SC_PAGESIZE);
  size_t i;

  memset (pool, 0, sizeof *pool);
  pool->cfg = *cfg;
  pool->shared = shared;
  atomic_init (&pool->refs, 1);
  atomic_init (&pool->orphaned, 0);
  atomic_init (&pool->limit, cfg->max_blocks);
  /* No overflow: validation refuses a pool whose size overflows. */
  pool->bytes_max = (uint64_t) cfg->max_blocks * cfg->block_size;
  atomic_init (&pool->bytes_used, 0);
  atomic_init (&pool->bytes_limit, pool->bytes_max);
  atomic_init (&pool->bytes_peak, 0);
  tbq_event_init (&pool->ev);
  tbq_event_init (&pool->owner_ev);
  if (share != NULL) {
    /* Before anyone sees the pool (event.h): the group's copy threads
     * sleep on the share's doorbell. */
    tbq_share_ref (share);
    pool->share = share;
    tbq_event_forward (&pool->ev, &share->ev);
    tbq_event_forward (&pool->owner_ev, &share->ev);
    /* A member from now on: its floor is reserved (share.h). */
    if (tbq_share_join (share, 2 * (uint64_t) cfg->block_size, msg,
            msg_size) != TBQ_OK)
      return TBQ_NO_SPACE;
    pool->share_floor = 2 * (uint64_t) cfg->block_size;
  }
  pool->use_mmap = page > 0 && cfg->block_size % (size_t) page == 0;
  atomic_init (&pool->free_head, NULL);
  for (i = 0; i < cfg->min_blocks; i++) {
    TbqBlock *b = block_alloc (pool, true);

    if (b == NULL) {
      pool_clear (pool);
      return TBQ_NO_MEMORY;
    }
    tbq_pool_put (pool, b);
  }
  return TBQ_OK;
}

TbqStatus
tbq_pool_init (TbqPool * pool, const TbqPoolConfig * cfg)
{
  return pool_setup (pool, cfg, false, NULL, NULL, 0);
}

void
tbq_pool_fini (TbqPool * pool)
{
  pool_clear (pool);
  pool_events_clear (pool);
}

TbqPool *
tbq_pool_new_shared (const TbqPoolConfig * cfg, TbqShare * share,
    TbqStatus * st, char *msg, size_t msg_size)
{
  TbqPool *pool = tbq_alloc_aligned (sizeof *pool);

  if (pool == NULL) {
    *st = TBQ_NO_MEMORY;
    return NULL;
  }
  *st = pool_setup (pool, cfg, true, share, msg, msg_size);
  if (*st != TBQ_OK) {
    tbq_pool_take_error (pool, "sink pool", msg, msg_size);
    /* The blocks allocated so far were released, dropping their refs. */
    pool_events_clear (pool);
    pool_leave_share (pool);
    free (pool);
    return NULL;
  }
  return pool;
}

void
tbq_pool_orphan (TbqPool * pool)
{
  atomic_store_explicit (&pool->orphaned, 1, memory_order_relaxed);
  /* Seq_cst fence: `orphaned` before the free-list exchange (Dekker with
   * tbq_block_unref(): either it sees the flag, or we see its block). */
  atomic_thread_fence (memory_order_seq_cst);
  pool_clear (pool);
  pool_unref (pool);
}

void
tbq_pool_ref (TbqPool * pool)
{
  /* Relaxed: the caller holds a reference already. */
  atomic_fetch_add_explicit (&pool->refs, 1, memory_order_relaxed);
}

void
tbq_pool_unref (TbqPool * pool)
{
  pool_unref (pool);
}

/* The own counter first, then the share by the exact difference that
 * move made (share.h, `committed`). */
static void
pool_uncharge_quietly (TbqPool * pool, uint64_t bytes)
{
  /* Relaxed: see tbq_pool_charge(); the caller's notify orders it before
   * the waiters check (block.h, "Events"). */
  uint64_t used = atomic_fetch_sub_explicit (&pool->bytes_used, bytes,
      memory_order_relaxed);

  if (pool->share != NULL)
    tbq_share_uncharge (pool->share, pool->share_floor, used, bytes);
}

void
tbq_pool_uncharge (TbqPool * pool, uint64_t bytes)
{
  pool_uncharge_quietly (pool, bytes);
  tbq_event_notify (&pool->ev);
}

void
tbq_pool_budget_failed (TbqPool * pool, uint64_t keep)
{
  uint64_t used = atomic_load_explicit (&pool->bytes_used,
      memory_order_relaxed);
  uint64_t held = used < pool->bytes_max - keep ? used + keep : pool->bytes_max;

  atomic_store_explicit (&pool->bytes_limit, held, memory_order_relaxed);
}

void
tbq_pool_budget_lift (TbqPool * pool)
{
  /* Relaxed: as the block limit; the notify's fence orders it for a
   * writer waiting for room (block.h, "Events"). */
  if (atomic_load_explicit (&pool->bytes_limit, memory_order_relaxed)
      == pool->bytes_max)
    return;
  atomic_store_explicit (&pool->bytes_limit, pool->bytes_max,
      memory_order_relaxed);
  tbq_event_notify (&pool->ev);
}

void
tbq_pool_block_unref (TbqBlock * b)
{
  TbqPool *pool = b->pool;

  /* Acq_rel: every read of the block's bytes happens before its reuse. */
  if (atomic_fetch_sub_explicit (&b->refs, 1, memory_order_acq_rel) != 1)
    return;
  /* Hold the pool across the push: once on the free list the block (and
   * with it the pool) may be released by an orphaning queue. */
  atomic_fetch_add_explicit (&pool->refs, 1, memory_order_relaxed);
  tbq_pool_put (pool, b);
  /* The fence below orders it (the share's uncharge notifies on its own
   * when it frees cap: an orphaned pool notifies nothing). */
  pool_uncharge_quietly (pool, pool->cfg.block_size);
  /* Seq_cst fence: the push before the `orphaned` load (Dekker with
   * tbq_pool_orphan()); whoever comes second clears the free list. */
  atomic_thread_fence (memory_order_seq_cst);
  if (atomic_load_explicit (&pool->orphaned, memory_order_relaxed)) {
    pool_clear (pool);
  } else {
    tbq_event_notify (&pool->ev);
    /* Zero-copy holders return blocks after the reader moved on: an idle
     * copier sleeps until told, so tell it when there is surplus to trim. */
    if (tbq_pool_trim_due (pool))
      tbq_event_notify (&pool->owner_ev);
  }
  pool_unref (pool);
}

static TbqBlock *
pool_pop (TbqPool * pool)
{
  /* Acquire (load and CAS, success and failure): we read the pusher's
   * free_next store of the block we see.  Single popper: no ABA. */
  TbqBlock *b = atomic_load_explicit (&pool->free_head, memory_order_acquire);

  while (b != NULL && !atomic_compare_exchange_weak_explicit (&pool->free_head,
          &b, b->free_next, memory_order_acquire, memory_order_acquire)) {
  }
  if (b != NULL)
    atomic_fetch_sub_explicit (&pool->idle, 1, memory_order_relaxed);
  return b;
}

/* Pop or grow; the budget is the caller's. */
static TbqStatus
pool_take_block (TbqPool * pool, bool grow, TbqBlock ** out)
{
  TbqBlock *b = pool_pop (pool);

  if (b == NULL) {
    if (!grow || atomic_load_explicit (&pool->total, memory_order_relaxed)
        >= atomic_load_explicit (&pool->limit, memory_order_relaxed))
      return TBQ_NO_SPACE;
    b = block_alloc (pool, false);
    if (b == NULL)
      return TBQ_NO_MEMORY;
  }
  *out = b;
  return TBQ_OK;
}

TbqStatus
tbq_pool_take (TbqPool * pool, bool grow, TbqBlock ** out)
{
  TbqBlock *b;
  uint64_t in_use, used = 0;
  TbqStatus st;

  /* With a spill, blocks leave its read-back room free (pool.h). */
  if (pool->shared && !tbq_pool_charge (pool, pool->cfg.block_size,
          tbq_pool_readback_room (pool), &used))
    return TBQ_NO_SPACE;
  st = pool_take_block (pool, grow, &b);
  if (st != TBQ_OK) {
    if (pool->shared)
      tbq_pool_uncharge (pool, pool->cfg.block_size);
    return st;
  }
  if (pool->shared)
    tbq_pool_note_budget_peak (pool, used);
  in_use = atomic_load_explicit (&pool->total, memory_order_relaxed)
      - atomic_load_explicit (&pool->idle, memory_order_relaxed);
  if (in_use > atomic_load_explicit (&pool->peak, memory_order_relaxed))
    atomic_store_explicit (&pool->peak, in_use, memory_order_relaxed);
  b->free_next = NULL;
  *out = b;
  return TBQ_OK;
}

void
tbq_pool_put (TbqPool * pool, TbqBlock * b)
{
  TbqBlock *head =
      atomic_load_explicit (&pool->free_head, memory_order_relaxed);

  /* Count before pushing so `idle` never underflows when the popper takes
   * the block before our increment lands. */
  atomic_fetch_add_explicit (&pool->idle, 1, memory_order_relaxed);
  do {
    b->free_next = head;
    /* Release: the popper sees free_next and the block's last contents. */
  } while (!atomic_compare_exchange_weak_explicit (&pool->free_head, &head, b,
          memory_order_release, memory_order_relaxed));
}

void
tbq_pool_put_or_release (TbqPool * pool, TbqBlock * b)
{
  uint64_t idle = atomic_load_explicit (&pool->idle, memory_order_relaxed);
  uint64_t total = atomic_load_explicit (&pool->total, memory_order_relaxed);

  if (idle >= pool->cfg.max_idle_blocks && total > pool->cfg.min_blocks)
    block_release (pool, b);
  else
    tbq_pool_put (pool, b);
}

/* Cut the free list after its `keep` hottest blocks; returns the cold
 * tail.  Only the popper edits nodes already on the stack; pushers only
 * touch the node they push, above the current head. */
static TbqBlock *
pool_cut (TbqPool * pool, uint64_t keep)
{
  TbqBlock *b, *cut;
  uint64_t n;

  if (keep == 0) {
    /* Acquire: we walk the pushers' links.  Races with pushes: whatever
     * is more than wanted goes back. */
    return atomic_exchange_explicit (&pool->free_head, NULL,
        memory_order_acquire);
  }
  /* Acquire: as in pool_pop(). */
  b = atomic_load_explicit (&pool->free_head, memory_order_acquire);
  for (n = 1; b != NULL && n < keep; n++)
    b = b->free_next;
  if (b == NULL)
    return NULL;
  cut = b->free_next;
  b->free_next = NULL;
  return cut;
}

size_t
tbq_pool_trim (TbqPool * pool, uint64_t owner_holds)
{
  uint64_t idle = atomic_load_explicit (&pool->idle, memory_order_relaxed);
  uint64_t total = atomic_load_explicit (&pool->total, memory_order_relaxed);
  uint64_t excess;
  TbqBlock *cut;
  size_t released = 0;

  /* Idle: growth may be tried again when work comes.  After a failed
   * allocation (pool_alloc_failed() held the pool where it was), only
   * once every block is idle, a lull: while some are still in use the
   * pool works with what it has (a retry at each pass that found nothing
   * to move would fail one allocation after another, and say so each
   * time).  `owner_holds`: the blocks the popper keeps (the copier's
   * current one), idle for this purpose. */
  if (idle + owner_holds >= total)
    atomic_store_explicit (&pool->limit, pool->cfg.max_blocks,
        memory_order_relaxed);
  tbq_pool_budget_lift (pool);
  if (idle <= pool->cfg.max_idle_blocks || total <= pool->cfg.min_blocks)
    return 0;
  excess = idle - pool->cfg.max_idle_blocks;
  if (excess > total - pool->cfg.min_blocks)
    excess = total - pool->cfg.min_blocks;
  cut = pool_cut (pool, idle - excess);
  while (cut != NULL) {
    TbqBlock *next = cut->free_next;

    atomic_fetch_sub_explicit (&pool->idle, 1, memory_order_relaxed);
    if (released < excess) {
      block_release (pool, cut);
      released++;
    } else {
      tbq_pool_put (pool, cut);
    }
    cut = next;
  }
  return released;
}

void
tbq_pool_stats (TbqPool * pool, TbqPoolStats * st)
{
  uint64_t total = atomic_load_explicit (&pool->total, memory_order_relaxed);
  uint64_t idle = atomic_load_explicit (&pool->idle, memory_order_relaxed);

  st->block_size = pool->cfg.block_size;
  st->blocks_total = total;
  st->blocks_idle = idle > total ? total : idle;
  st->blocks_in_use = total - st->blocks_idle;
  st->blocks_peak = atomic_load_explicit (&pool->peak, memory_order_relaxed);
  st->blocks_limit = atomic_load_explicit (&pool->limit, memory_order_relaxed);
  st->allocations = atomic_load_explicit (&pool->allocations,
      memory_order_relaxed);
  st->releases = atomic_load_explicit (&pool->releases, memory_order_relaxed);
  st->alloc_failures = atomic_load_explicit (&pool->failures,
      memory_order_relaxed);
}

void
tbq_pool_stats_add (TbqPoolStats * sum, const TbqPoolStats * add)
{
  sum->blocks_total += add->blocks_total;
  sum->blocks_in_use += add->blocks_in_use;
  sum->blocks_peak += add->blocks_peak;
  sum->blocks_idle += add->blocks_idle;
  sum->blocks_limit += add->blocks_limit;
  sum->allocations += add->allocations;
  sum->releases += add->releases;
  sum->alloc_failures += add->alloc_failures;
}

TbqStatus
tbq_pool_take_error (TbqPool * pool, const char *name, char *msg,
    size_t msg_size)
{
  /* Acquire: pairs with pool_alloc_failed(): the details below are its. */
  uint64_t failures = atomic_load_explicit (&pool->failures,
      memory_order_acquire);
  uint64_t taken = atomic_load_explicit (&pool->failures_taken,
      memory_order_relaxed);
  uint64_t held;

  /* Relaxed CAS: only decides which caller reports this failure. */
  if (failures == taken || !atomic_compare_exchange_strong_explicit
      (&pool->failures_taken, &taken, failures, memory_order_relaxed,
          memory_order_relaxed))
    return TBQ_OK;
  held = atomic_load_explicit (&pool->fail_total, memory_order_relaxed);
  if (msg != NULL && msg_size > 0)
    snprintf (msg, msg_size, "%s: cannot allocate a block of %zu bytes "
        "(holding %" PRIu64 " blocks, %" PRIu64 " bytes): %s; it grows no "
        "further until it shrinks", name, pool->cfg.block_size, held,
        held * (uint64_t) pool->cfg.block_size,
        strerror (atomic_load_explicit (&pool->fail_errno,
                memory_order_relaxed)));
  return TBQ_NO_MEMORY;
}
