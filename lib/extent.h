/* libtbq internals: extents, the memory of records too large to travel
 * inline.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An extent is one contiguous allocation holding one record's payload:
 * the 64-byte block header (block.h, with `extents` set), then the payload
 * at data[], 64-byte aligned.  The writer takes one, writes the payload
 * into it once and writes a small indirect record (block.h) into its
 * source block; the copier moves that record like any other; the reader
 * hands the payload out as one range whose TbqRecord.block is the extent.
 *
 * Memory: extents are charged to the sink pool's byte budget (pool.h)
 * while in use; a writer's leave room for a sink block, a spill's hold
 * and its read-back room (below), the spill's read-back takes them.  Those of a page or more are whole mmap'ed pages (released
 * to the system when freed); smaller ones come from the heap.  A freed
 * extent goes to an idle cache, hottest first: a writer reuses an idle
 * extent of the same size (or up to an eighth larger) before it allocates,
 * so a stream of same-size records allocates nothing after the first few.
 * The cache keeps at most TBQ_EXTENTS_KEEP extents and
 * max(sink max_idle_blocks x block size, budget / 4) bytes; above that
 * whoever frees an extent notifies the copier, which trims it (as it
 * trims idle sink blocks).  Protocol: block.h ("Extents").
 */
#ifndef TBQ_EXTENT_H
#define TBQ_EXTENT_H

#include "pool.h"

#include <pthread.h>

/* Idle extents kept at most. */
#define TBQ_EXTENTS_KEEP 8u

struct TbqExtents
{
  TbqPool *sink;                /* budget and events; one reference held */
  size_t page;                  /* extents of a page or more are mmap'ed */
  uint64_t block_size;          /* the sink block room extents leave free */
  uint64_t max_bytes;           /* largest extent (header included) */
  uint64_t keep_bytes;          /* idle bytes kept by the trim */
  _Atomic uint64_t refs;        /* the queue's + one per extent allocated */
  /* Spill (spill.h): budget bytes writers' extents leave free besides a
   * sink block, a quarter of it while no run is active (0 without spill,
   * during a run and while its writes fail), so that what the reader must
   * read from memory stays under the spill mark; `gated` says an extent
   * was refused for it alone (relaxed, with a wake of the copier's
   * doorbell: it starts a run).  Writers' extents leave the read-back
   * room free too (pool.h), whichever is more. */
  _Atomic uint64_t hold;
  _Atomic int gated;

  /* The idle cache, under `lock`.  The counts are atomic so that anyone
   * may ask whether a trim is due without the lock. */
  pthread_mutex_t lock;
  TbqBlock *idle;               /* hottest first, linked by free_next */
  _Atomic uint64_t idle_count;
  _Atomic uint64_t idle_bytes;
  bool orphaned;                /* the queue is gone: free, do not cache */

  /* Counters for statistics (relaxed); cache_hits under the lock.  What
   * is in use is derived from them and the budget, so that taking and
   * returning an extent costs no read-modify-write for statistics. */
  _Atomic uint64_t bytes_peak;
  _Atomic uint64_t allocations;
  _Atomic uint64_t releases;
  _Atomic uint64_t cache_hits;

  /* The last allocation failure, as in pool.h: details published by
   * `failures` (release). */
  _Atomic int fail_errno;
  _Atomic uint64_t fail_bytes;
  _Atomic uint64_t fail_held;
  _Atomic uint64_t failures;
  _Atomic uint64_t failures_taken;
};

/* The extents of the sink pool `sink` (configured by `cfg`); NULL when
 * out of memory. */
TbqExtents *tbq_extents_new (TbqPool * sink, const TbqPoolConfig * cfg);
/* The queue lets go: idle extents are freed now, extents still held are
 * freed by their last unref. */
void tbq_extents_orphan (TbqExtents * x);

/* Largest payload an extent can hold (0: the sink pool is too small for
 * any extent). */
uint32_t tbq_extents_max_payload (const TbqExtents * x);
/* Whether an extent could ever hold `payload` bytes. */
bool tbq_extents_can_hold (const TbqExtents * x, uint64_t payload);

