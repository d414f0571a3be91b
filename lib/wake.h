/* libtbq internals: the wake module, the doorbell shared by writers, the
 * copier and the reader.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The events and flags by which a writer tells the copier (or, with
 * on-demand wake, a waiting reader) that records are there, by which the
 * copier tells the reader, the pickup requests for a writer's current
 * block, and the waiting reader's handshake: how it wants to be woken
 * (per record, or napping: coalesce.h decides).  The wake policy
 * (TbqWakePolicy) is decided here and nowhere else: a new policy changes
 * this module only.  Nothing here carries data; the data is reached
 * through the chain protocol (block.h).
 *
 * Every function a writer calls returns whether it made a system call (a
 * wake-up), so that the writer can count them.
 */
#ifndef TBQ_WAKE_H
#define TBQ_WAKE_H

#include "event.h"

/* What a waiting reader asked for (on-demand wake). */
typedef enum
{
  TBQ_READER_BUSY = 0,          /* not waiting: nobody wakes it */
  TBQ_READER_HUNGRY = 1,        /* waiting: every publish wakes it to pull */
  TBQ_READER_NAPPING = 2,       /* napping until a deadline: only urgent
                                 * deliveries (a flush, records the copier
                                 * published) wake it */
} TbqReaderState;

typedef struct
{
  /* Set up once. */
  TbqWakePolicy policy;
  TbqEvent *copier_ev;          /* -> copier: work (lives in the sink pool) */

  /* Writers, and readers that cannot pull -> copier: move the published
   * part of the writers' current blocks too. */
  _Alignas (TBQ_CACHELINE) _Atomic uint32_t pickup_req;

  /* Copier -> reader: bumped after every sink publish. */
  _Alignas (TBQ_CACHELINE) _Atomic uint32_t sink_seq;

  /* The reader's side: its event (records in the sink layer, a request to
   * pull, a kick) and the on-demand handshake. */
  _Alignas (TBQ_CACHELINE) TbqEvent reader_ev;
  _Atomic int reader_state;     /* TbqReaderState */
  _Atomic uint32_t pull_seq;    /* bumped by writers asking it to pull */
  _Atomic int reader_kick;      /* tbq_reader_wake() pending */
} TbqWake;

/* The copier's view of pickups, owned by whoever runs copier steps. */
typedef struct
{
  _Atomic uint32_t seen;        /* the last pickup_req acted on */
} TbqPickup;

void tbq_wake_init (TbqWake * wake, TbqWakePolicy policy,
    TbqEvent * copier_ev);
void tbq_wake_fini (TbqWake * wake);
/* Interrupt or stop: every sleeper on the doorbell's events returns. */
void tbq_wake_everyone (TbqWake * wake);

/* ---- writers ---- */

/* Sealed blocks waiting for the copier that make a hand-off wake it, for a
 * source pool of `source_max_blocks`. */
uint64_t tbq_wake_handoff_threshold (size_t source_max_blocks);

static inline bool
tbq_wake_copier (TbqWake * wake)
{
  return tbq_event_notify (wake->copier_ev);
}

static inline TbqReaderState
wake_reader_state (TbqWake * wake)
{
  /* Relaxed: ordered by the caller's seq_cst fence (Dekker with
   * tbq_wake_reader_waits()). */
  return (TbqReaderState) atomic_load_explicit (&wake->reader_state,
      memory_order_relaxed);
}

/* Ask a waiting reader to pull (it moves the records itself: one hop). */
static inline bool
wake_ask_reader (TbqWake * wake)
{
  /* Relaxed: the reader finds the records through the chains. */
  atomic_fetch_add_explicit (&wake->pull_seq, 1, memory_order_relaxed);
  return tbq_event_notify (&wake->reader_ev);
}

/* A writer published records (`policy` is its copy of the queue's).  With
 * on-demand wake only a hungry reader is woken: a napping one takes the
 * records at its deadline, a busy one when it next waits (they could not
 * overtake what it is working through anyway). */
static inline bool
tbq_wake_published (TbqWake * wake, TbqWakePolicy policy)
{
  if (policy == TBQ_WAKE_IMMEDIATE)
    return tbq_wake_copier (wake);
  /* Seq_cst fence: the caller's publish before the state load (Dekker
   * with tbq_wake_reader_waits()). */
  atomic_thread_fence (memory_order_seq_cst);
  if (wake_reader_state (wake) != TBQ_READER_HUNGRY)
    return false;
  return wake_ask_reader (wake);
}

/* A writer sealed a block; `sealed` of its blocks wait for the copier.
 * Returns the wake-ups it made. */
int tbq_wake_handed_off (TbqWake * wake, TbqWakePolicy policy,
    uint64_t sealed, uint64_t threshold);

/* tbq_writer_flush(): everything published must be delivered now, napping
 * or not.  `reader_only` (tbq_writer_offer()): with on-demand wake it is
 * for the reader only, the copier is left alone.  Returns the wake-ups it
 * made. */
int tbq_wake_flushed (TbqWake * wake, TbqWakePolicy policy, bool reader_only);

/* Ask the copier to move the writers' current blocks too (flush, sync,
 * close, a reader that could not pull). */
static inline void
tbq_wake_request_pickup (TbqWake * wake)
{
  /* Release: the copier that sees the request (acquire) sees what was
   * published before it. */
  atomic_fetch_add_explicit (&wake->pickup_req, 1, memory_order_release);
}

/* ---- the copier ---- */

void tbq_pickup_init (TbqPickup * p);
/* Whether this pass also moves the writers' current blocks; updates `p`. */
bool tbq_wake_pickup_due (TbqWake * wake, TbqPickup * p, bool pulling);
/* Whether a pickup is wanted, without acting on it (any thread). */
bool tbq_wake_pickup_wanted (TbqWake * wake, TbqPickup * p);

/* The copier published sink records: tell the reader. */
static inline void
tbq_wake_sink_published (TbqWake * wake)
{
  /* Release: a reader that sees the new sequence (acquire) also sees the
   * `published` offset that goes with it, so its re-check finds the
   * records and does not sleep on the new key. */
  atomic_fetch_add_explicit (&wake->sink_seq, 1, memory_order_release);
  tbq_event_notify (&wake->reader_ev);
}

/* ---- the reader ---- */

static inline uint32_t
tbq_wake_sink_seq (TbqWake * wake)
{
  /* Acquire: pairs with tbq_wake_sink_published(). */
  return atomic_load_explicit (&wake->sink_seq, memory_order_acquire);
}

/* tbq_reader_wake(): make a current or the next reader wait return. */
void tbq_wake_kick (TbqWake * wake);
/* Consume a pending kick. */
bool tbq_wake_take_kick (TbqWake * wake);

/* The waiting reader's handshake (on-demand wake, pull.c): say how it
 * wants to be woken (HUNGRY or NAPPING), before it looks for published
 * records; returns the pull key to compare with tbq_wake_pull_asked(). */
uint32_t tbq_wake_reader_waits (TbqWake * wake, TbqReaderState state);
/* No longer waiting. */
void tbq_wake_reader_busy (TbqWake * wake);
bool tbq_wake_pull_asked (TbqWake * wake, uint32_t key);
uint32_t tbq_wake_pull_key (TbqWake * wake);

#endif /* TBQ_WAKE_H */
