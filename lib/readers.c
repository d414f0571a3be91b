/* The public reader calls, and several readers on one queue: batches
 * claimed from the shared cursor, and the waits of readers that share it.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The design, its invariants, what wakes each wait and the memory orders
 * are in readers.h.  Each public call first asks whether its reader is
 * one of several (`readers`); a lone reader's call is the cursor's own
 * (reader.h, pull.c), unchanged.
 */
#include "readers.h"

#include <errno.h>
#include <time.h>

/* ---- the shared state ------------------------------------------------ */

TbqReaders *
tbq_readers_new (TbqReader * cursor, uint32_t max, uint32_t batch)
{
  TbqReaders *s = tbq_alloc_aligned (sizeof *s);

  if (s == NULL)
    return NULL;
  s->open = calloc (max, sizeof *s->open);
  s->returned = calloc (max, sizeof *s->returned);
  if (s->open == NULL || s->returned == NULL) {
    free (s->open);
    free (s->returned);
    free (s);
    return NULL;
  }
  s->cursor = cursor;
  s->max = max;
  s->batch = batch;
  pthread_mutex_init (&s->lock, NULL);
  /* Deadlines are CLOCK_MONOTONIC (event.h). */
  tbq_cond_init_monotonic (&s->cond);
  return s;
}

/* Drop a batch's reference to its block or unit (its records are taken,
 * released or given back). */
static void
batch_drop (TbqBatch * b)
{
  if (b->blk != NULL)
    tbq_block_unref (b->blk);
  b->blk = NULL;
  b->off = b->end = 0;
}

/* A reader's own references: the extent of the record it took last, and
 * its batch's block or unit. */
static void
reader_drop (TbqReader * r)
{
  tbq_cursor_leave (r);
  batch_drop (&r->claim.batch);
}

void
tbq_readers_free (TbqReaders * s)
{
  uint32_t i;

  for (i = 0; i < s->max; i++) {
    if (s->open[i] != NULL) {
      reader_drop (s->open[i]);
      free (s->open[i]);
    }
  }
  for (i = 0; i < s->n_returned; i++)
    batch_drop (&s->returned[i]);
  pthread_mutex_destroy (&s->lock);
  pthread_cond_destroy (&s->cond);
  free (s->open);
  free (s->returned);
  free (s);
}

/* Under `lock`: something may be claimable now (a lead ended, a batch was
 * given back): every follower looks again. */
static void
followers_look (TbqReaders * s)
{
  s->looks++;
  pthread_cond_broadcast (&s->cond);
}

/* Every follower wakes, to see what it waits for besides (a kick, the
 * interrupt flag): `lock` orders the caller's change before that look. */
void
tbq_readers_wake (TbqReaders * s)
{
  pthread_mutex_lock (&s->lock);
  pthread_cond_broadcast (&s->cond);
  pthread_mutex_unlock (&s->lock);
}

TbqStatus
tbq_readers_open (TbqReaders * s, TbqReader ** out)
{
  TbqReader *c = s->cursor;
  TbqReader *r = tbq_alloc_aligned (sizeof *r);
  uint32_t i;

  if (r == NULL)
    return TBQ_NO_MEMORY;
  /* Zeroed: no batch, no extent, no counts.  Its waits go through the
   * cursor's doorbell and copier (the callback consumer uses them too). */
  r->readers = s;
  r->wake = c->wake;
  r->interrupted = c->interrupted;
  r->spins = c->spins;
  r->copier = c->copier;
  atomic_init (&r->claim.max, s->batch);
  pthread_mutex_lock (&s->lock);
  if (s->n_open == s->max) {
    pthread_mutex_unlock (&s->lock);
    free (r);
    return TBQ_BUSY;
  }
  for (i = 0; s->open[i] != NULL; i++) {
  }
  s->open[i] = r;
  r->claim.slot = i;
  s->n_open++;
  pthread_mutex_unlock (&s->lock);
  *out = r;
  return TBQ_OK;
}

static void
totals_add (TbqReaderTotals * t, TbqReader * r)
{
  t->records_out += atomic_load_explicit (&r->records_out,
      memory_order_relaxed);
  t->bytes_out += atomic_load_explicit (&r->bytes_out, memory_order_relaxed);
  t->batches += atomic_load_explicit (&r->claim.batches,
      memory_order_relaxed);
  t->claim_waits += atomic_load_explicit (&r->claim.waits,
      memory_order_relaxed);
}

