/* Pools of fixed-size blocks with a LIFO free list.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Page-multiple blocks are mmap'ed so that releasing one gives its memory
 * back to the system at once (glibc keeps freed heap chunks); pre-allocated
 * blocks are pre-faulted so the first burst does not page-fault.
 */
#include "tbq-private.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static TbqBlock *
block_alloc (TbqPool * pool, bool prefault)
{
  size_t size = pool->cfg.block_size;
  TbqBlock *b;

  if (pool->use_mmap) {
    void *p = mmap (NULL, size, PROT_READ | PROT_WRITE,
        MAP_PRIVATE | MAP_ANONYMOUS | (prefault ? MAP_POPULATE : 0), -1, 0);

    if (p == MAP_FAILED)
      return NULL;
    b = p;
    b->mapped = 1;
  } else {
    b = aligned_alloc (TBQ_CACHELINE, size);
    if (b == NULL)
      return NULL;
    if (prefault)
      memset (b, 0, size);
    b->mapped = 0;
  }
  atomic_init (&b->published, 0);
  atomic_init (&b->refs, 0);
  atomic_init (&b->next, NULL);
  b->free_next = NULL;
  b->pool = pool;
  b->capacity = (uint32_t) (size - TBQ_BLOCK_HEADER_SIZE);
  if (pool->shared)
    atomic_fetch_add_explicit (&pool->refs, 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&pool->total, 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&pool->allocations, 1, memory_order_relaxed);
  return b;
}

static void pool_unref (TbqPool * pool);
static TbqStatus pool_init (TbqPool * pool, const TbqPoolConfig * cfg,
    bool shared);

static void
block_release (TbqPool * pool, TbqBlock * b)
{
  atomic_fetch_sub_explicit (&pool->total, 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&pool->releases, 1, memory_order_relaxed);
  if (b->mapped)
    munmap (b, pool->cfg.block_size);
  else
    free (b);
  if (pool->shared)
    pool_unref (pool);
}

static void
pool_unref (TbqPool * pool)
{
  /* Acq_rel: every use of the pool happens before the free. */
  if (atomic_fetch_sub_explicit (&pool->refs, 1, memory_order_acq_rel) == 1) {
    tbq_event_clear (&pool->ev);
    tbq_event_clear (&pool->work_ev);
    free (pool);
  }
}

TbqPool *
tbq_pool_new_shared (const TbqPoolConfig * cfg, TbqStatus * st)
{
  TbqPool *pool = aligned_alloc (TBQ_CACHELINE,
      (sizeof *pool + TBQ_CACHELINE - 1) & ~(size_t) (TBQ_CACHELINE - 1));

  if (pool == NULL) {
    *st = TBQ_NO_MEMORY;
    return NULL;
  }
  *st = pool_init (pool, cfg, true);
  if (*st != TBQ_OK) {
    /* Blocks allocated so far were released, dropping their refs. */
    tbq_event_clear (&pool->ev);
    tbq_event_clear (&pool->work_ev);
    free (pool);
    return NULL;
  }
  return pool;
}

void
tbq_pool_orphan (TbqPool * pool)
{
  atomic_store_explicit (&pool->orphaned, 1, memory_order_seq_cst);
  tbq_pool_clear (pool);
  pool_unref (pool);
}

void
tbq_block_ref (TbqBlock * b)
{
  atomic_fetch_add_explicit (&b->refs, 1, memory_order_relaxed);
}

void
tbq_block_unref (TbqBlock * b)
{
  TbqPool *pool = b->pool;

  /* Acq_rel: every read of the block's bytes happens before its reuse. */
  if (atomic_fetch_sub_explicit (&b->refs, 1, memory_order_acq_rel) != 1)
    return;
  /* Hold the pool across the push: once on the free list the block (and
   * with it the pool) may be released by an orphaning queue. */
  atomic_fetch_add_explicit (&pool->refs, 1, memory_order_relaxed);
  tbq_pool_put (pool, b);
  /* Seq_cst: pairs with tbq_pool_orphan()'s store; whoever comes second
   * clears the free list, so nothing stays behind. */
  if (atomic_load_explicit (&pool->orphaned, memory_order_seq_cst)) {
    tbq_pool_clear (pool);
  } else {
    tbq_event_notify (&pool->ev);
    /* Zero-copy holders return blocks after the reader moved on: an idle
     * copier sleeps until told, so tell it when there is surplus to trim. */
    if (tbq_pool_trim_due (pool))
      tbq_event_notify (&pool->work_ev);
  }
  pool_unref (pool);
}

static TbqStatus
pool_init (TbqPool * pool, const TbqPoolConfig * cfg, bool shared)
{
  long page = sysconf (_SC_PAGESIZE);
  size_t i;

  memset (pool, 0, sizeof *pool);
  pool->cfg = *cfg;
  pool->shared = shared;
  atomic_init (&pool->refs, 1);
  atomic_init (&pool->orphaned, 0);
  tbq_event_init (&pool->ev);
  tbq_event_init (&pool->work_ev);
  pool->use_mmap = page > 0 && cfg->block_size % (size_t) page == 0;
  atomic_init (&pool->free_head, NULL);
  for (i = 0; i < cfg->min_blocks; i++) {
    TbqBlock *b = block_alloc (pool, true);

    if (b == NULL) {
      tbq_pool_clear (pool);
      return TBQ_NO_MEMORY;
    }
    tbq_pool_put (pool, b);
  }
  return TBQ_OK;
}

