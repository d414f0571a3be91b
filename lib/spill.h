/* libtbq internals: the spill, the sink layer's continuation in a file.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * When the sink budget (pool.h) reaches its spill mark (three quarters of
 * the budget), the copier starts a *run*: it links a *marker* into the
 * sink chain and goes on filling sink blocks as before, but those blocks
 * (the *spill chain*) belong to the spill thread, not to the reader.  The
 * spill thread reads the spill chain as a reader would (block.h, "Chains"),
 * writes its records to the file in *units* and drops the blocks, so they
 * and the extents of their large records go back to the budget.  It also
 * reads units back, ahead of the reader, into extents; the reader, on
 * reaching the marker, takes those units in order and reads their records
 * as it reads a block's.  When the reader waits at the marker and has
 * taken every unit written, the spill thread ends the run where it stands
 * in the spill chain: the marker's link points there and the reader goes
 * on in memory.  So the reader sees one FIFO stream: the sink blocks
 * before the marker, the run's units, then the blocks the spill thread
 * had not written yet.  The pushing thread never touches the file.
 *
 * A unit is a header (magic, version, sequence number, lengths, an XXH3
 * 64-bit checksum), the records' bytes as they were in the sink block,
 * then the payload of each large record, 8-byte aligned; a large record
 * comes back as one extent (one contiguous range).  What a record owns
 * (pointers: TbqSpillConfig.owned says how many of its leading payload
 * bytes) is also kept in memory, in order: the copy read back is replaced
 * by it, and a discard releases it without reading the file.
 *
 * The budget.  Everything the spill holds in memory is the sink budget's
 * (pool.h) and never takes it past its end: the spill chain and its
 * extents until written, and the units read back (their records and
 * large payloads), read ahead or taken by the reader.  The copier's
 * blocks and the writers' extents leave the last eighth of the budget
 * free, the *read-back room* (tbq_pool_readback_room()), and a unit is cut
 * so that, read back, it fits that room (spill_pick(); a record that
 * alone would not stays in memory: the spill thread writes nothing past
 * it, and the run ends before it).  So when the reader waits at the
 * marker, whatever the copier and the writers hold (the spill chain the
 * file has no room for, or whose writes fail, frames not moved yet,
 * what zero-copy holders keep of theirs) leaves room for its unit as
 * soon as nothing holds memory read back before: the unit the reader
 * waits for may take the budget's last byte, reading ahead of a reader
 * busy in memory only room below the spill mark.  A read that finds no
 * room waits for it on the extents' event (tbq_extents_event()), which
 * every uncharge of the budget, every lift of its limit and a member
 * leaving a copy group wake, and so does whoever rings the spill thread
 * (spill_ring()).  A zero-copy holder that keeps memory read back while
 * it waits for more would hold up the file: the element takes a large
 * record's extent out of the budget as it hands it on
 * (tbq_block_leave_budget()) and copies a small record.
 *
 * Errors.  A write that fails (ENOSPC, EIO, EFBIG, EROFS, ...) leaves its
 * records in the spill chain, in memory, reports once through
 * TbqSpillConfig.on_error, and is retried after a pause (or when space is
 * freed); meanwhile the budget fills and the queue sees backpressure.  A
 * unit that cannot be read back whole, or whose checksum does not match,
 * stops the stream there: tbq_reader_next() says TBQ_IO_ERROR and
 * tbq_queue_take_error() names the file and the offset.
 *
 * Locking: the spill's state is under `lock`; I/O runs outside it with
 * `io_busy` set, and only the spill thread does I/O.  The spill chain's
 * bytes are read with the chain protocol; the marker's link is stored
 * with release after its run's end is recorded (under the lock).  The
 * copier reads `run_active` (acquire) without the lock to decide whether
 * to start a run; only the copier sets it, only the spill thread (or a
 * discard) clears it.
 */
#ifndef TBQ_SPILL_H
#define TBQ_SPILL_H

#include "extent.h"
#include "wake.h"

#include <pthread.h>

typedef struct TbqSpill TbqSpill;
typedef struct TbqPinned TbqPinned;

/* A new spill on `cfg` for the sink pool's budget; opens the file and
 * starts the spill thread.  NULL with the reason in `msg` on failure. */
TbqSpill *tbq_spill_new (const TbqSpillConfig * cfg, TbqPool * sink,
    TbqExtents * extents, TbqWake * wake, TbqStatus * st, char *msg,
    size_t msg_size);
/* Start the spill thread. */
TbqStatus tbq_spill_start (TbqSpill * s);
/* Stop the thread and close the file (the caller discarded everything). */
void tbq_spill_free (TbqSpill * s);
const char *tbq_spill_path (const TbqSpill * s);

/* The copier, about to take a sink block: whether to start a run now
 * (the budget is past the spill mark, no run is active and the file is
 * not known to be full or failing). */
bool tbq_spill_wants_run (TbqSpill * s);
/* The copier starts a run at `first` (a fresh sink block it took, with
 * the reference meant for the reader): returns the marker to link where
 * `first` would have been linked, or NULL (no memory: link `first`). */
TbqBlock *tbq_spill_begin_run (TbqSpill * s, TbqBlock * first);
/* The copier published records: tell the spill thread if a run is
 * active. */
void tbq_spill_notify (TbqSpill * s);

/* Whether the sink budget, full now, will have room without the reader:
 * a run is active, its writes work and the file has room, and the spill
 * chain holds records not written yet (writing them frees their memory).
 * A hint, any thread. */
bool tbq_spill_absorbs (TbqSpill * s);

/* The reader at marker `m`.  TBQ_OK: *unit is the next unit (an extent
 * whose `published` is its records' length; the reference passes);
 * TBQ_NO_SPACE: the run is over, go on at *resume, offset *resume_off;
 * TBQ_EMPTY: wait (the spill thread is told the reader waits here);
 * TBQ_IO_ERROR: the next unit could not be read back. */
TbqStatus tbq_spill_take (TbqSpill * s, TbqBlock * m, TbqBlock ** unit,
    TbqBlock ** resume, uint32_t * resume_off);
/* The reader's wait predicate at marker `m`: whether tbq_spill_take()
 * would return something other than TBQ_EMPTY. */
bool tbq_spill_ready (TbqSpill * s, TbqBlock * m);

/* Drop everything the spill holds (the copier and reader are stopped):
 * release what pinned records own, the records of units read ahead, end
 * an active run where the spill thread stands (its records stay in the
 * spill chain, for the reader's discard that follows), and empty the
 * file.  Returns how many records were dropped. */
uint64_t tbq_spill_discard (TbqSpill * s, TbqReleaseFunc release,
    void *user_data);

void tbq_spill_stats (TbqSpill * s, TbqSpillStats * st);
/* TBQ_IO_ERROR with a sentence naming the file and the offset when a
 * read failed since the last call, else TBQ_OK. */
TbqStatus tbq_spill_take_error (TbqSpill * s, char *msg, size_t msg_size);

#endif /* TBQ_SPILL_H */