void
tbq_readers_close (TbqReader * r)
{
  TbqReaders *s = r->readers;
  TbqBatch *b = &r->claim.batch;
  bool give = b->off != b->end;

  tbq_cursor_leave (r);
  if (!give)
    batch_drop (b);
  pthread_mutex_lock (&s->lock);
  if (give) {
    /* Room: given back and held never number more than `max` (readers.h). */
    s->returned[s->n_returned++] = *b;
    followers_look (s);
  }
  totals_add (&s->retired, r);
  s->open[r->claim.slot] = NULL;
  s->n_open--;
  pthread_mutex_unlock (&s->lock);
  /* The leader may claim it: its wait ends when the sequence moves. */
  if (give)
    tbq_wake_sink_published (r->wake);
  free (r);
}

TbqReader *
tbq_readers_at (TbqReaders * s, uint32_t i)
{
  return s->open[i];
}

/* ---- claiming -------------------------------------------------------- */

/* The oldest batch given back (under `lock`; there is one). */
static TbqBatch
returned_take (TbqReaders * s)
{
  uint32_t i, oldest = 0;
  TbqBatch b;

  for (i = 1; i < s->n_returned; i++)
    if (s->returned[i].seq < s->returned[oldest].seq)
      oldest = i;
  b = s->returned[oldest];
  s->returned[oldest] = s->returned[--s->n_returned];
  return b;
}

/* Claim the next batch for `r`, whose batch is read out: TBQ_OK, TBQ_EMPTY
 * or TBQ_IO_ERROR. */
static TbqStatus
claim (TbqReader * r)
{
  TbqReaders *s = r->readers;
  TbqBatch *b = &r->claim.batch;
  TbqStatus st = TBQ_OK;

  /* The record returned last was left behind (tbq_cursor_leave()): the
   * batch's block may go. */
  batch_drop (b);
  if (pthread_mutex_trylock (&s->lock) != 0) {
    tbq_count (&r->claim.waits, 1);
    pthread_mutex_lock (&s->lock);
  }
  if (s->n_returned > 0) {
    *b = returned_take (s);
  } else {
    /* Relaxed: see tbq_reader_set_batch(). */
    st = tbq_cursor_claim (s->cursor, atomic_load_explicit (&r->claim.max,
            memory_order_relaxed), b);
    if (st == TBQ_OK)
      b->seq = s->claims++;
  }
  pthread_mutex_unlock (&s->lock);
  if (st == TBQ_OK)
    tbq_count (&r->claim.batches, 1);
  return st;
}

/* The record at the batch's position (the batch is not empty). */
static inline const TbqRecordHeader *
batch_fill (TbqBatch * b, TbqRecord * rec)
{
  const TbqRecordHeader *h = tbq_record_at (b->blk->data + b->off);

  tbq_record_fill (h, b->blk, rec);
  return h;
}

static TbqStatus
claimer_next (TbqReader * r, TbqRecord * rec)
{
  TbqBatch *b = &r->claim.batch;
  const TbqRecordHeader *h;
  TbqStatus st;

  tbq_cursor_leave (r);
  if (b->off == b->end && (st = claim (r)) != TBQ_OK)
    return st;
  h = batch_fill (b, rec);
  b->off += (uint32_t) TBQ_RECORD_SPAN (h->size);
  /* A large record's extent reference passes to the reader (block.h). */
  if (TBQ_UNLIKELY (rec->block != b->blk))
    r->extent = rec->block;
  tbq_count (&r->records_out, 1);
  tbq_count (&r->bytes_out, rec->size);
  return TBQ_OK;
}

static TbqStatus
claimer_peek (TbqReader * r, TbqRecord * rec)
{
  TbqBatch *b = &r->claim.batch;
  TbqStatus st;

  tbq_cursor_leave (r);
  if (b->off == b->end && (st = claim (r)) != TBQ_OK)
    return st;
  /* Not taken: a large record's extent reference stays with the record. */
  batch_fill (b, rec);
  return TBQ_OK;
}

/* ---- waiting --------------------------------------------------------- */

static bool
kicked (TbqReader * r)
{
  /* Relaxed: a kick carries no data (readers.h). */
  return atomic_load_explicit (&r->claim.kicked, memory_order_relaxed) != 0;
}

/* Consume a pending kick. */
static bool
take_kick (TbqReader * r)
{
  return kicked (r) && atomic_exchange_explicit (&r->claim.kicked, 0,
      memory_order_relaxed) != 0;
}

static bool
interrupted (TbqReader * r)
{
  /* Relaxed: raised before an unconditional wake (block.h, "Events"),
   * here a broadcast under `lock`. */
  return atomic_load_explicit (r->interrupted, memory_order_relaxed) != 0;
}

/* Under `lock`: whether `r` has a record to take or to claim.  At a spill
 * marker the look tells the spill thread that a reader waits there
 * (tbq_reader_ready()). */
