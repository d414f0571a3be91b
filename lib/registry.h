/* libtbq internals: the writer registry.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The slots in which open writers are found by the copier, by statistics
 * and by discard, the lock that guards removing (and freeing) them, and
 * the counters that closed writers leave behind.  The registry only holds
 * pointers: it knows nothing of a writer but its totals.  Protocol in
 * block.h ("The writer registry").
 */
#ifndef TBQ_REGISTRY_H
#define TBQ_REGISTRY_H

#include "tbq.h"
#include "machine.h"

#include <pthread.h>
#include <stdbool.h>

/* What a writer has counted over its life. */
typedef struct
{
  uint64_t records_in;
  uint64_t bytes_in;
  uint64_t records_dropped;
  uint64_t handoffs;
  uint64_t pressure_waits;
  uint64_t extent_waits;        /* waits for room in the sink budget */
  uint64_t wakeups;             /* wake-ups (system calls) it made */
  uint64_t sleeps;              /* times it (or a sync) went to sleep */
  uint64_t source_allocations;  /* blocks its source pool allocated */
  uint64_t source_releases;     /* blocks its source pool gave back */
  uint64_t source_alloc_failures;
} TbqWriterTotals;

typedef struct
{
  pthread_mutex_t lock;
  _Atomic (TbqWriter *) *slots;
  uint32_t size;
  /* One past the highest slot ever filled: the slots a scan visits (a
   * queue made for 1024 writers that has 8 looks at 8, not 1024).  It
   * only grows, under the lock. */
  _Atomic uint32_t span;
  TbqWriterTotals retired;      /* writers freed so far (under lock) */
} TbqRegistry;

TbqStatus tbq_registry_init (TbqRegistry * reg, uint32_t size);
void tbq_registry_fini (TbqRegistry * reg);

/* Make `w` (fully initialised) visible to the copier: its slot, or
 * TBQ_LIMIT when every slot is taken. */
TbqStatus tbq_registry_add (TbqRegistry * reg, TbqWriter * w, uint32_t * slot);

/* The writer in slot `i`, or NULL.  Safe to use while holding the lock, or
 * for the copier, which is the one that frees writers. */
static inline TbqWriter *
tbq_registry_at (TbqRegistry * reg, uint32_t i)
{
  /* Acquire: pairs with tbq_registry_add(): the writer is initialised. */
  return atomic_load_explicit (&reg->slots[i], memory_order_acquire);
}

/* How many slots, from 0, may hold a writer: a scan goes this far.  A
 * writer added while a scan runs without the lock may be seen by the next
 * scan only, as a slot filled behind the scan's position is. */
static inline uint32_t
tbq_registry_span (TbqRegistry * reg)
{
  /* Acquire: pairs with tbq_registry_add(): the slots below it are
   * stored. */
  return atomic_load_explicit (&reg->span, memory_order_acquire);
}

void tbq_registry_lock (TbqRegistry * reg);
void tbq_registry_unlock (TbqRegistry * reg);

/* Under the lock: empty `slot` and keep what its writer counted (`final`).
 * The caller frees the writer before unlocking, so that statistics never
 * see it missing without its totals. */
void tbq_registry_retire_locked (TbqRegistry * reg, uint32_t slot,
    const TbqWriterTotals * final);

void tbq_writer_totals_add (TbqWriterTotals * sum, const TbqWriterTotals * add);

#endif /* TBQ_REGISTRY_H */
