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
 *
 * The sink pool's byte budget: sink blocks in use x block size plus the
 * bytes of extents in use (extent.h) never exceed max_blocks x block size
 * (nor the limit below it, `bytes_limit`): every charge is a CAS that
 * fits it, whoever charges.  The copier charges a block's bytes when it
 * takes one and the last unref uncharges them; extents are charged by the
 * writer that takes one, or by the spill thread reading a unit back.  Idle
 * blocks and idle extents are not charged: they are bounded by their own
 * trim.  A charge that does not fit is backpressure (the copier waits, a
 * writer drops or waits, the spill thread waits) on the pool's event,
 * which every uncharge and every lift of the limit notifies.  Extents
 * always leave room for one more sink block (`keep` of tbq_pool_charge()),
 * so that the copier can always move the indirect records that free them.
 *
 * With a spill (spill.h), the copier's blocks and the writers' extents
 * also leave the *read-back room* free, an eighth of the budget
 * (tbq_pool_readback_room()): only the spill thread's read-back takes it.
 * So whatever the copier and the writers hold (the spill chain, what the
 * spill thread cannot write because the file is full or failing, what a
 * zero-copy holder keeps of theirs) leaves room for the unit the reader
 * needs next, which is cut to fit that room: the file can always be read
 * back within the budget (spill.h, "The budget").  Each charge whose
 * memory came into being keeps the highest use reached (`bytes_peak`,
 * TbqExtentStats.budget_peak), which is therefore never above the
 * budget.
 */
#ifndef TBQ_POOL_H
#define TBQ_POOL_H

#include "block.h"
#include "event.h"
#include "share.h"

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
  /* Shared pools: the byte budget (see above).  `bytes_limit` is
   * bytes_max, or less after an extent allocation failed. */
  _Atomic uint64_t bytes_used;
  _Atomic uint64_t bytes_limit;
  _Atomic uint64_t bytes_peak;  /* highest bytes_used reached (a statistic) */
  uint64_t bytes_max;
  /* A spill reads back into this budget: blocks and writers' extents
   * leave its read-back room free (above).  Set once, before the copier
   * runs (tbq_queue_enable_spill()); relaxed. */
  _Atomic int readback;
  TbqEvent ev;                  /* a block came back */
  /* Shared pools: the owner's (the copier's) doorbell.  It lives here, not
   * in the queue, because a zero-copy holder's last unref may ring it (to
   * trim surplus) while the queue is being freed. */
  TbqEvent owner_ev;
  /* A copy group's member (share.h): NULL, or the share its events
   * forward to, whose cap its budget also takes and whose reserve it
   * takes blocks from and gives them back to.  Held until the pool is
   * freed, and a member of it (tbq_share_join()) as long, with a floor of
   * `share_floor` bytes (two sink blocks; 0 for no share). */
  TbqShare *share;
  uint64_t share_floor;
};

/* Embedded (source) pools: pre-allocate; TBQ_NO_MEMORY (reason kept, see
 * tbq_pool_take_error()) leaves nothing to tear down but tbq_pool_fini(). */
TbqStatus tbq_pool_init (TbqPool * pool, const TbqPoolConfig * cfg);
/* Free every idle block and tear down; blocks in use were returned first. */
void tbq_pool_fini (TbqPool * pool);
/* The sink pool: heap-allocated and refcounted, of a copy group's `share`
 * (NULL: none).  On failure NULL, with the status in *st and the reason in
 * `msg`. */
TbqPool *tbq_pool_new_shared (const TbqPoolConfig * cfg, TbqShare * share,
    TbqStatus * st, char *msg, size_t msg_size);
/* The queue lets go: idle blocks are released now, blocks still held are
 * released by their last tbq_block_unref(). */
void tbq_pool_orphan (TbqPool * pool);
/* Shared pools: one more reference (for the extents, which outlive the
 * queue as blocks do), and its release. */
void tbq_pool_ref (TbqPool * pool);
void tbq_pool_unref (TbqPool * pool);
/* The last unref of a sink block (tbq_block_unref() for pool blocks):
 * back to the free list, its bytes uncharged. */
void tbq_pool_block_unref (TbqBlock * b);

/* Popper only: a free block (TBQ_OK), else with `grow` a new one while
 * below the limit (TBQ_OK, or TBQ_NO_MEMORY: the limit is lowered),
 * else TBQ_NO_SPACE.  A shared pool charges the block to its budget,
 * leaving the read-back room free (TBQ_NO_SPACE when it does not fit). */
TbqStatus tbq_pool_take (TbqPool * pool, bool grow, TbqBlock ** out);
/* Any thread. */
void tbq_pool_put (TbqPool * pool, TbqBlock * b);
/* Hand a block back, or release it to the system when the pool already
 * keeps enough idle blocks (caller must be allowed to free). */
void tbq_pool_put_or_release (TbqPool * pool, TbqBlock * b);
/* Popper only, while idle: release idle blocks above max_idle_blocks
 * (keeping min_blocks allocated), and lift a limit a failed allocation
 * lowered once every block is idle but the `owner_holds` the popper
 * keeps.  Returns how many blocks were released. */
size_t tbq_pool_trim (TbqPool * pool, uint64_t owner_holds);

/* Anyone: whether tbq_pool_trim() would release something now. */
static inline bool
tbq_pool_trim_due (TbqPool * pool)
{
  return atomic_load_explicit (&pool->idle, memory_order_relaxed)
      > pool->cfg.max_idle_blocks
      && atomic_load_explicit (&pool->total, memory_order_relaxed)
      > pool->cfg.min_blocks;
}