static bool
claimable (TbqReaders * s, TbqReader * r)
{
  return r->claim.batch.off != r->claim.batch.end || s->n_returned > 0
      || tbq_reader_ready (s->cursor);
}

typedef struct
{
  TbqReader *r;
  uint32_t key;
} LeadArg;

/* The leader's condition, looked at without `lock`: the sink sequence
 * moved past the key taken when nothing was claimable, or a kick (its
 * own, or the queue's). */
static bool
lead_ready (void *arg)
{
  LeadArg *a = arg;

  return kicked (a->r) || tbq_reader_seq_moved (a->r, a->key);
}

/* Under `lock` (let go meanwhile): wait on the cursor for every reader,
 * then wake the followers.  What wakes it: readers.h. */
static TbqStatus
lead (TbqReaders * s, TbqReader * r, uint32_t key, int64_t deadline)
{
  LeadArg a = { r, key };
  TbqStatus st;

  s->leading = true;
  pthread_mutex_unlock (&s->lock);
  st = tbq_cursor_wait_until (s->cursor, lead_ready, &a, deadline);
  pthread_mutex_lock (&s->lock);
  s->leading = false;
  followers_look (s);
  if (st == TBQ_OK)
    (void) take_kick (r);
  return st;
}

/* Under `lock`: sleep until there is something to look at (a lead
 * ended, a batch given back), a kick, an interrupt or the deadline (each
 * broadcast under `lock`: readers.h). */
static void
follow (TbqReaders * s, TbqReader * r, int64_t deadline)
{
  uint64_t seen = s->looks;

  /* Release: see readers.h, "MEMORY ORDERS". */
  atomic_store_explicit (&s->sleeps, atomic_load_explicit (&s->sleeps,
          memory_order_relaxed) + 1, memory_order_release);
  while (s->looks == seen && !kicked (r) && !interrupted (r))
    if (tbq_cond_wait_until (&s->cond, &s->lock, deadline))
      break;
}

/* A reader of several waits: for a record to take (`any_record`), or for
 * the sink sequence to move past `key` (tbq_reader_sleep()).  TBQ_OK (a
 * kick too), TBQ_INTERRUPTED, TBQ_TIMEOUT at `deadline`. */
static TbqStatus
claimer_wait (TbqReader * r, bool any_record, uint32_t key, int64_t deadline)
{
  TbqReaders *s = r->readers;
  TbqStatus st;

  pthread_mutex_lock (&s->lock);
  for (;;) {
    /* Taken before the look: what is published after it moves it. */
    uint32_t seq = tbq_wake_sink_seq (r->wake);

    if (take_kick (r) || (any_record ? claimable (s, r) : seq != key))
      st = TBQ_OK;
    else if (interrupted (r))
      st = TBQ_INTERRUPTED;
    else if (deadline >= 0 && tbq_now_ns () >= deadline)
      st = TBQ_TIMEOUT;
    else if (!s->leading)
      st = lead (s, r, seq, deadline);
    else {
      follow (s, r, deadline);
      continue;
    }
    break;
  }
  pthread_mutex_unlock (&s->lock);
  return st;
}

/* ---- the public reader calls ----------------------------------------- */

TbqStatus
tbq_reader_next (TbqReader * r, TbqRecord * rec)
{
  if (TBQ_UNLIKELY (r == NULL || rec == NULL))
    return TBQ_INVALID_ARGUMENT;
  if (TBQ_UNLIKELY (r->readers != NULL))
    return claimer_next (r, rec);
  return tbq_cursor_next (r, rec);
}

TbqStatus
tbq_reader_peek (TbqReader * r, TbqRecord * rec)
{
  if (TBQ_UNLIKELY (r == NULL || rec == NULL))
    return TBQ_INVALID_ARGUMENT;
  if (TBQ_UNLIKELY (r->readers != NULL))
    return claimer_peek (r, rec);
  return tbq_cursor_peek (r, rec);
}

TbqStatus
tbq_reader_wait (TbqReader * r, int64_t timeout_ns)
{
  if (r == NULL)
    return TBQ_INVALID_ARGUMENT;
  if (r->readers == NULL)
    return tbq_cursor_wait (r, timeout_ns);
  if (r->claim.batch.off != r->claim.batch.end)
    return TBQ_OK;
  return claimer_wait (r, true, 0, tbq_deadline (timeout_ns));
}

TbqStatus
tbq_reader_sleep (TbqReader * r, uint32_t key, int64_t timeout_ns)
{
  if (r == NULL)
    return TBQ_INVALID_ARGUMENT;
  if (r->readers == NULL)
    return tbq_cursor_sleep (r, key, timeout_ns);
  return claimer_wait (r, false, key, tbq_deadline (timeout_ns));
}

