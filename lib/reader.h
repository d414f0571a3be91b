/* libtbq internals: the reader (the sink side) and the queue's FIFO cursor.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The queue's own TbqReader is its *cursor*: it takes sink blocks in FIFO
 * order (block.h, "Chains") and iterates their records.  It holds one
 * reference to the sink block it is in and drops it when it moves past a
 * sealed, fully read block.  A large record is an indirect record
 * (block.h): the reader hands out its extent's payload and holds the
 * record's reference to the extent until its next take.  With one reader
 * (TbqConfig.max_readers 1) the cursor is the reader handed out; with
 * several it stays hidden and every reader handed out claims batches from
 * it (readers.h, which also holds the public reader calls).  Its waits
 * live a room above, in pull.c, because a waiting reader may move records
 * through the copier itself; the reader never calls the copier.
 *
 * The functions named tbq_cursor_* are the cursor's halves of the public
 * reader calls.  The take is inline, here: the public calls of a lone
 * reader compile it in as they always did, and pay for several readers
 * one test of `readers`.
 */
#ifndef TBQ_READER_H
#define TBQ_READER_H

#include "coalesce.h"
#include "copier.h"
#include "spill.h"

typedef struct TbqReaders TbqReaders;

/* Records [off, end) of `blk`, a sink block or a spill unit, claimed by
 * one of several readers (readers.h): the batch holds a reference to
 * `blk`, and each large record in it the reference to its extent
 * (block.h), which passes to whoever takes it.  Empty: off == end. */
typedef struct
{
  TbqBlock *blk;                /* NULL once its reference is dropped */
  uint32_t off;
  uint32_t end;
  uint64_t seq;                 /* claim order (discard goes oldest first) */
} TbqBatch;

struct TbqReader
{
  /* Reader-owned, hot. */
  TbqBlock *blk;                /* the sink block being read */
  uint32_t off;                 /* next record in `blk` */
  bool in_unit;                 /* at a spill marker, reading `unit` */
  bool io_failed;               /* the spill could not read back what is next */
  TbqBlock *extent;             /* the extent of the record taken last, or
                                 * NULL: the reader's reference */
  /* Read by stats (relaxed).  The cursor of several readers counts the
   * records claimed from it (its waits' arrival estimate, pull.c). */
  _Atomic uint64_t records_out;
  _Atomic uint64_t bytes_out;
  /* NULL: the queue's own reader (the cursor), read directly.  Else a
   * reader of several (readers.h): it reads `claim.batch` only. */
  TbqReaders *readers;
  TbqWake *wake;
  const _Atomic int *interrupted;
  uint32_t spins;               /* busy-wait rounds before sleeping */

  /* Spill (spill.h): set up once; the unit being read at a marker. */
  TbqSpill *spill;
  TbqBlock *unit;               /* the reader's reference, or NULL */
  uint32_t unit_off;
  struct
  {
    bool on;                    /* tbq_reader_discard() runs */
    TbqReleaseFunc release;
    void *data;
    uint64_t *count;
  } discard;

  /* For the rooms above; reader.c never touches them. */
  TbqCopier *copier;            /* pull.c: the copier a waiting reader pulls through */
  TbqCoalesce coalesce;         /* pull.c: how a waiting reader wants to be woken */
  _Atomic int64_t coalesce_bound;       /* pull.c: the bound asked for
                                         * (tbq_reader_set_coalesce), taken
                                         * up by the next wait's plan */
  uint32_t pull_seen;           /* pull.c: the pull requests answered so far */
  _Atomic uint64_t naps;        /* pull.c: waits that napped (statistics) */
  _Atomic uint64_t naps_woken;  /* pull.c: naps that ended before their deadline */
  struct
  {
    TbqBatch batch;             /* the records claimed and not taken yet */
    _Atomic uint32_t max;       /* records per claim (tbq_reader_set_batch) */
    _Atomic int kicked;         /* tbq_reader_wake() pending */
    _Atomic uint64_t batches;   /* claims that took records */
    _Atomic uint64_t waits;     /* claims that found the claim lock taken */
    uint32_t slot;              /* in TbqReaders.open */
  } claim;                      /* readers.c: a reader of several */
  struct
  {
    pthread_t thread;
    bool running;
    _Atomic int stop;
    TbqConsumeFunc fn;
    void *data;
  } consumer;                   /* consumer.c: the callback consumer thread */
};

/* Start reading at `first` (the copier's first sink block, whose reader
 * reference this reader now holds); waits coalesce within `coalesce_ns`
 * (0: woken per record). */
void tbq_reader_init (TbqReader * r, TbqBlock * first, TbqWake * wake,
    const _Atomic int *interrupted, uint32_t spins, TbqCopier * copier,
    int64_t coalesce_ns);
/* Drop the reader's reference to its sink block. */
void tbq_reader_fini (TbqReader * r);

/* Wait predicates (pull.c): a record is visible, or a kick is pending. */
bool tbq_reader_ready (TbqReader * r);
/* The sink sequence moved past `key`, or a kick is pending. */
bool tbq_reader_seq_moved (TbqReader * r, uint32_t key);

/* pull.c: forget what the waits learnt about the arrivals (a discard
 * restarts the stream: the next wait is woken per record).  Nothing else
 * uses the reader. */
void tbq_reader_restart_waits (TbqReader * r);

/* Take every record of the sink layer, calling `release` for each; the
 * copier is stopped and published what it copied. */
void tbq_reader_discard (TbqReader * r, TbqReleaseFunc release,
    void *user_data, uint64_t * count);