/* Shared pools: whether `bytes` more, leaving `keep` free, fit the own
 * budget now.  Relaxed: the budget counts bytes and publishes nothing; a
 * waiter re-checks it after the uncharger's fence (block.h, "Events"). */
static inline bool
tbq_pool_own_fits (TbqPool * pool, uint64_t used, uint64_t bytes,
    uint64_t keep)
{
  uint64_t limit = atomic_load_explicit (&pool->bytes_limit,
      memory_order_relaxed);

  return bytes <= limit && keep <= limit - bytes
      && used <= limit - bytes - keep;
}

/* The own budget and, in a copy group, the member's share (share.h). */
static inline bool
tbq_pool_budget_fits (TbqPool * pool, uint64_t used, uint64_t bytes,
    uint64_t keep)
{
  return tbq_pool_own_fits (pool, used, bytes, keep)
      && (pool->share == NULL || tbq_share_fits (pool->share,
              pool->share_floor, used, bytes, keep));
}

/* The most the budget may hold now: its limit, or in a capped copy group
 * the member's share when that is less (where a spill's mark is). */
static inline uint64_t
tbq_pool_budget_limit (TbqPool * pool)
{
  /* Relaxed: as tbq_pool_own_fits(). */
  uint64_t limit = atomic_load_explicit (&pool->bytes_limit,
      memory_order_relaxed);
  uint64_t share = pool->share != NULL
      ? tbq_share_member_max (pool->share, pool->share_floor) : UINT64_MAX;

  return share < limit ? share : limit;
}

/* The room only a spill's read-back may take: an eighth of what the
 * budget may hold now (its limit, or in a capped copy group the member's
 * share when that is less), or 0 without a spill.  The copier's blocks
 * and the writers' extents leave it free (tbq_pool_take(),
 * extent.c).  It follows the limit: it shrinks with it, which makes no
 * charge fit that did not, and grows only when the limit is lifted or a
 * member leaves, both of which wake the waiters. */
static inline uint64_t
tbq_pool_readback_room (TbqPool * pool)
{
  /* Relaxed: set once before the copier runs (above). */
  if (!atomic_load_explicit (&pool->readback, memory_order_relaxed))
    return 0;
  return tbq_pool_budget_limit (pool) / 8;
}

/* Shared pools: the budget reached `used` bytes; keep the highest.  Every
 * value bytes_used rises to is some charger's `used`, so the maximum over
 * the chargers' is the exact peak.  Relaxed CAS: a statistic, it orders
 * nothing; the first relaxed load is all a charge below the peak costs. */
static inline void
tbq_pool_note_budget_peak (TbqPool * pool, uint64_t used)
{
  uint64_t peak = atomic_load_explicit (&pool->bytes_peak,
      memory_order_relaxed);

  while (used > peak && !atomic_compare_exchange_weak_explicit
      (&pool->bytes_peak, &peak, used, memory_order_relaxed,
          memory_order_relaxed)) {
  }
}

/* Shared pools: charge `bytes` to the budget if they fit, leaving `keep`
 * bytes free; *used_after is what the budget then holds.  The caller notes
 * it as a peak (tbq_pool_note_budget_peak()) once the memory it charged
 * for exists, so that a charge rolled back after a failed allocation is no
 * peak.  Relaxed CAS: see tbq_pool_own_fits().  In a copy group the share
 * is reserved first, for the exact move of the own counter that follows,
 * and given back if another charger or an uncharge moved it meanwhile
 * (share.h, `committed`). */
static inline bool
tbq_pool_charge (TbqPool * pool, uint64_t bytes, uint64_t keep,
    uint64_t * used_after)
{
  uint64_t used = atomic_load_explicit (&pool->bytes_used,
      memory_order_relaxed);

  for (;;) {
    uint64_t seen = used;

    if (!tbq_pool_own_fits (pool, used, bytes, keep))
      return false;
    if (pool->share != NULL && !tbq_share_reserve (pool->share,
            pool->share_floor, used, bytes, keep))
      return false;
    if (atomic_compare_exchange_weak_explicit (&pool->bytes_used, &used,
            used + bytes, memory_order_relaxed, memory_order_relaxed))
      break;
    if (pool->share != NULL)
      tbq_share_unreserve (pool->share, pool->share_floor, seen, bytes);
  }
  if (pool->share != NULL)
    tbq_share_charged (pool->share, bytes);
  *used_after = used + bytes;
  return true;
}

/* Hand `bytes` back to the budget (and the group's cap) and wake whoever
 * waits for room. */
void tbq_pool_uncharge (TbqPool * pool, uint64_t bytes);

/* Whether `bytes` (leaving `keep`) would fit the budget now: a hint. */
static inline bool
tbq_pool_has_room (TbqPool * pool, uint64_t bytes, uint64_t keep)
{
  return tbq_pool_budget_fits (pool,
      atomic_load_explicit (&pool->bytes_used, memory_order_relaxed), bytes,
      keep);
}

/* An extent allocation failed: hold the budget where it is, with room for
 * one more block of `keep` bytes (so the copier can still move what frees
 * extents).  Lifted with the block limit. */
void tbq_pool_budget_failed (TbqPool * pool, uint64_t keep);
/* Memory went back to the system: growth may be tried again. */
void tbq_pool_budget_lift (TbqPool * pool);

/* Anyone may ask whether a take would succeed right now (a hint: the take
 * itself decides). */
static inline bool
tbq_pool_can_take (TbqPool * pool)
{
  /* As tbq_pool_take() charges: the read-back room left free. */
  if (pool->shared && !tbq_pool_has_room (pool, pool->cfg.block_size,
          tbq_pool_readback_room (pool)))
    return false;
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
