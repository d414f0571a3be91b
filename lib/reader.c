/* The reader: the queue's FIFO cursor over the sink layer, its out-of-line
 * parts (the take itself is inline, in reader.h), and the claim of a batch
 * for a reader of several.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Zero-copy consumers keep a record's bytes with tbq_block_ref()
 * (extent.c).
 * The reader's waits are in pull.c, the public reader calls in readers.c.
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
  r->readers = NULL;
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

const TbqRecordHeader *
tbq_cursor_locate_spilled (TbqReader * r, bool *moved)
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

TbqStatus
tbq_cursor_claim (TbqReader * r, uint32_t max, TbqBatch * b)
{
  const TbqRecordHeader *h = tbq_cursor_locate (r);
  TbqBlock *blk;
  uint32_t *pos, end, limit, n = 0;

  if (h == NULL)
    return r->io_failed ? TBQ_IO_ERROR : TBQ_EMPTY;
  if (TBQ_UNLIKELY (r->in_unit)) {
    blk = r->unit;
    pos = &r->unit_off;
    /* Relaxed: the unit came under the spill's lock, and its length is
     * final. */
    limit = atomic_load_explicit (&blk->published, memory_order_relaxed);
  } else {
    blk = r->blk;
    pos = &r->off;
    /* Acquire: pairs with the copier's release store of `published`
     * (tbq_cursor_locate() saw at least one record below it). */
    limit = atomic_load_explicit (&blk->published, memory_order_acquire);
  }
  end = *pos;
  do {
    end += (uint32_t) TBQ_RECORD_SPAN (tbq_record_at (blk->data + end)->size);
    n++;
  } while (n < max && end < limit);
  /* The batch's own reference: the cursor holds one while it is here. */
  tbq_block_ref (blk);
  b->blk = blk;
  b->off = *pos;
  b->end = end;
  *pos = end;
  tbq_count (&r->records_out, n);
  return TBQ_OK;
}

uint32_t
tbq_reader_prepare_wait (TbqReader * r)
{
  return r == NULL ? 0 : tbq_wake_sink_seq (r->wake);
}

void
tbq_cursor_note_idle (TbqReader * r)
{
  if (TBQ_UNLIKELY (tbq_block_is_marker (r->blk)))
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
  /* Acquire (both): as in tbq_cursor_take(), which follows. */
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
  while (tbq_cursor_take (r, &rec, &extent) == TBQ_OK) {
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
