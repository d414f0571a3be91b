/* The wake module: the wake policies, pickups and the waiting reader's
 * handshake.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Sealed blocks and the current block.  The copier always moves sealed
 * blocks; it moves the published part of a writer's *current* block (the
 * one it is still writing) only when that is asked for: always with
 * immediate wake, by a pulling reader (it waits for exactly those
 * records), after a flush, sync or close (pickup_req), and for a closed
 * writer.  A copier that followed the writer through its current block
 * record by record would share every cache line the writer is filling,
 * and the block's `published` word, with the writer's CPU: each record
 * would cost the writer a cache-line transfer.  With on-demand wake
 * nothing is lost by waiting: the records cannot overtake the sink
 * backlog, and a reader that runs dry pulls them itself.
 *
 * The waiting reader (on-demand wake).  It stores how it wants to be woken
 * (reader_state), issues a seq_cst fence and then looks for published
 * records; a writer publishes, issues a seq_cst fence and then loads the
 * state (Dekker): either the reader finds the records, or the writer sees
 * the state and acts on it.  HUNGRY: every publish asks it to pull.
 * NAPPING: publishes do nothing (coalescing: the reader takes them at its
 * deadline); a flush still asks it to pull, and a hand-off that leaves
 * the writer short of blocks wakes the copier, whose records end the nap.
 */
#include "wake.h"

void
tbq_wake_init (TbqWake * wake, TbqWakePolicy policy, TbqEvent * copier_ev)
{
  memset (wake, 0, sizeof *wake);
  wake->policy = policy;
  wake->copier_ev = copier_ev;
  tbq_event_init (&wake->reader_ev);
}

void
tbq_wake_fini (TbqWake * wake)
{
  tbq_event_clear (&wake->reader_ev);
}

void
tbq_wake_everyone (TbqWake * wake)
{
  tbq_event_wake (wake->copier_ev);
  tbq_event_wake (&wake->reader_ev);
}

uint64_t
tbq_wake_handoff_threshold (size_t source_max_blocks)
{
  return source_max_blocks / 2 > 1 ? source_max_blocks / 2 : 1;
}

int
tbq_wake_handed_off (TbqWake * wake, TbqWakePolicy policy, uint64_t sealed,
    uint64_t threshold)
{
  if (policy == TBQ_WAKE_IMMEDIATE)
    return tbq_wake_copier (wake);
  /* Seq_cst fence: the seal before the state load (as a publish). */
  atomic_thread_fence (memory_order_seq_cst);
  /* Someone must return the sealed block: a hungry reader pulling (one
   * hop for the records around the hand-off too). */
  if (wake_reader_state (wake) == TBQ_READER_HUNGRY)
    return wake_ask_reader (wake);
  /* The copier returns blocks in batches: wake it once half the source
   * pool is sealed and waiting, early enough that the writer never runs
   * dry, and half as often as every hand-off.  Each wake-up costs the
   * writer a system call, and the woken thread often lands on the
   * writer's own CPU, preempting it.  Also while the reader naps: the
   * records the copier publishes end the nap.  Asking the napping reader
   * to pull instead (one thread fewer) measured worse at 100 kHz and
   * 1 MHz (latency p99 1.5-3.5x, CPU per buffer 1.2-1.6x): the copier
   * moves blocks on the other CPU while the reader pushes. */
  if (sealed < threshold)
    return 0;
  return tbq_wake_copier (wake);
}

int
tbq_wake_flushed (TbqWake * wake, TbqWakePolicy policy, bool reader_only)
{
  if (policy == TBQ_WAKE_ON_DEMAND) {
    /* The pull request stays pending when the reader is busy: it pulls
     * before its next nap (the Dekker handshake with the waiting reader,
     * top of this file: a reader seen BUSY stores its waiting state later,
     * then finds these records, or the bumped key).  Relaxed: as in
     * wake_ask_reader(). */
    atomic_fetch_add_explicit (&wake->pull_seq, 1, memory_order_relaxed);
    /* Seq_cst fence: the publish before the state load (as a publish). */
    atomic_thread_fence (memory_order_seq_cst);
    if (wake_reader_state (wake) != TBQ_READER_BUSY)
      return tbq_event_notify (&wake->reader_ev);
    /* An offer: the records wait in the writer's current block for the
     * reader's pull (or the block's hand-off). */
    if (reader_only)
      return 0;
  }
  /* Nobody waits for the records: the copier moves them, current block
   * included. */
  tbq_wake_request_pickup (wake);
  return tbq_wake_copier (wake);
}

void
tbq_pickup_init (TbqPickup * p)
{
  atomic_init (&p->seen, 0);
}

/* `seen` is atomic only because copier steps may move between threads (the
 * copier's ownership flag orders them): relaxed throughout. */
bool
tbq_wake_pickup_due (TbqWake * wake, TbqPickup * p, bool pulling)
{
  /* Acquire: pairs with tbq_wake_request_pickup(). */
  uint32_t req = atomic_load_explicit (&wake->pickup_req, memory_order_acquire);

  if (pulling || wake->policy == TBQ_WAKE_IMMEDIATE)
    return true;
  if (req != atomic_load_explicit (&p->seen, memory_order_relaxed)) {
    atomic_store_explicit (&p->seen, req, memory_order_relaxed);
    return true;
  }
  return false;
}

bool
tbq_wake_pickup_wanted (TbqWake * wake, TbqPickup * p)
{
  return wake->policy == TBQ_WAKE_IMMEDIATE
      || atomic_load_explicit (&wake->pickup_req, memory_order_relaxed)
      != atomic_load_explicit (&p->seen, memory_order_relaxed);
}

void
tbq_wake_kick (TbqWake * wake)
{
  /* Relaxed: the wake below is unconditional (block.h, "Events"); the flag
   * keeps a kick that comes before the wait. */
  atomic_store_explicit (&wake->reader_kick, 1, memory_order_relaxed);
  tbq_event_wake (&wake->reader_ev);
}

bool
tbq_wake_take_kick (TbqWake * wake)
{
  /* Relaxed: a kick carries no data.  Looked at before it is taken: every
   * check of a waiting reader comes here, and an exchange would write the
   * line each time. */
  if (atomic_load_explicit (&wake->reader_kick, memory_order_relaxed) == 0)
    return false;
  return atomic_exchange_explicit (&wake->reader_kick, 0,
      memory_order_relaxed) != 0;
}

uint32_t
tbq_wake_reader_waits (TbqWake * wake, TbqReaderState state)
{
  atomic_store_explicit (&wake->reader_state, (int) state,
      memory_order_relaxed);
  /* Seq_cst fence: the state store before the caller looks for published
   * work (Dekker with the writers' publish, fence, state load). */
  atomic_thread_fence (memory_order_seq_cst);
  return tbq_wake_pull_key (wake);
}

void
tbq_wake_reader_busy (TbqWake * wake)
{
  atomic_store_explicit (&wake->reader_state, TBQ_READER_BUSY,
      memory_order_relaxed);
}

/* Relaxed: a pull request carries no data (the pull finds the records
 * through the chains). */
uint32_t
tbq_wake_pull_key (TbqWake * wake)
{
  return atomic_load_explicit (&wake->pull_seq, memory_order_relaxed);
}

bool
tbq_wake_pull_asked (TbqWake * wake, uint32_t key)
{
  return tbq_wake_pull_key (wake) != key;
}
