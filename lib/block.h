/* libtbq internals: the block, the record layout, and the memory protocol.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A block is a fixed-size, cache-line-aligned chunk of a pool with a
 * 64-byte header; records (8-byte header + payload, 8-byte aligned) follow
 * one another in its data area and never straddle blocks.  A record too
 * large to travel inline is an *indirect* record: its header and a
 * TbqIndirect (extent pointer + payload size) in the block, its payload in
 * an *extent* (extent.h), which starts with the same 64-byte header.
 *
 * OWNERSHIP AND ORDERING (the whole library's memory protocol, in one place;
 * every other file points here):
 *
 *  - Chains.  A chain links the blocks of one producer (a writer's source
 *    blocks, or the copier's sink blocks) through `next`.  The producer of a
 *    chain stores `published` (release) after writing complete records, and
 *    stores `next` (release) after the final `published` store: a non-NULL
 *    `next` *seals* the block.  The consumer loads `published` (acquire) and
 *    may read every byte below it; after loading a non-NULL `next` (acquire)
 *    it reloads `published` to get the final length.
 *    Invariant: consumer offset <= published <= capacity, and a block's
 *    bytes below `published` never change until the block is back in its
 *    pool.
 *
 *  - Free lists (pool.h).  A pool's free list is a LIFO stack with many
 *    pushers and ONE popper (the writer for its source pool, the copier for
 *    the sink pool), so there is no ABA.  A push is a release CAS, a pop an
 *    acquire CAS.  Sink blocks are reference counted (acq_rel decrement):
 *    every read of a block's bytes happens before its reuse.
 *
 *  - Extents (extent.h).  The writer fills an extent, then writes the
 *    indirect record that points to it; the extent pointer and the payload
 *    travel with the chain protocol above (the writer's release store of
 *    `published`, then the copier's), so whoever reads the indirect record
 *    sees the payload.  An extent is reference counted like a sink block:
 *    the indirect record owns one reference, which passes to the reader
 *    when it takes the record (dropped at its next take) or to discard.
 *    The last unref (acq_rel) returns it to the idle cache, whose lock
 *    orders it before its reuse by a writer.  An extent a spill read back
 *    may leave the budget before (tbq_block_leave_budget(): an atomic
 *    flag taken once, by a holder of a reference); the last unref reads
 *    the flag after its acq_rel decrement and uncharges only what is
 *    still charged.
 *
 *  - The sink budget (pool.h).  Sink blocks in use and extents in use are
 *    charged, in bytes, to one counter of the sink pool (a relaxed CAS: it
 *    counts memory, it publishes nothing), and no charge ever takes it past
 *    its limit.  Whoever uncharges notifies the sink pool's event, so
 *    writers, the copier and the spill thread waiting for room wake.
 *
 *  - Events (event.h).  A waiter reads the event's `seq` (acquire),
 *    registers in `waiters`, issues a full fence, re-checks its condition
 *    and sleeps on `seq`.  A notifier makes its condition true, issues a
 *    full fence and wakes only if `waiters` is non-zero (Dekker).  A wake
 *    bumps `seq` with release, so a flag stored before an unconditional wake
 *    (interrupt, stop, kick) needs no ordering of its own.
 *
 *  - The copier's state (copier.h) is owned by whoever holds its `busy`
 *    flag (acquire to take, release to give back): the copier in a pass, or
 *    a reader pulling (pull.c).
 *
 *  - Several readers (readers.h): the queue's FIFO cursor is read and
 *    moved only under their claim lock.  A batch is a range of records of
 *    one sink block or spill unit below the `published` its claimer
 *    loaded with acquire; it holds its own reference to that block or
 *    unit (taken relaxed, the cursor holding one), and its large records
 *    their extents' references, which pass to the reader that takes them.
 *    A batch given back passes to its next claimer under the lock.
 *
 *  - The writer registry (registry.h): a slot is stored with release once
 *    the writer is initialised; only the copier and the queue's discard and
 *    free remove and free writers, under the registry lock, so anyone
 *    holding the lock may read a registered writer.
 *
 *  - Doorbells (wake.h) say *that* something happened; the data they refer
 *    to is always reached through the chain protocol above.
 */
#ifndef TBQ_BLOCK_H
#define TBQ_BLOCK_H

#include "tbq.h"
#include "machine.h"

#include <stdbool.h>

typedef struct TbqPool TbqPool;
typedef struct TbqExtents TbqExtents;

