/* What a copy group's queues share below the copier: the doorbell, the
 * cap and the reserve of idle sink blocks (share.h).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "share.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A faulted-in block of the reserve's size, of no pool yet. */
static TbqBlock *
share_block_new (TbqShare * s)
{
  TbqBlock *b;

  if (s->use_mmap) {
    void *p = mmap (NULL, s->block_size, PROT_READ | PROT_WRITE,
        MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

    if (p == MAP_FAILED)
      return NULL;
    b = p;
  } else {
    b = aligned_alloc (TBQ_CACHELINE, s->block_size);
    if (b == NULL)
      return NULL;
    memset (b, 0, s->block_size);
  }
  b->mapped = s->use_mmap;
  b->capacity = (uint32_t) (s->block_size - TBQ_BLOCK_HEADER_SIZE);
  b->pool = NULL;
  b->extents = NULL;
  return b;
}

static void
share_block_free (TbqShare * s, TbqBlock * b)
{
  if (b->mapped)
    munmap (b, s->block_size);
  else
    free (b);
}

TbqShare *
tbq_share_new (uint64_t bytes_max, size_t block_size, size_t min_blocks,
    size_t max_blocks)
{
  long page = sysconf (_SC_PAGESIZE);
  TbqShare *s = tbq_alloc_aligned (sizeof *s);
  size_t i;

  if (s == NULL)
    return NULL;
  memset (s, 0, sizeof *s);
  atomic_init (&s->refs, 1);
  tbq_event_init (&s->ev);
  s->bytes_max = bytes_max;
  atomic_init (&s->committed, 0);
  atomic_init (&s->bytes_used, 0);
  atomic_init (&s->bytes_peak, 0);
  atomic_init (&s->floors, 0);
  atomic_init (&s->members, 0);
  pthread_mutex_init (&s->lock, NULL);
  s->block_size = block_size;
  s->reserve_max = block_size > 0 ? max_blocks : 0;
  s->use_mmap = page > 0 && block_size % (size_t) page == 0;
  for (i = 0; block_size > 0 && i < min_blocks; i++) {
    TbqBlock *b = share_block_new (s);

    if (b == NULL) {
      tbq_share_unref (s);
      return NULL;
    }
    b->free_next = s->reserve;
    s->reserve = b;
    s->reserve_idle++;
  }
  return s;
}

void
tbq_share_ref (TbqShare * s)
{
  /* Relaxed: the caller holds a reference already. */
  atomic_fetch_add_explicit (&s->refs, 1, memory_order_relaxed);
}

void
tbq_share_unref (TbqShare * s)
{
  TbqBlock *b;

  /* Acq_rel: every use of the share happens before the free. */
  if (atomic_fetch_sub_explicit (&s->refs, 1, memory_order_acq_rel) != 1)
    return;
  for (b = s->reserve; b != NULL;) {
    TbqBlock *next = b->free_next;

    share_block_free (s, b);
    b = next;
  }
  pthread_mutex_destroy (&s->lock);
  tbq_event_clear (&s->ev);
  free (s);
}

TbqStatus
tbq_share_join (TbqShare * s, uint64_t floor, char *msg, size_t msg_size)
{
  uint64_t floors, cap, committed;

  pthread_mutex_lock (&s->lock);
  /* Relaxed: joins and leaves are under the lock; charges move
   * `committed` by CAS, so this one is exact too. */
  floors = atomic_load_explicit (&s->floors, memory_order_relaxed);
  cap = floors + floor > s->bytes_max ? floors + floor : s->bytes_max;
  committed = atomic_load_explicit (&s->committed, memory_order_relaxed);
  do {
    if (s->bytes_max != 0 && committed > cap - floor) {
      pthread_mutex_unlock (&s->lock);
      if (msg != NULL && msg_size > 0)
        snprintf (msg, msg_size, "the copy group's cap of %" PRIu64
            " bytes is taken by its other members (they hold %" PRIu64
            " bytes, with their floors): this member's floor, two sink "
            "blocks (%" PRIu64 " bytes), does not fit until they give "
            "memory back", s->bytes_max, committed, floor);
      return TBQ_NO_SPACE;
    }
  } while (!atomic_compare_exchange_weak_explicit (&s->committed, &committed,
          committed + floor, memory_order_relaxed, memory_order_relaxed));
  atomic_store_explicit (&s->floors, floors + floor, memory_order_relaxed);
  atomic_fetch_add_explicit (&s->members, 1, memory_order_relaxed);
  pthread_mutex_unlock (&s->lock);
  return TBQ_OK;
}

void
tbq_share_leave (TbqShare * s, uint64_t floor)
{
  pthread_mutex_lock (&s->lock);
  /* Relaxed: as tbq_share_join(); the member holds nothing now, so it
   * committed exactly its floor. */
  atomic_fetch_sub_explicit (&s->committed, floor, memory_order_relaxed);
  atomic_fetch_sub_explicit (&s->floors, floor, memory_order_relaxed);
  atomic_fetch_sub_explicit (&s->members, 1, memory_order_relaxed);
  pthread_mutex_unlock (&s->lock);
  /* Every other member's share grew, and the cap has room: whoever waits
   * for either looks again (a wait whose condition changed). */
  tbq_event_wake (&s->ev);
}

bool
tbq_share_reserve (TbqShare * s, uint64_t floor, uint64_t used,
    uint64_t bytes, uint64_t keep)
{
  uint64_t delta = tbq_share_delta (floor, used, bytes), committed, cap;

  if (s->bytes_max == 0)
    return true;
  if (!tbq_share_fits (s, floor, used, bytes, keep))
    return false;
  if (delta == 0)
    return true;
  /* Relaxed CAS: the cap counts bytes and publishes nothing; a waiter
   * re-checks after the uncharger's notify fence (block.h, "Events"). */
  committed = atomic_load_explicit (&s->committed, memory_order_relaxed);
  do {
    cap = tbq_share_cap (s);
    if (committed > cap || delta > cap - committed)
      return false;
  } while (!atomic_compare_exchange_weak_explicit (&s->committed, &committed,
          committed + delta, memory_order_relaxed, memory_order_relaxed));
  return true;
}

/* `committed` went down by `delta`: wake whoever waits for room. */
static void
share_release (TbqShare * s, uint64_t delta)
{
  if (delta == 0)
    return;
  /* Relaxed: the notify's fence orders it before the waiters check. */
  atomic_fetch_sub_explicit (&s->committed, delta, memory_order_relaxed);
  tbq_event_notify (&s->ev);
}

void
tbq_share_unreserve (TbqShare * s, uint64_t floor, uint64_t used,
    uint64_t bytes)
{
  if (s->bytes_max != 0)
    share_release (s, tbq_share_delta (floor, used, bytes));
}

void
tbq_share_charged (TbqShare * s, uint64_t bytes)
{
  uint64_t used, peak;

  if (s->bytes_max == 0)
    return;
  /* Relaxed: a statistic. */
  used = atomic_fetch_add_explicit (&s->bytes_used, bytes,
      memory_order_relaxed) + bytes;
  /* Relaxed CAS: a statistic (as tbq_pool_note_budget_peak()). */
  peak = atomic_load_explicit (&s->bytes_peak, memory_order_relaxed);
  while (used > peak && !atomic_compare_exchange_weak_explicit
      (&s->bytes_peak, &peak, used, memory_order_relaxed,
          memory_order_relaxed)) {
  }
}

void
tbq_share_uncharge (TbqShare * s, uint64_t floor, uint64_t used,
    uint64_t bytes)
{
  if (s->bytes_max == 0)
    return;
  /* Relaxed: a statistic; the notify below orders nothing for it. */
  atomic_fetch_sub_explicit (&s->bytes_used, bytes, memory_order_relaxed);
  /* (Within its floor a member frees no cap; its own waiters hear of its
   * smaller bytes from its pool's event, which rings the doorbell too.) */
  share_release (s, tbq_share_delta (floor, used - bytes, bytes));
}

TbqBlock *
tbq_share_take_block (TbqShare * s, size_t block_size)
{
  TbqBlock *b;

  if (block_size != s->block_size || s->block_size == 0)
    return NULL;
  /* The mutex orders the block's last contents before its reuse. */
  pthread_mutex_lock (&s->lock);
  b = s->reserve;
  if (b != NULL) {
    s->reserve = b->free_next;
    s->reserve_idle--;
  }
  pthread_mutex_unlock (&s->lock);
  if (b != NULL) {
    b->free_next = NULL;
    tbq_count (&s->reserve_takes, 1);
  }
  return b;
}

bool
tbq_share_keep_block (TbqShare * s, TbqBlock * b, size_t block_size)
{
  bool kept = false;

  if (block_size != s->block_size || s->block_size == 0)
    return false;
  b->pool = NULL;
  pthread_mutex_lock (&s->lock);
  if (s->reserve_idle < s->reserve_max) {
    b->free_next = s->reserve;
    s->reserve = b;
    s->reserve_idle++;
    kept = true;
  }
  pthread_mutex_unlock (&s->lock);
  if (kept)
    tbq_count (&s->reserve_returns, 1);
  return kept;
}
