/* The reader: takes sink blocks in FIFO order and iterates their records.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Zero-copy consumers keep a record's bytes with tbq_block_ref()
 * (extent.c).
 * The reader's waits are in pull.c.
 */
#include "reader.h"

void
tbq_reader_init (TbqReader * r, TbqBlock * first, TbqWake * wake,
    const _Atomic int *interrupted, uint32_t spins, TbqCopier * copier,
    int64_t coalesce_ns)
{
  r->blk = first;
  r->off = 0;
  r->extent = NULL;
  r->in_unit = false;
  r->io_failed = false;
  r->unit = NULL;
  r->unit_off = 0;
  r->wake = wake;
  r->interrupted = interrupted;
  r->spins = spins;
  r->copier = copier;
  tbq_coalesce_init (&r->coalesce, coalesce_ns);
  atomic_init (&r->coalesce_bound, r->coalesce.bound_ns);
}

void
tbq_reader_fini (TbqReader * r)
{
  if (r->extent != NULL)
    tbq_extent_unref (r->extent);
  r->extent = NULL;
  if (r->unit != NULL)
    tbq_extent_unref (r->unit);
  r->unit = NULL;
  tbq_block_unref (r->blk);
}

/* At a spill marker: the next record of the run's units, or NULL with
 * r->in_unit false when the run is over (r->blk and r->off are then where
 * the stream goes on: look there) or nothing is there yet.  *moved says
 * which. */
static const TbqRecordHeader *
reader_locate_spilled (TbqReader * r, bool *moved)
{
  TbqBlock *m = r->blk;

  *moved = false;
  for (;;) {
    TbqBlock *unit = NULL, *resume = NULL;
    uint32_t resume_off = 0;
    TbqStatus st;

    if (r->unit != NULL) {
      /* Relaxed: the unit came under the spill's lock. */
      if (r->unit_off < atomic_load_explicit (&r->unit->published,
              memory_order_relaxed)) {
        r->in_unit = true;
        return tbq_record_at (r->unit->data + r->unit_off);
      }
      tbq_extent_unref (r->unit);
      r->unit = NULL;
    }
    r->in_unit = false;
    if (r->discard.on) {
      /* A discard: what is read ahead and what the file holds go at once,
       * and the run ends as discarded (taking the units one by one could
       * let the spill thread see the reader at the marker with every unit
       * taken, and end it as read back). */
      *r->discard.count += tbq_spill_discard (r->spill, r->discard.release,
          r->discard.data);
    }
    st = tbq_spill_take (r->spill, m, &unit, &resume, &resume_off);
    if (st == TBQ_OK) {
      r->unit = unit;
      r->unit_off = 0;
      continue;
    }
    if (st == TBQ_NO_SPACE) {
      r->blk = resume;
      r->off = resume_off;
      tbq_block_unref (m);
      *moved = true;
      return NULL;
    }
    r->io_failed = st == TBQ_IO_ERROR;
    return NULL;
  }
}

/* The next record of the sink layer, moving past finished blocks (r->blk
 * and r->off end up at it), or NULL. */
static inline const TbqRecordHeader *
reader_locate (TbqReader * r)
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
      const TbqRecordHeader *h = reader_locate_spilled (r, &moved);

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

/* A large record: its payload is in its extent.  The indirect record and
 * the extent pointer were published with the record (block.h). */
static void
reader_fill_indirect (const TbqRecordHeader * h, TbqRecord * rec)
{
  TbqIndirect ind = tbq_record_indirect (h);

  rec->data = ind.extent->data;
  rec->size = (uint32_t) ind.size;
  rec->block = ind.extent;
}

/* The record at `h` in `b`. */
static inline void
reader_fill (const TbqRecordHeader * h, TbqBlock * b, TbqRecord * rec)
{
  rec->type = h->type;
  if (TBQ_UNLIKELY (tbq_record_is_indirect (h))) {
    reader_fill_indirect (h, rec);
    return;
  }
  rec->data = (const unsigned char *) h + TBQ_RECORD_HEADER_SIZE;
  rec->size = h->size;
  rec->block = b;
}

/* Take the next record, without counting it; a large record's extent
 * reference passes to the caller in *extent. */