struct TbqBlock
{
  _Atomic uint32_t published;   /* bytes of complete records visible to the consumer */
  _Atomic uint32_t refs;        /* sink blocks: copier + reader + zero-copy holders;
                                 * extents: the record (then the reader) + holders */
  _Atomic (TbqBlock *) next;    /* successor in the chain; non-NULL = sealed */
  TbqBlock *free_next;          /* free-list link (owned by whoever holds the block) */
  TbqPool *pool;                /* its pool; extents: the sink pool (budget) */
  TbqExtents *extents;          /* extents: their idle cache; NULL for blocks */
  uint32_t capacity;            /* data bytes */
  uint32_t mapped;              /* 1 = mmap'ed, 0 = aligned_alloc'ed */
  uint32_t from_file;           /* extents: TBQ_FROM_FILE_* (set by whoever
                                 * takes it) */
  _Atomic uint32_t unbudgeted;  /* extents: out of the sink budget already
                                 * (tbq_block_leave_budget()) */
  unsigned char pad_[TBQ_BLOCK_HEADER_SIZE - 2 * sizeof (uint32_t)
      - 4 * sizeof (void *) - 4 * sizeof (uint32_t)];
  unsigned char data[];
};

_Static_assert (sizeof (TbqBlock) == TBQ_BLOCK_HEADER_SIZE,
    "block header size");

/* TbqBlock.from_file of an extent: a writer's (0), the records of a unit
 * read back from the spill file, or one large record's payload read back
 * (spill.h). */
#define TBQ_FROM_FILE_NO 0u
#define TBQ_FROM_FILE_RECORDS 1u
#define TBQ_FROM_FILE_PAYLOAD 2u

/* A block about to start a chain position: empty and unsealed.  Relaxed:
 * nobody sees it before the release store that links it. */
static inline void
tbq_block_reset (TbqBlock * b)
{
  atomic_store_explicit (&b->published, 0, memory_order_relaxed);
  atomic_store_explicit (&b->next, NULL, memory_order_relaxed);
}

/* A spill run's marker (spill.h): a header-only block of no pool, linked
 * into the sink chain where a run began; its `published` stays 0. */
static inline bool
tbq_block_is_marker (const TbqBlock * b)
{
  return b->pool == NULL && b->extents == NULL;
}

static inline const TbqRecordHeader *
tbq_record_at (const unsigned char *p)
{
  return (const TbqRecordHeader *) (const void *) p;
}

/* TbqRecordHeader.reserved of an indirect record (0 for an inline one). */
#define TBQ_RECORD_INDIRECT 1u

/* The payload of an indirect record (its header says sizeof (TbqIndirect),
 * so every walk over a block steps over it like any record). */
typedef struct
{
  TbqBlock *extent;             /* holds the record's payload at data[] */
  uint64_t size;                /* payload bytes */
} TbqIndirect;

/* Block bytes of an indirect record. */
#define TBQ_INDIRECT_SPAN TBQ_RECORD_SPAN (sizeof (TbqIndirect))

static inline bool
tbq_record_is_indirect (const TbqRecordHeader * h)
{
  return h->reserved != 0;
}

static inline TbqIndirect
tbq_record_indirect (const TbqRecordHeader * h)
{
  TbqIndirect ind;

  memcpy (&ind, (const unsigned char *) h + TBQ_RECORD_HEADER_SIZE, sizeof ind);
  return ind;
}

/* Write an indirect record for `size` bytes in `e` at `p`. */
static inline void
tbq_record_put_indirect (unsigned char *p, uint16_t type, uint32_t size,
    TbqBlock * e)
{
  TbqRecordHeader h;
  TbqIndirect ind;

  h.size = (uint32_t) sizeof ind;
  h.type = type;
  h.reserved = TBQ_RECORD_INDIRECT;
  ind.extent = e;
  ind.size = size;
  memcpy (p, &h, sizeof h);
  memcpy (p + TBQ_RECORD_HEADER_SIZE, &ind, sizeof ind);
}

/* The record at `h` in `b` (a sink block or a spill unit), as the reader
 * hands it out: an inline record's payload follows its header; a large
 * record's is in its extent (the indirect record and the extent pointer
 * were published with the record, see "Extents" above), which is then
 * rec->block. */
static inline void
tbq_record_fill (const TbqRecordHeader * h, TbqBlock * b, TbqRecord * rec)
{
  rec->type = h->type;
  if (TBQ_UNLIKELY (tbq_record_is_indirect (h))) {
    TbqIndirect ind = tbq_record_indirect (h);

    rec->data = ind.extent->data;
    rec->size = (uint32_t) ind.size;
    rec->block = ind.extent;
    return;
  }
  rec->data = (const unsigned char *) h + TBQ_RECORD_HEADER_SIZE;
  rec->size = h->size;
  rec->block = b;
}

#endif /* TBQ_BLOCK_H */