/* ---- the cursor's halves of the public reader calls ---- */

/* tbq_reader_note_idle() of the cursor. */
void tbq_cursor_note_idle (TbqReader * r);
/* Several readers (readers.c), under their claim lock: up to `max`
 * records from the cursor as one batch (*b, empty before), never past the
 * end of its current sink block or spill unit; the batch takes a
 * reference to that block or unit.  TBQ_OK, TBQ_EMPTY, or TBQ_IO_ERROR
 * (spill: what is next cannot be read back). */
TbqStatus tbq_cursor_claim (TbqReader * r, uint32_t max, TbqBatch * b);
/* pull.c: the cursor's waits (tbq_reader_wait(), tbq_reader_sleep(),
 * tbq_reader_set_coalesce() of a lone reader), and the wait until
 * `ready (arg)` that a reader of several makes on the cursor's behalf. */
TbqStatus tbq_cursor_wait (TbqReader * r, int64_t timeout_ns);
TbqStatus tbq_cursor_sleep (TbqReader * r, uint32_t key, int64_t timeout_ns);
TbqStatus tbq_cursor_set_coalesce (TbqReader * r, int64_t bound_ns);
TbqStatus tbq_cursor_wait_until (TbqReader * r, TbqReadyFunc ready,
    void *arg, int64_t deadline);

/* At a spill marker: the next record of the run's units, or NULL with
 * r->in_unit false when the run is over (r->blk and r->off are then where
 * the stream goes on: look there) or nothing is there yet.  *moved says
 * which.  Out of line: tbq_cursor_locate() meets a marker rarely. */
const TbqRecordHeader *tbq_cursor_locate_spilled (TbqReader * r,
    bool *moved);

/* The next record of the sink layer, moving past finished blocks (r->blk
 * and r->off end up at it), or NULL. */
static inline const TbqRecordHeader *
tbq_cursor_locate (TbqReader * r)
{
  TbqBlock *b = r->blk;
  uint32_t off = r->off;

  for (;;) {
    TbqBlock *next;

    /* Acquire: pairs with the copier's release store of `published`. */
    if (off < atomic_load_explicit (&b->published, memory_order_acquire))
      break;
    if (TBQ_UNLIKELY (tbq_block_is_marker (b))) {
      bool moved;
      const TbqRecordHeader *h = tbq_cursor_locate_spilled (r, &moved);

      if (!moved)
        return h;
      b = r->blk;
      off = r->off;
      continue;
    }
    /* Acquire: a non-NULL link makes the block's final length visible. */
    next = atomic_load_explicit (&b->next, memory_order_acquire);
    if (next == NULL)
      return NULL;
    /* Relaxed: ordered by the acquire load of the link. */
    if (off < atomic_load_explicit (&b->published, memory_order_relaxed))
      break;
    r->blk = next;
    r->off = 0;
    /* The last unref of a block wakes an idle copier if there is surplus
     * to trim (tbq_block_unref). */
    tbq_block_unref (b);
    b = next;
    off = 0;
  }
  return tbq_record_at (b->data + off);
}

/* Take the next record, without counting it; a large record's extent
 * reference passes to the caller in *extent. */
static inline TbqStatus
tbq_cursor_take (TbqReader * r, TbqRecord * rec, TbqBlock ** extent)
{
  const TbqRecordHeader *h = tbq_cursor_locate (r);

  if (h == NULL)
    return TBQ_EMPTY;
  if (TBQ_UNLIKELY (r->in_unit)) {
    tbq_record_fill (h, r->unit, rec);
    r->unit_off += (uint32_t) TBQ_RECORD_SPAN (h->size);
    if (rec->block != r->unit)
      *extent = rec->block;
    return TBQ_OK;
  }
  tbq_record_fill (h, r->blk, rec);
  r->off += (uint32_t) TBQ_RECORD_SPAN (h->size);
  if (TBQ_UNLIKELY (rec->block != r->blk))
    *extent = rec->block;
  return TBQ_OK;
}

/* The record returned before is left behind: drop the reader's reference
 * to its extent. */
static inline void
tbq_cursor_leave (TbqReader * r)
{
  if (TBQ_UNLIKELY (r->extent != NULL)) {
    tbq_extent_unref (r->extent);
    r->extent = NULL;
  }
}

/* tbq_reader_next() of the cursor. */
static inline TbqStatus
tbq_cursor_next (TbqReader * r, TbqRecord * rec)
{
  TbqStatus st;

  tbq_cursor_leave (r);
  st = tbq_cursor_take (r, rec, &r->extent);
  if (st == TBQ_OK) {
    tbq_count (&r->records_out, 1);
    tbq_count (&r->bytes_out, rec->size);
  } else if (TBQ_UNLIKELY (r->io_failed)) {
    st = TBQ_IO_ERROR;
  }
  return st;
}

/* tbq_reader_peek() of the cursor. */
static inline TbqStatus
tbq_cursor_peek (TbqReader * r, TbqRecord * rec)
{
  const TbqRecordHeader *h;

  tbq_cursor_leave (r);
  h = tbq_cursor_locate (r);
  if (h == NULL)
    return TBQ_UNLIKELY (r->io_failed) ? TBQ_IO_ERROR : TBQ_EMPTY;
  /* Not taken: a large record's extent reference stays with the record. */
  tbq_record_fill (h, r->in_unit ? r->unit : r->blk, rec);
  return TBQ_OK;
}

#endif /* TBQ_READER_H */