static inline TbqStatus
reader_take (TbqReader * r, TbqRecord * rec, TbqBlock ** extent)
{
  const TbqRecordHeader *h = reader_locate (r);

  if (h == NULL)
    return TBQ_EMPTY;
  if (TBQ_UNLIKELY (r->in_unit)) {
    reader_fill (h, r->unit, rec);
    r->unit_off += (uint32_t) TBQ_RECORD_SPAN (h->size);
    if (rec->block != r->unit)
      *extent = rec->block;
    return TBQ_OK;
  }
  reader_fill (h, r->blk, rec);
  r->off += (uint32_t) TBQ_RECORD_SPAN (h->size);
  if (TBQ_UNLIKELY (rec->block != r->blk))
    *extent = rec->block;
  return TBQ_OK;
}

/* The record returned before is left behind: drop the reader's reference
 * to its extent. */
static inline void
reader_leave (TbqReader * r)
{
  if (TBQ_UNLIKELY (r->extent != NULL)) {
    tbq_extent_unref (r->extent);
    r->extent = NULL;
  }
}

TbqStatus
tbq_reader_next (TbqReader * r, TbqRecord * rec)
{
  TbqStatus st;

  if (TBQ_UNLIKELY (r == NULL || rec == NULL))
    return TBQ_INVALID_ARGUMENT;
  reader_leave (r);
  st = reader_take (r, rec, &r->extent);
  if (st == TBQ_OK) {
    tbq_count (&r->records_out, 1);
    tbq_count (&r->bytes_out, rec->size);
  } else if (TBQ_UNLIKELY (r->io_failed)) {
    st = TBQ_IO_ERROR;
  }
  return st;
}

TbqStatus
tbq_reader_peek (TbqReader * r, TbqRecord * rec)
{
  const TbqRecordHeader *h;

  if (TBQ_UNLIKELY (r == NULL || rec == NULL))
    return TBQ_INVALID_ARGUMENT;
  reader_leave (r);
  h = reader_locate (r);
  if (h == NULL)
    return TBQ_UNLIKELY (r->io_failed) ? TBQ_IO_ERROR : TBQ_EMPTY;
  /* Not taken: a large record's extent reference stays with the record. */
  reader_fill (h, r->in_unit ? r->unit : r->blk, rec);
  return TBQ_OK;
}

uint32_t
tbq_reader_prepare_wait (TbqReader * r)
{
  return r == NULL ? 0 : tbq_wake_sink_seq (r->wake);
}

void
tbq_reader_wake (TbqReader * r)
{
  if (r != NULL)
    tbq_wake_kick (r->wake);
}

void
tbq_reader_note_idle (TbqReader * r)
{
  if (r != NULL && TBQ_UNLIKELY (tbq_block_is_marker (r->blk)))
    (void) tbq_spill_ready (r->spill, r->blk);
}

bool
tbq_reader_ready (TbqReader * r)
{
  TbqBlock *b = r->blk;

  if (TBQ_UNLIKELY (tbq_block_is_marker (b)))
    return r->io_failed || (r->unit != NULL && r->unit_off
        < atomic_load_explicit (&r->unit->published, memory_order_relaxed))
        || tbq_spill_ready (r->spill, b) || tbq_wake_take_kick (r->wake);
  /* Acquire (both): as in reader_take(), which follows. */
  return r->off < atomic_load_explicit (&b->published, memory_order_acquire)
      || atomic_load_explicit (&b->next, memory_order_acquire) != NULL
      || tbq_wake_take_kick (r->wake);
}

bool
tbq_reader_seq_moved (TbqReader * r, uint32_t key)
{
  return tbq_wake_sink_seq (r->wake) != key || tbq_wake_take_kick (r->wake);
}

void
tbq_reader_discard (TbqReader * r, TbqReleaseFunc release, void *user_data,
    uint64_t * count)
{
  TbqRecord rec;
  TbqBlock *extent = NULL;

  r->discard.on = r->spill != NULL;
  r->discard.release = release;
  r->discard.data = user_data;
  r->discard.count = count;
  while (reader_take (r, &rec, &extent) == TBQ_OK) {
    if (release)
      release (rec.type, rec.data, rec.size, user_data);
    /* A large record's extent: the record's reference goes with it. */
    if (extent != NULL)
      tbq_extent_unref (extent);
    extent = NULL;
    (*count)++;
  }
  r->discard.on = false;
  r->io_failed = false;
}