/* An extent for `payload` bytes, refcount 1, charged to the budget: from
 * the idle cache, or allocated.  TBQ_OK; TBQ_NO_SPACE when the budget has
 * no room now; TBQ_TOO_LARGE when it never will (nor, in a capped copy
 * group, the member's share now); TBQ_NO_MEMORY when the
 * allocation failed (the budget then holds still, see
 * tbq_pool_budget_failed(), and tbq_extents_take_error() says why).  Any
 * thread. */
TbqStatus tbq_extent_take (TbqExtents * x, uint64_t payload, TbqBlock ** out);
/* The spill's read-back of what a writer's tbq_extent_take() once took,
 * leaving `keep` of the budget free (the read-back room is the spill's to
 * take): the same, but never TBQ_TOO_LARGE for a copy group's share
 * (which may have shrunk since, as members joined: it is waited for
 * instead), and the extent says what of the file it holds (`from_file`,
 * TBQ_FROM_FILE_RECORDS or _PAYLOAD). */
TbqStatus tbq_extent_take_back (TbqExtents * x, uint64_t payload,
    uint64_t keep, uint32_t from_file, TbqBlock ** out);
/* Budget bytes an extent for `payload` bytes takes (header and rounding
 * included; the spill cuts its units by them). */
uint64_t tbq_extents_bytes (const TbqExtents * x, uint64_t payload);
/* A spill reads back into the budget from now on (before anything is
 * written and before the copier runs): blocks and writers' extents leave
 * its read-back room free (pool.h), and the largest extent is that much
 * smaller. */
void tbq_extents_leave_readback_room (TbqExtents * x);
/* Whether extent `e` would be taken for `payload` bytes (same size, or up
 * to an eighth larger). */
bool tbq_extent_suits (const TbqExtents * x, const TbqBlock * e,
    uint64_t payload);
/* Whether the budget has room for an extent of `payload` bytes now (a
 * hint for waiters: the take decides). */
bool tbq_extents_have_room (TbqExtents * x, uint64_t payload);
/* Whether only a spill's hold keeps an extent of `payload` bytes out now:
 * the copier is starting a run, which lifts it (tbq_queue_sink_can_take_record()
 * then says 1: a dropping writer's host waits for the copier).  A hint. */
bool tbq_extents_held_back (TbqExtents * x, uint64_t payload);
/* The event a writer waits on for room: the sink pool's, or in a capped
 * copy group the group's doorbell, which every member's uncharge rings
 * (share.h). */
static inline TbqEvent *
tbq_extents_event (TbqExtents * x)
{
  if (x->sink->share != NULL && x->sink->share->bytes_max > 0)
    return &x->sink->share->ev;
  return &x->sink->ev;
}

/* Spill: hold `bytes` of the budget back from extents (0: none); a
 * release of the hold wakes writers waiting for room. */
void tbq_extents_hold (TbqExtents * x, uint64_t bytes);

/* Drop a reference; the last one uncharges the extent (unless it left the
 * budget, tbq_block_leave_budget()) and caches (or frees) it.  Any
 * thread. */
void tbq_extent_unref (TbqBlock * e);

/* Whether the idle cache is above what it keeps. */
static inline bool
tbq_extents_trim_due (TbqExtents * x)
{
  return atomic_load_explicit (&x->idle_count, memory_order_relaxed)
      > TBQ_EXTENTS_KEEP
      || atomic_load_explicit (&x->idle_bytes, memory_order_relaxed)
      > x->keep_bytes;
}

/* The copier: free idle extents above what the cache keeps (coldest
 * first); returns how many. */
size_t tbq_extents_trim (TbqExtents * x);

void tbq_extents_stats (TbqExtents * x, TbqExtentStats * st);
/* TBQ_NO_MEMORY with a sentence in `msg` when an extent allocation failed
 * since the last call, else TBQ_OK.  Any thread. */
TbqStatus tbq_extents_take_error (TbqExtents * x, char *msg, size_t msg_size);

/* Call `release` (may be NULL) for every record in [from, to) of `data`
 * and drop the extents of indirect ones; returns how many there were. */
uint64_t tbq_records_release (const unsigned char *data, uint32_t from,
    uint32_t to, TbqReleaseFunc release, void *user_data);

#endif /* TBQ_EXTENT_H */
