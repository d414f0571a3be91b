/* The wake module: the wake policies, pickups and the hungry-reader
 * handshake.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Sealed blocks and the current block.  The copier always moves sealed
 * blocks; it moves the published part of a writer's *current* block (the
 * one it is still writing) only when that is asked for: always with
 * immediate wake, by a pulling reader (it waits for exactly those
 * records), after a flush, sync or close (pickup_req), for a closed
 * writer, and with lazy wake once per pickup interval.  A copier that
 * followed the writer through its current block record by record would
 * share every cache line the writer is filling, and the block's
 * `published` word, with the writer's CPU: each record would cost the
 * writer a cache-line transfer.  With lazy and on-demand wake nothing is
 * lost by waiting: the records cannot overtake the sink backlog, and a
 * reader that runs dry pulls them itself.
 */
#include "wake.h"

void
tbq_wake_init (TbqWake * wake, TbqWakePolicy policy,
    int64_t pickup_interval_ns, TbqEvent * copier_ev)
{
  memset (wake, 0, sizeof *wake);
  wake->policy = policy;
  wake->pickup_interval_ns = pickup_interval_ns;
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

/* Relaxed below: the count only bounds how long the copier sleeps. */
void
tbq_wake_writer_opened (TbqWake * wake)
{
  if (wake->policy == TBQ_WAKE_LAZY)
    atomic_fetch_add_explicit (&wake->lazy_writers, 1, memory_order_relaxed);
}

void
tbq_wake_writer_closed (TbqWake * wake)
{
  if (wake->policy == TBQ_WAKE_LAZY)
    atomic_fetch_sub_explicit (&wake->lazy_writers, 1, memory_order_relaxed);
}

uint64_t
tbq_wake_handoff_threshold (size_t source_max_blocks)
{
  return source_max_blocks / 2 > 1 ? source_max_blocks / 2 : 1;
}

void
tbq_wake_handed_off (TbqWake * wake, TbqWakePolicy policy, uint64_t sealed,
    uint64_t threshold)
{
  /* Someone must return the sealed block: a hungry reader pulling (one
   * hop for the records around the hand-off too), else the copier. */
  if (policy == TBQ_WAKE_ON_DEMAND && tbq_wake_hungry_reader (wake))
    return;
  /* The copier returns blocks in batches: with lazy and on-demand wake,
   * wake it once half the source pool is sealed and waiting, early enough
   * that the writer never runs dry, and half as often as every hand-off.
   * Each wake-up costs the writer a system call, and the woken thread
   * often lands on the writer's own CPU, preempting it. */
  if (policy != TBQ_WAKE_IMMEDIATE && sealed < threshold)
    return;
  tbq_wake_copier (wake);
}

void
tbq_pickup_init (TbqPickup * p)
{
  atomic_init (&p->seen, 0);
  p->next_ns = 0;
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
  if (wake->policy == TBQ_WAKE_LAZY
      && atomic_load_explicit (&wake->lazy_writers, memory_order_relaxed) > 0) {
    int64_t now = tbq_now_ns ();

    /* No overflow: the interval is at most TBQ_PICKUP_INTERVAL_MAX_NS. */
    if (now >= p->next_ns) {
      p->next_ns = now + wake->pickup_interval_ns;
      return true;
    }
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

int64_t
tbq_wake_copier_deadline (TbqWake * wake, const TbqPickup * p,
    int64_t deadline_ns)
{
  if (atomic_load_explicit (&wake->lazy_writers, memory_order_relaxed) > 0
      && (deadline_ns < 0 || p->next_ns < deadline_ns))
    return p->next_ns;
  return deadline_ns;
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
  /* Relaxed: a kick carries no data. */
  return atomic_exchange_explicit (&wake->reader_kick, 0,
      memory_order_relaxed) != 0;
}

uint32_t
tbq_wake_reader_hungry (TbqWake * wake)
{
  atomic_store_explicit (&wake->reader_hungry, 1, memory_order_relaxed);
  /* Seq_cst fence: the hungry store before the caller looks for published
   * work (Dekker with tbq_wake_hungry_reader()). */
  atomic_thread_fence (memory_order_seq_cst);
  return tbq_wake_pull_key (wake);
}

void
tbq_wake_reader_fed (TbqWake * wake)
{
  atomic_store_explicit (&wake->reader_hungry, 0, memory_order_relaxed);
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