void
tbq_reader_wake (TbqReader * r)
{
  if (r == NULL)
    return;
  if (r->readers == NULL) {
    tbq_wake_kick (r->wake);
    return;
  }
  /* Relaxed: both wakes below are unconditional (readers.h). */
  atomic_store_explicit (&r->claim.kicked, 1, memory_order_relaxed);
  /* It may lead (or its consumer be paused) on the cursor's event, or
   * follow. */
  tbq_event_wake (&r->wake->reader_ev);
  tbq_readers_wake (r->readers);
}

void
tbq_reader_note_idle (TbqReader * r)
{
  if (r == NULL)
    return;
  if (r->readers == NULL) {
    tbq_cursor_note_idle (r);
    return;
  }
  pthread_mutex_lock (&r->readers->lock);
  tbq_cursor_note_idle (r->readers->cursor);
  pthread_mutex_unlock (&r->readers->lock);
}

TbqStatus
tbq_reader_set_coalesce (TbqReader * r, int64_t bound_ns)
{
  if (r == NULL)
    return TBQ_INVALID_ARGUMENT;
  /* Several readers wait on the cursor in turn: the bound is its own. */
  return tbq_cursor_set_coalesce (r->readers != NULL ? r->readers->cursor
      : r, bound_ns);
}

TbqStatus
tbq_reader_set_batch (TbqReader * r, uint32_t records)
{
  if (r == NULL || records == 0 || records > TBQ_READER_BATCH_MAX)
    return TBQ_INVALID_ARGUMENT;
  /* Relaxed: one value, which publishes nothing else; it applies from
   * the claim that sees it. */
  atomic_store_explicit (&r->claim.max, records, memory_order_relaxed);
  return TBQ_OK;
}

void
tbq_reader_get_stats (TbqReader * r, TbqReaderStats * st)
{
  if (r == NULL || st == NULL)
    return;
  /* Relaxed: counters (machine.h). */
  st->records_out = atomic_load_explicit (&r->records_out,
      memory_order_relaxed);
  st->bytes_out = atomic_load_explicit (&r->bytes_out, memory_order_relaxed);
  st->batches = atomic_load_explicit (&r->claim.batches,
      memory_order_relaxed);
  st->claim_waits = atomic_load_explicit (&r->claim.waits,
      memory_order_relaxed);
}

/* ---- discard, statistics --------------------------------------------- */

/* `b` if it holds records of an older claim than `oldest` (or NULL). */
static TbqBatch *
older (TbqBatch * b, TbqBatch * oldest)
{
  if (b->off == b->end || (oldest != NULL && oldest->seq < b->seq))
    return oldest;
  return b;
}

/* The unread batch of the oldest claim, held or given back, or NULL. */
static TbqBatch *
oldest_batch (TbqReaders * s)
{
  TbqBatch *oldest = NULL;
  uint32_t i;

  for (i = 0; i < s->max; i++)
    if (s->open[i] != NULL)
      oldest = older (&s->open[i]->claim.batch, oldest);
  for (i = 0; i < s->n_returned; i++)
    oldest = older (&s->returned[i], oldest);
  return oldest;
}

void
tbq_readers_discard (TbqReaders * s, TbqReleaseFunc release, void *user_data,
    uint64_t * count)
{
  TbqBatch *b;

  /* Every party is quiet; the lock orders this against their past.  A
   * batch read out is left alone: it keeps its block until its reader's
   * next claim (the record taken last may be there). */
  pthread_mutex_lock (&s->lock);
  while ((b = oldest_batch (s)) != NULL) {
    /* Large records: the records' extent references go with them. */
    *count += tbq_records_release (b->blk->data, b->off, b->end, release,
        user_data);
    batch_drop (b);
  }
  s->n_returned = 0;
  pthread_mutex_unlock (&s->lock);
}

void
tbq_readers_stats (TbqReaders * s, TbqStats * st)
{
  TbqReaderTotals t;
  uint32_t i;

  pthread_mutex_lock (&s->lock);
  t = s->retired;
  for (i = 0; i < s->max; i++)
    if (s->open[i] != NULL)
      totals_add (&t, s->open[i]);
  st->readers = s->n_open;
  pthread_mutex_unlock (&s->lock);
  st->records_out = t.records_out;
  st->bytes_out = t.bytes_out;
  st->reader_batches = t.batches;
  st->reader_claim_waits = t.claim_waits;
  /* Acquire: see readers.h, "MEMORY ORDERS". */
  st->reader_sleeps += atomic_load_explicit (&s->sleeps, memory_order_acquire);
}
