/* libtbq internals: block pools.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A pool hands out blocks of one size: `min_blocks` pre-allocated and
 * pre-faulted, growth on demand up to a limit, a LIFO free list (the most
 * recently returned, hottest block first; protocol in block.h), and idle
 * blocks above `max_idle_blocks` released to the system.  A source pool is
 * embedded in its writer; the sink pool is shared and reference counted,
 * because zero-copy holders may keep its blocks after the queue is gone.
 *
 * Allocation failure: a block allocation that fails lowers the pool's
 * limit to the blocks it holds at that moment, so that tbq_pool_can_take()
 * says no and callers wait for a block to come back (or see backpressure)
 * instead of retrying; the failure is counted, and what was asked for and
 * why is kept for tbq_pool_take_error().  The limit is lifted again when
 * the pool gives blocks back to the system, or when its owner trims it
 * while idle.
 */
#ifndef TBQ_POOL_H
#define TBQ_POOL_H

#include "block.h"
#include "event.h"

struct TbqPool
{
  _Atomic (TbqBlock *) free_head;       /* LIFO stack, see block.h */
  _Atomic uint64_t idle;        /* blocks on the free list */
  _Atomic uint64_t total;       /* blocks allocated */
  _Atomic uint64_t limit;       /* most blocks the pool may hold now */
  _Atomic uint64_t peak;        /* highest total - idle seen by the popper */
  _Atomic uint64_t allocations;
  _Atomic uint64_t releases;
  /* The last allocation failure: its errno and the blocks held then,
   * published by `failures` (release); `failures_taken` counts those
   * reported by tbq_pool_take_error(). */
  _Atomic int fail_errno;
  _Atomic uint64_t fail_total;
  _Atomic uint64_t failures;
  _Atomic uint64_t failures_taken;
  TbqPoolConfig cfg;
  bool use_mmap;
  /* Shared (sink) pools only: refcounted, one for the queue and one per
   * block allocated. */
  bool shared;
  _Atomic int orphaned;
  _Atomic uint64_t refs;
  TbqEvent ev;                  /* a block came back */
  /* Shared pools: the owner's (the copier's) doorbell.  It lives here, not
   * in the queue, because a zero-copy holder's last unref may ring it (to
   * trim surplus) while the queue is being freed. */
  TbqEvent owner_ev;
};

/* Embedded (source) pools: pre-allocate; TBQ_NO_MEMORY (reason kept, see
 * tbq_pool_take_error()) leaves nothing to tear down but tbq_pool_fini(). */
TbqStatus tbq_pool_init (TbqPool * pool, const TbqPoolConfig * cfg);
/* Free every idle block and tear down; blocks in use were returned first. */
void tbq_pool_fini (TbqPool * pool);
/* The sink pool: heap-allocated and refcounted.  On failure NULL, with the
 * status in *st and the reason in `msg`. */
TbqPool *tbq_pool_new_shared (const TbqPoolConfig * cfg, TbqStatus * st,
    char *msg, size_t msg_size);
/* The queue lets go: idle blocks are released now, blocks still held are
 * released by their last tbq_block_unref(). */
void tbq_pool_orphan (TbqPool * pool);

/* Popper only: a free block (TBQ_OK), else with `grow` a new one while
 * below the limit (TBQ_OK, or TBQ_NO_MEMORY: the limit is lowered),
 * else TBQ_NO_SPACE. */
TbqStatus tbq_pool_take (TbqPool * pool, bool grow, TbqBlock ** out);
/* Any thread. */
void tbq_pool_put (TbqPool * pool, TbqBlock * b);
/* Hand a block back, or release it to the system when the pool already
 * keeps enough idle blocks (caller must be allowed to free). */
void tbq_pool_put_or_release (TbqPool * pool, TbqBlock * b);
/* Popper only, while idle: release idle blocks above max_idle_blocks
 * (keeping min_blocks allocated) and lift a lowered limit.  Returns how
 * many blocks were released. */
size_t tbq_pool_trim (TbqPool * pool);

/* Anyone: whether tbq_pool_trim() would release something now. */
static inline bool
tbq_pool_trim_due (TbqPool * pool)
{
  return atomic_load_explicit (&pool->idle, memory_order_relaxed)
      > pool->cfg.max_idle_blocks
      && atomic_load_explicit (&pool->total, memory_order_relaxed)
      > pool->cfg.min_blocks;
}

/* Anyone may ask whether a take would succeed right now (a hint: the take
 * itself decides). */
static inline bool
tbq_pool_can_take (TbqPool * pool)
{
  return atomic_load_explicit (&pool->free_head, memory_order_relaxed) != NULL
      || atomic_load_explicit (&pool->total, memory_order_relaxed)
      < atomic_load_explicit (&pool->limit, memory_order_relaxed);
}

void tbq_pool_stats (TbqPool * pool, TbqPoolStats * st);
/* Add the counters of `add` to `sum` (block_size is kept). */
void tbq_pool_stats_add (TbqPoolStats * sum, const TbqPoolStats * add);

/* TBQ_NO_MEMORY with a sentence in `msg` (naming the pool `name`) when an
 * allocation failed since the last call, else TBQ_OK.  Any thread. */
TbqStatus tbq_pool_take_error (TbqPool * pool, const char *name, char *msg,
    size_t msg_size);

#endif /* TBQ_POOL_H */
