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
 *  - The members' shares.  A member (a sink pool, from its making to its
 *    free) needs two of its sink blocks to make progress (the block the
 *    copier fills, and the next one, which seals it so that the reader can
 *    give the first back): that is its floor, reserved for it from its
 *    join, so that no member ever waits for another's reader.  `committed`
 *    is the sum over the members of max (their bytes, their floor), never
 *    above the effective cap, max (bytes_max, floors): a cap smaller than
 *    the floors is raised to them (tbq_group_get_stats() says so).  A member
 *    holds at most its share, its floor plus an equal part of what the
 *    floors leave of the cap: a stalled member's reader keeps its share and
 *    no more, and every other member can always reach its own.
 *    Invariant: committed >= the sum, by the charges reserved and the
 *    uncharges not yet subtracted (both conservative); each member's
 *    change of bytes adds its exact difference of max (bytes, floor).
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
  _Alignas (TBQ_CACHELINE) _Atomic uint64_t committed;  /* see above */
  _Atomic uint64_t bytes_used;  /* what the members hold (a statistic) */
  _Atomic uint64_t bytes_peak;
  /* Changed under `lock` by joins and leaves, read relaxed by charges
   * (a member's share is a bound it re-reads at every charge). */
  _Atomic uint64_t floors;      /* the members' floors, summed */
  _Atomic uint32_t members;

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

/* A member with a floor of `floor` bytes joins: TBQ_NO_SPACE, with the
 * reason in `msg`, when the others hold so much that its floor does not
 * fit the cap.  Leaves when its sink pool is freed (holding nothing). */
TbqStatus tbq_share_join (TbqShare * s, uint64_t floor, char *msg,
    size_t msg_size);
void tbq_share_leave (TbqShare * s, uint64_t floor);

/* The cap now: bytes_max, or the members' floors when they are more. */
static inline uint64_t
tbq_share_cap (TbqShare * s)
{
  /* Relaxed: a bound re-read at every charge (above). */
  uint64_t floors = atomic_load_explicit (&s->floors, memory_order_relaxed);

  return floors > s->bytes_max ? floors : s->bytes_max;
}

/* The most a member of floor `floor` may hold (UINT64_MAX: no cap). */
static inline uint64_t
tbq_share_member_max (TbqShare * s, uint64_t floor)
{
  uint64_t floors, n;

  if (s->bytes_max == 0)
    return UINT64_MAX;
  /* Relaxed: as tbq_share_cap(); the two may be of different joins for a
   * moment, which only moves the bound by one member's part. */
  floors = atomic_load_explicit (&s->floors, memory_order_relaxed);
  n = atomic_load_explicit (&s->members, memory_order_relaxed);
  if (n == 0 || floors >= s->bytes_max)
    return floor;
  return floor + (s->bytes_max - floors) / n;
}

/* What a member's bytes going from `used` to `used + bytes` add to
 * `committed`. */
static inline uint64_t
tbq_share_delta (uint64_t floor, uint64_t used, uint64_t bytes)
{
  uint64_t before = used > floor ? used : floor;
  uint64_t after = used + bytes > floor ? used + bytes : floor;

  return after - before;
}

/* Whether a member of floor `floor` holding `used` bytes may take `bytes`
 * more, leaving `keep` of its share free (a hint: the reserve decides). */
static inline bool
tbq_share_fits (TbqShare * s, uint64_t floor, uint64_t used, uint64_t bytes,
    uint64_t keep)
{
  uint64_t most, delta, cap, committed;

  if (s->bytes_max == 0)
    return true;
  most = tbq_share_member_max (s, floor);
  if (bytes > most || keep > most - bytes || used > most - bytes - keep)
    return false;
  delta = tbq_share_delta (floor, used, bytes);
  cap = tbq_share_cap (s);
  /* Relaxed: the cap counts bytes and publishes nothing; a waiter
   * re-checks after the uncharger's notify fence (block.h, "Events"). */
  committed = atomic_load_explicit (&s->committed, memory_order_relaxed);
  return delta == 0 || (committed <= cap && delta <= cap - committed);
}

/* The charge of `bytes` for a member holding `used`: reserve what it adds
 * to `committed` if it fits, before the member's own counter moves from
 * `used` (so that an uncharge in between never subtracts a difference
 * that was not added).  tbq_share_unreserve() undoes it when the member's
 * counter had moved; tbq_share_charged() counts the bytes once it did. */
bool tbq_share_reserve (TbqShare * s, uint64_t floor, uint64_t used,
    uint64_t bytes, uint64_t keep);
void tbq_share_unreserve (TbqShare * s, uint64_t floor, uint64_t used,
    uint64_t bytes);
void tbq_share_charged (TbqShare * s, uint64_t bytes);
/* The member's counter went from `used` down by `bytes`. */
void tbq_share_uncharge (TbqShare * s, uint64_t floor, uint64_t used,
    uint64_t bytes);

/* The reserve: a block of `block_size` bytes, or NULL (none idle, or the
 * reserve keeps another size).  Its `pool` is the caller's to set. */
TbqBlock *tbq_share_take_block (TbqShare * s, size_t block_size);
/* Keep block `b` of `block_size` bytes, which belongs to no pool now: true
 * when the reserve took it (else the caller releases it). */
bool tbq_share_keep_block (TbqShare * s, TbqBlock * b, size_t block_size);

#endif /* TBQ_SHARE_H */
