/* The reader: takes sink blocks in FIFO order and iterates their records.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Zero-copy consumers keep a record's bytes with tbq_block_ref() (pool.c).
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
  r->wake = wake;
  r->interrupted = interrupted;
  r->spins = spins;
  r->copier = copier;
  tbq_coalesce_init (&r->coalesce, coalesce_ns);
}

void
tbq_reader_fini (TbqReader * r)
{
  tbq_block_unref (r->blk);
}

/* Next record of the sink layer, without counting it. */
static inline TbqStatus
reader_take (TbqReader * r, TbqRecord * rec)
{
  TbqBlock *b = r->blk;
  uint32_t off = r->off;
  const TbqRecordHeader *h;

  for (;;) {
    TbqBlock *next;

    /* Acquire: pairs with the copier's release store of `published`. */
    if (off < atomic_load_explicit (&b->published, memory_order_acquire))
      break;
    /* Acquire: a non-NULL link makes the block's final length visible. */
    next = atomic_load_explicit (&b->next, memory_order_acquire);
    if (next == NULL)
      return TBQ_EMPTY;
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
  h = tbq_record_at (b->data + off);
  rec->data = b->data + off + TBQ_RECORD_HEADER_SIZE;
  rec->size = h->size;
  rec->type = h->type;
  rec->block = b;
  r->off = off + (uint32_t) TBQ_RECORD_SPAN (h->size);
  return TBQ_OK;
}

static inline TbqStatus
reader_take_checked (TbqReader * r, TbqRecord * rec)
{
  if (TBQ_UNLIKELY (r == NULL || rec == NULL))
    return TBQ_INVALID_ARGUMENT;
  return reader_take (r, rec);
}

TbqStatus
tbq_reader_next (TbqReader * r, TbqRecord * rec)
{
  TbqStatus st = reader_take_checked (r, rec);

  if (st == TBQ_OK) {
    tbq_count (&r->records_out, 1);
    tbq_count (&r->bytes_out, rec->size);
  }
  return st;
}

TbqStatus
tbq_reader_peek (TbqReader * r, TbqRecord * rec)
{
  TbqStatus st = reader_take_checked (r, rec);

  /* Step back over the record; reader_take may have moved to a new block,
   * which is where the record is. */
  if (st == TBQ_OK)
    r->off = (uint32_t) ((const unsigned char *) rec->data
        - TBQ_RECORD_HEADER_SIZE - rec->block->data);
  return st;
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

bool
tbq_reader_ready (TbqReader * r)
{
  TbqBlock *b = r->blk;

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

  while (reader_take (r, &rec) == TBQ_OK) {
    if (release)
      release (rec.type, rec.data, rec.size, user_data);
    (*count)++;
  }
}
