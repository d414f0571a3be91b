/* libtbq internals: several readers on one queue (SPMC, MPMC): the shared
 * cursor, batches, and the waits of readers that share the cursor.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * With TbqConfig.max_readers above 1 the queue's own TbqReader (reader.h)
 * stays hidden as the queue's FIFO *cursor*, and every TbqReader handed
 * out is a reader of several.  Such a reader *claims a batch* from the
 * cursor under the claim lock: up to `claim.max` records, never past the
 * end of the cursor's current sink block or spill unit
 * (tbq_cursor_claim()), with a reference to that block or unit, and with
 * the records the references their large records hold to their extents.
 * It then takes the batch's records with no lock at all, and claims the
 * next batch when it has taken the last.  Whichever reader asks first
 * gets the next batch: work claiming, not rotation.  The public reader
 * calls are here, for both kinds: a lone reader's go straight to the
 * cursor (the inline take of reader.h, the waits of pull.c), which costs
 * them one test of `readers`.
 *
 * INVARIANTS
 *  - The cursor's read position (blk, off, unit, unit_off, in_unit,
 *    io_failed) is read and moved under `lock` only (claims, the waits'
 *    looks, note_idle), or by discard and free with every party quiet.
 *  - Batches are disjoint ranges of records, and with what lies after the
 *    cursor they make up the sink layer: every record is in exactly one
 *    batch (held by a reader, or given back) or still after the cursor.
 *    So it is delivered exactly once, or released exactly once by a
 *    discard, which takes the batches first, oldest claim first.
 *  - Order: FIFO within a batch; one reader's claims follow the cursor, so
 *    the records one reader takes are in the queue's order (per writer,
 *    increasing), unless it took a batch given back by tbq_reader_free().
 *    Across readers there is no order.
 *  - Batches given back (`returned`) are claimed before the cursor, oldest
 *    first.  The batches given back and those held never number more than
 *    `max`: the cursor is claimed from only when none is given back.
 *  - Waiting: at most one reader *leads* (waits on the cursor, through
 *    pull.c: it may pull through the copier, and nap); the others *follow*
 *    (sleep on `cond`).  A follower sleeps only while a reader leads, and
 *    the end of a lead (under `lock`) wakes every follower: they look
 *    again, and one of them may lead next.  The cursor's pull and
 *    coalescing state (pull.c) is the leader's while it leads; the role
 *    passes under `lock`.
 *
 * WHAT WAKES EACH WAIT (no wait here whose condition can change without
 * a wake):
 *  - The leader sleeps on the cursor's event (TbqWake.reader_ev) until the
 *    sink sequence moves past the key it took under `lock` before it
 *    found nothing to claim, or its own kick, or the queue's kick (as a
 *    lone reader's tbq_reader_sleep()).  What makes records claimable
 *    moves that sequence and notifies the event: the copier publishing,
 *    the spill thread (units read back, a run's end, a read error), a
 *    batch given back (tbq_readers_close()).  With on-demand wake writers
 *    ask it to pull (pull.c).  tbq_reader_wake() of the leader and
 *    tbq_queue_interrupt() wake the event; the deadline ends the sleep.
 *  - A follower sleeps on `cond`, under `lock`, until a lead ends or a
 *    batch is given back (`looks` moves), its own kick, an interrupt, or
 *    its deadline.  The
 *    end of a lead, tbq_reader_wake() of the follower, tbq_queue_interrupt()
 *    and tbq_queue_resume() (tbq_readers_wake()), and a batch given back
 *    each broadcast under `lock`, after changing what they change.
 *  - A paused callback consumer (consumer.c) sleeps on the cursor's event:
 *    tbq_queue_resume() wakes it, and its stop (tbq_reader_wake()).
 *
 * MEMORY ORDERS (with block.h, "ownership and ordering")
 *  - A batch's bytes: its claimer loaded `published` with acquire
 *    (tbq_cursor_claim()) and is the one that takes the records; a batch
 *    given back passes to its next claimer under `lock`.
 *  - A batch's reference to its block or unit is taken relaxed while the
 *    cursor holds one, and dropped (acq_rel) as any reference.
 *  - `claim.kicked`: relaxed; a kick is stored before unconditional wakes
 *    (the event's, and a broadcast under `lock`: block.h, "Events").
 *  - `claim.max`: relaxed, one value that publishes nothing.
 *  - The counters: each has one writer (the reader's thread; the
 *    cursor's under `lock`), relaxed (machine.h).  `sleeps` is counted
 *    under `lock` before a follower sleeps, with release: a thread that
 *    sees it (acquire) and then wakes under `lock` reaches the follower.
 */