TbqStatus
tbq_pool_init (TbqPool * pool, const TbqPoolConfig * cfg)
{
  TbqStatus st = pool_init (pool, cfg, false);

  if (st != TBQ_OK) {
    tbq_event_clear (&pool->ev);
    tbq_event_clear (&pool->work_ev);
  }
  return st;
}

void
tbq_pool_fini (TbqPool * pool)
{
  tbq_pool_clear (pool);
  tbq_event_clear (&pool->ev);
  tbq_event_clear (&pool->work_ev);
}

void
tbq_pool_clear (TbqPool * pool)
{
  TbqBlock *b = atomic_exchange_explicit (&pool->free_head, NULL,
      memory_order_acquire);

  while (b != NULL) {
    TbqBlock *n = b->free_next;

    atomic_fetch_sub_explicit (&pool->idle, 1, memory_order_relaxed);
    block_release (pool, b);
    b = n;
  }
}

TbqBlock *
tbq_pool_take (TbqPool * pool)
{
  /* Acquire: see the pusher's free_next store.  Single popper: no ABA. */
  TbqBlock *b = atomic_load_explicit (&pool->free_head, memory_order_acquire);
  uint64_t in_use;

  while (b != NULL && !atomic_compare_exchange_weak_explicit (&pool->free_head,
          &b, b->free_next, memory_order_acquire, memory_order_acquire)) {
  }
  if (b != NULL) {
    atomic_fetch_sub_explicit (&pool->idle, 1, memory_order_relaxed);
  } else {
    if (atomic_load_explicit (&pool->total, memory_order_relaxed) >=
        pool->cfg.max_blocks)
      return NULL;
    b = block_alloc (pool, false);
    if (b == NULL)
      return NULL;
  }
  in_use = atomic_load_explicit (&pool->total, memory_order_relaxed)
      - atomic_load_explicit (&pool->idle, memory_order_relaxed);
  if (in_use > atomic_load_explicit (&pool->peak, memory_order_relaxed))
    atomic_store_explicit (&pool->peak, in_use, memory_order_relaxed);
  b->free_next = NULL;
  return b;
}

void
tbq_pool_put (TbqPool * pool, TbqBlock * b)
{
  TbqBlock *head = atomic_load_explicit (&pool->free_head, memory_order_relaxed);

  /* Count before pushing so `idle` never underflows when the popper takes
   * the block before our increment lands. */
  atomic_fetch_add_explicit (&pool->idle, 1, memory_order_relaxed);
  do {
    b->free_next = head;
    /* Release: the popper must see free_next and the block's last contents. */
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

size_t
tbq_pool_trim (TbqPool * pool)
{
  uint64_t idle = atomic_load_explicit (&pool->idle, memory_order_relaxed);
  uint64_t total = atomic_load_explicit (&pool->total, memory_order_relaxed);
  uint64_t excess, keep_total, n;
  TbqBlock *b, *cut;
  size_t released = 0;

  if (idle <= pool->cfg.max_idle_blocks || total <= pool->cfg.min_blocks)
    return 0;
  excess = idle - pool->cfg.max_idle_blocks;
  keep_total = total - pool->cfg.min_blocks;
  if (excess > keep_total)
    excess = keep_total;

  /* Keep the top (most recently returned, hottest) blocks and cut the cold
   * tail.  Only the popper edits nodes already on the stack; pushers only
   * touch the node they push, above the current head. */
  b = atomic_load_explicit (&pool->free_head, memory_order_acquire);
  for (n = 1; b != NULL && n < idle - excess; n++)
    b = b->free_next;
  if (b == NULL)
    return 0;
  if (idle - excess == 0) {
    /* Keep nothing: take the whole stack as it is now. */
    cut = atomic_exchange_explicit (&pool->free_head, NULL,
        memory_order_acquire);
  } else {
    cut = b->free_next;
    b->free_next = NULL;
  }
  while (cut != NULL && released < excess) {
    TbqBlock *next = cut->free_next;

    atomic_fetch_sub_explicit (&pool->idle, 1, memory_order_relaxed);
    block_release (pool, cut);
    released++;
    cut = next;
  }
  /* Anything left over (the whole-stack case raced with pushes) goes back. */
  while (cut != NULL) {
    TbqBlock *next = cut->free_next;

    atomic_fetch_sub_explicit (&pool->idle, 1, memory_order_relaxed);
    tbq_pool_put (pool, cut);
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
  st->allocations = atomic_load_explicit (&pool->allocations,
      memory_order_relaxed);
  st->releases = atomic_load_explicit (&pool->releases, memory_order_relaxed);
}
