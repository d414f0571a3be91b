/* libtbq internals: the writer (the source side).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A writer appends records to the current block of its own source pool and
 * publishes them (block.h, "Chains"); the wake module tells the copier.
 * The copier, which sits above the writer, reads the writer's chain and
 * owns the copy position kept at the end of the struct.
 */
#ifndef TBQ_WRITER_H
#define TBQ_WRITER_H

#include "pool.h"
#include "registry.h"
#include "wake.h"

struct TbqWriter
{
  /* Writer-owned, hot. */
  unsigned char *wpos;          /* next record header in `cur` */
  unsigned char *wend;          /* end of `cur`'s data area */
  TbqBlock *cur;
  unsigned char *reserved;      /* header of the reserved, uncommitted record */
  uint32_t pub_off;             /* last offset stored to cur->published */
  uint32_t unpublished;         /* records committed since the last publish */
  TbqPublishPolicy publish;
  uint32_t publish_every;
  TbqWakePolicy wake_policy;    /* the queue's, kept here: read per record */
  TbqBackpressure backpressure;
  int64_t block_timeout_ns;
  uint64_t handoff_wake;        /* see tbq_wake_handed_off() */
  TbqWake *wake;
  const _Atomic int *interrupted;
  uint32_t slot;                /* in the registry */

  /* Writer-owned counters, read by stats (relaxed). */
  _Atomic uint64_t records_in;
  _Atomic uint64_t bytes_in;
  _Atomic uint64_t records_dropped;
  _Atomic uint64_t pressure_waits;
  _Atomic uint64_t wakeups;     /* system calls made to wake someone */
  _Atomic uint64_t published_bytes;     /* block bytes published, all blocks */

  /* Writer-written at hand-offs only, read by the copier's has-work check:
   * on its own line, so a waiting copier does not pull the line the writer
   * writes on every record. */
  _Alignas (TBQ_CACHELINE) _Atomic uint64_t handoffs;

  /* Shared: the source pool (copier pushes, writer pops).  pool.ev:
   * copier -> writer, a block came back or records moved. */
  _Alignas (TBQ_CACHELINE) TbqPool pool;
  _Atomic int closed;

  /* Copier-owned (whoever holds the copier's state).  The atomics let
   * anyone decide, without owning, whether there is work. */
  _Alignas (TBQ_CACHELINE) TbqBlock *copy_blk;
  uint32_t copy_off;
  _Atomic uint64_t copied_bytes;        /* block bytes moved, all blocks */
  _Atomic uint64_t blocks_returned;     /* sealed source blocks given back */
};

/* A writer with its own (pre-allocated) source pool, not yet registered:
 * TBQ_OK or TBQ_NO_MEMORY. */
TbqStatus tbq_writer_open (const TbqConfig * cfg, TbqWake * wake,
    const _Atomic int *interrupted, TbqWriter ** out);
/* Free a writer that is out of the registry, or never was in it; its
 * final totals go to `final` (may be NULL). */
void tbq_writer_destroy (TbqWriter * w, TbqWriterTotals * final);
/* Under the registry lock: free the writer and retire its slot with its
 * totals (every slot reader holds the lock, or is the caller).  Every
 * record was moved or discarded. */
void tbq_writer_retire_locked (TbqWriter * w, TbqRegistry * reg);
/* What the writer counted so far (any thread; relaxed snapshot). */
void tbq_writer_totals (TbqWriter * w, TbqWriterTotals * t);
/* Interrupt: wake the writer if it waits for a block or for the copier. */
void tbq_writer_wake (TbqWriter * w);
/* Discard every record the copier has not moved yet, including
 * unpublished ones, and restart the writer in its current block.  Nothing
 * else runs. */
void tbq_writer_discard (TbqWriter * w, TbqReleaseFunc release,
    void *user_data, uint64_t * count);

#endif /* TBQ_WRITER_H */