#ifndef TBQ_READERS_H
#define TBQ_READERS_H

#include "reader.h"

#include <pthread.h>

/* What readers freed leave behind (their counters, kept). */
typedef struct
{
  uint64_t records_out;
  uint64_t bytes_out;
  uint64_t batches;
  uint64_t claim_waits;
} TbqReaderTotals;

struct TbqReaders
{
  pthread_mutex_t lock;         /* the claim lock: the cursor and the below */
  pthread_cond_t cond;          /* followers wait here (CLOCK_MONOTONIC) */
  TbqReader *cursor;            /* the queue's own reader, hidden */
  uint32_t max;                 /* TbqConfig.max_readers */
  uint32_t batch;               /* TbqConfig.reader_batch: a new reader's */
  TbqReader **open;             /* `max` slots: the readers handed out */
  uint32_t n_open;
  bool leading;                 /* a reader waits on the cursor */
  uint64_t looks;               /* times followers were asked to look
                                 * again: a lead ended, a batch given back */
  uint64_t claims;              /* batches claimed from the cursor */
  TbqBatch *returned;           /* `max` slots: given back, not claimed yet */
  uint32_t n_returned;
  TbqReaderTotals retired;      /* of the readers freed */
  _Atomic uint64_t sleeps;      /* followers' sleeps (statistics) */
};

/* Readers of several on `cursor` (the queue's own reader): up to `max`
 * open at once, each claiming `batch` records at most.  NULL when out of
 * memory. */
TbqReaders *tbq_readers_new (TbqReader * cursor, uint32_t max,
    uint32_t batch);
/* Free every reader still open (their consumers stopped, and their
 * batches discarded: tbq_readers_discard()), and `s`. */
void tbq_readers_free (TbqReaders * s);

/* tbq_reader_new(): TBQ_BUSY when `max` readers are open, TBQ_NO_MEMORY. */
TbqStatus tbq_readers_open (TbqReaders * s, TbqReader ** out);
/* tbq_reader_free() (its consumer stopped): the reader's unread batch is
 * given back, for the next claim, and its counters kept. */
void tbq_readers_close (TbqReader * r);

/* The open reader in slot `i` (< max), or NULL.  For tbq_queue_free(),
 * while no reader is opened or freed. */
TbqReader *tbq_readers_at (TbqReaders * s, uint32_t i);

/* Release every record of every batch held or given back, oldest claim
 * first, calling `release` for each and counting it in *count; every
 * party is quiet (tbq_queue_discard()).  The cursor's records come
 * after, the caller's. */
void tbq_readers_discard (TbqReaders * s, TbqReleaseFunc release,
    void *user_data, uint64_t * count);

/* Every follower wakes, to see the interrupt flag (tbq_queue_interrupt(),
 * tbq_queue_resume()) or its kick. */
void tbq_readers_wake (TbqReaders * s);

/* The readers' counters, open and freed, into `st` (records_out,
 * bytes_out, reader_batches, reader_claim_waits, readers; the followers'
 * sleeps are added to reader_sleeps). */
void tbq_readers_stats (TbqReaders * s, TbqStats * st);

#endif /* TBQ_READERS_H */
