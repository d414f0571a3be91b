/* libtbq internals: what the queues of one copy group share below the
 * copier: the group's doorbell, its memory cap and its reserve of idle
 * sink blocks.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A member's sink pool points here (pool.h, `share`) and holds a
 * reference: a zero-copy holder's last unref may reach the share after the
 * queue and the group are gone, so the share lives until the last of them
 * lets go.
 *
 *  - The doorbell: every event of a member's sink pool forwards its wakes
 *    here (event.h, `also`); the group's copy threads sleep on it.
 *  - The cap (`bytes_max`, 0: none): the sink bytes all members hold
 *    together.  A member's charge takes its own budget and the share's;
 *    either refusing is backpressure, as a member's own limit is.  Writers
 *    of a capped group wait for room on the doorbell, which every member's
 *    uncharge rings.
 *  - The reserve: idle, faulted-in sink blocks of one size.  A member's
 *    pool takes from it before it allocates, and gives blocks back to it
 *    (up to `reserve_max`) before it releases them to the system.  Blocks in
 *    the reserve belong to no pool; the taker rebinds them.
 *
 * A leaf below pool.c: it knows blocks and events, nothing of the copier.
 */
#ifndef TBQ_SHARE_H
#define TBQ_SHARE_H

#include "block.h"
#include "event.h"

#include <pthread.h>

typedef struct TbqShare TbqShare;

struct TbqShare
{
  _Atomic uint64_t refs;        /* the group, and every member's sink pool */
  TbqEvent ev;                  /* the doorbell */

  /* The cap.  Relaxed counters, as a pool's budget (pool.h). */
  uint64_t bytes_max;           /* 0: no cap */
  _Alignas (TBQ_CACHELINE) _Atomic uint64_t bytes_used;
  _Atomic uint64_t bytes_peak;

  /* The reserve, under `lock` (taken once per block moved, never on a
   * record's path). */
  _Alignas (TBQ_CACHELINE) pthread_mutex_t lock;
  TbqBlock *reserve;            /* linked by free_next */
  size_t reserve_idle;
  size_t reserve_max;
  size_t block_size;            /* of the reserve's blocks; 0: no reserve */
  bool use_mmap;
  _Atomic uint64_t reserve_takes;
  _Atomic uint64_t reserve_returns;
};

/* A share with a cap of `bytes_max` (0: none) and a reserve of blocks of
 * `block_size` bytes (0: none), `min_blocks` of them faulted in now, up to
 * `max_blocks` kept.  NULL when that memory cannot be had. */
TbqShare *tbq_share_new (uint64_t bytes_max, size_t block_size,
    size_t min_blocks, size_t max_blocks);
void tbq_share_ref (TbqShare * s);
/* The last reference frees the reserve's blocks and the share. */
void tbq_share_unref (TbqShare * s);

/* The cap: charge `bytes` if they fit (always, without a cap). */
bool tbq_share_charge (TbqShare * s, uint64_t bytes);
void tbq_share_uncharge (TbqShare * s, uint64_t bytes);
/* Whether `bytes` more fit now (a hint). */
static inline bool
tbq_share_has_room (TbqShare * s, uint64_t bytes)
{
  /* Relaxed: as tbq_pool_budget_fits(). */
  return s->bytes_max == 0 || bytes <= s->bytes_max - atomic_load_explicit
      (&s->bytes_used, memory_order_relaxed);
}

/* The reserve: a block of `block_size` bytes, or NULL (none idle, or the
 * reserve keeps another size).  Its `pool` is the caller's to set. */
TbqBlock *tbq_share_take_block (TbqShare * s, size_t block_size);
/* Keep block `b` of `block_size` bytes, which belongs to no pool now: true
 * when the reserve took it (else the caller releases it). */
bool tbq_share_keep_block (TbqShare * s, TbqBlock * b, size_t block_size);

#endif /* TBQ_SHARE_H */
