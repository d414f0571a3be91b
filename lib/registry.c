/* The writer registry: slots, lock, and the totals of retired writers.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * See registry.h; protocol in block.h.
 */
#include "registry.h"

TbqStatus
tbq_registry_init (TbqRegistry * reg, uint32_t size)
{
  memset (reg, 0, sizeof *reg);
  reg->slots = calloc (size, sizeof *reg->slots);
  if (reg->slots == NULL)
    return TBQ_NO_MEMORY;
  reg->size = size;
  pthread_mutex_init (&reg->lock, NULL);
  return TBQ_OK;
}

void
tbq_registry_fini (TbqRegistry * reg)
{
  pthread_mutex_destroy (&reg->lock);
  free (reg->slots);
  reg->slots = NULL;
}

void
tbq_registry_lock (TbqRegistry * reg)
{
  pthread_mutex_lock (&reg->lock);
}

void
tbq_registry_unlock (TbqRegistry * reg)
{
  pthread_mutex_unlock (&reg->lock);
}

TbqStatus
tbq_registry_add (TbqRegistry * reg, TbqWriter * w, uint32_t * slot)
{
  uint32_t i;

  pthread_mutex_lock (&reg->lock);
  for (i = 0; i < reg->size; i++) {
    /* Relaxed: slots only go from NULL to a writer under this lock. */
    if (atomic_load_explicit (&reg->slots[i], memory_order_relaxed) == NULL)
      break;
  }
  if (i == reg->size) {
    pthread_mutex_unlock (&reg->lock);
    return TBQ_LIMIT;
  }
  *slot = i;
  /* Release: whoever loads the slot sees a fully initialised writer. */
  atomic_store_explicit (&reg->slots[i], w, memory_order_release);
  /* Release, after the slot: a scan that reads the new span sees it. */
  if (i >= atomic_load_explicit (&reg->span, memory_order_relaxed))
    atomic_store_explicit (&reg->span, i + 1, memory_order_release);
  pthread_mutex_unlock (&reg->lock);
  return TBQ_OK;
}

void
tbq_writer_totals_add (TbqWriterTotals * sum, const TbqWriterTotals * add)
{
  sum->records_in += add->records_in;
  sum->bytes_in += add->bytes_in;
  sum->records_dropped += add->records_dropped;
  sum->handoffs += add->handoffs;
  sum->pressure_waits += add->pressure_waits;
  sum->extent_waits += add->extent_waits;
  sum->wakeups += add->wakeups;
  sum->sleeps += add->sleeps;
  sum->source_allocations += add->source_allocations;
  sum->source_releases += add->source_releases;
  sum->source_alloc_failures += add->source_alloc_failures;
}

void
tbq_registry_retire_locked (TbqRegistry * reg, uint32_t slot,
    const TbqWriterTotals * final)
{
  /* Relaxed: nobody dereferences an empty slot. */
  atomic_store_explicit (&reg->slots[slot], NULL, memory_order_relaxed);
  tbq_writer_totals_add (&reg->retired, final);
}
