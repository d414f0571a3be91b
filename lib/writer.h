/* libtbq internals: the writer (the source side).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A writer appends records to the current block of its own source pool and
 * publishes them (block.h, "Chains"); the wake module tells the copier.
 * A record above the inline limit goes into an extent (extent.h), and an
 * indirect record pointing to it into the current block.  Write sessions
 * (session.c) use the writer through the functions at the end.
 * The copier, which sits above the writer, reads the writer's chain and
 * owns the copy position kept at the end of the struct.
 */
#ifndef TBQ_WRITER_H
#define TBQ_WRITER_H

#include "extent.h"
#include "registry.h"
#include "wake.h"

struct TbqWriter
{
  /* Writer-owned, hot. */
  unsigned char *wpos;          /* next record header in `cur` */
  unsigned char *wend;          /* end of `cur`'s data area; wpos while a
                                 * large record is reserved (so that every
                                 * other write takes the slow path) */
  TbqBlock *cur;
  unsigned char *reserved;      /* header of the reserved, uncommitted record */
  uint32_t pub_off;             /* last offset stored to cur->published */
  uint32_t unpublished;         /* records committed since the last publish */
  size_t inline_max;            /* block bytes of the largest inline record */
  TbqPublishPolicy publish;
  uint32_t publish_every;
  TbqWakePolicy wake_policy;    /* the queue's, kept here: read per record */
  TbqBackpressure backpressure;
  int64_t block_timeout_ns;
  uint64_t handoff_wake;        /* see tbq_wake_handed_off() */
  TbqWake *wake;
  const _Atomic int *interrupted;
  uint32_t slot;                /* in the registry */

  /* Writer-owned: records above the inline limit. */
  TbqExtents *extents;
  TbqBlock *large;              /* extent of the reserved, uncommitted large
                                 * record, or NULL */
  uint32_t large_size;
  uint16_t large_type;
  TbqStatus large_refusal;      /* why a session's last large reservation
                                 * was refused: TBQ_NO_SPACE, TBQ_NO_MEMORY */
  TbqBlock *session_extent;     /* taken by tbq_session_next_block() for the
                                 * refused record's retry, or NULL */

  /* Writer-owned counters, read by stats (relaxed). */
  _Atomic uint64_t records_in;
  _Atomic uint64_t bytes_in;
  _Atomic uint64_t records_dropped;
  _Atomic uint64_t pressure_waits;
  _Atomic uint64_t extent_waits;        /* waits for room in the sink budget */
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
 * TBQ_OK or TBQ_NO_MEMORY.  Large records go into `extents`. */
TbqStatus tbq_writer_open (const TbqConfig * cfg, TbqWake * wake,
    TbqExtents * extents, const _Atomic int *interrupted, TbqWriter ** out);
/* Block bytes of the largest record that travels inline in source blocks
 * of `block_size`: a quarter of the data area, at least a record of
 * TBQ_INLINE_MIN bytes, at most the data area. */
uint32_t tbq_writer_inline_max (size_t block_size);
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

/* ---- for the write sessions (session.c), on the writer's thread ---- */

/* (tbq_writer_publish(), tbq.h: everything written visible to the
 * copier.) */
/* Seal the current block and continue in a fresh one (backpressure
 * applies). */
TbqStatus tbq_writer_handoff (TbqWriter * w);
/* Room for `span` bytes at wpos: there already, or in a fresh block
 * (TBQ_TOO_LARGE when no block holds them). */
TbqStatus tbq_writer_make_room (TbqWriter * w, size_t span);
/* An extent for a record of `size` bytes; waits or drops per backpressure
 * when the sink budget has no room. */
TbqStatus tbq_writer_wait_for_extent (TbqWriter * w, uint32_t size,
    TbqBlock ** e);
/* Give up a reserved, uncommitted large record and an extent taken for a
 * session's retry. */
void tbq_writer_drop_large (TbqWriter * w);

/* Count the wake-ups (system calls) the writer's thread made. */
static inline void
tbq_writer_woke (TbqWriter * w, int wakeups)
{
  if (wakeups != 0)
    tbq_count (&w->wakeups, (uint64_t) wakeups);
}

/* Bytes a record of `size` takes: SIZE_MAX where that does not fit a
 * 32-bit size_t (it can never fit a block). */
static inline size_t
tbq_writer_span (uint32_t size)
{
  size_t span = TBQ_RECORD_SPAN (size);

#if SIZE_MAX <= UINT32_MAX
  if (span < size)
    span = SIZE_MAX;
#endif
  return span;
}

/* Whether a record of `span` bytes travels inline: up to the inline limit,
 * or when no extent could ever hold its `size` bytes (a sink pool too
 * small) and a source block can. */
static inline bool
tbq_writer_is_inline (TbqWriter * w, size_t span, uint32_t size)
{
  return span <= w->inline_max
      || (span <= w->cur->capacity && !tbq_extents_can_hold (w->extents, size));
}

static inline void
tbq_writer_put_header (unsigned char *p, uint16_t type, uint32_t size)
{
  TbqRecordHeader h;

  h.size = size;
  h.type = type;
  h.reserved = 0;
  memcpy (p, &h, sizeof h);
}

#endif /* TBQ_WRITER_H */
