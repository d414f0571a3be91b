/* libtbq internals: the event count (how threads sleep and wake), the
 * monotonic clock and deadlines.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A thread waits for a condition with tbq_wait(): spin a few rounds, then
 * sleep on a futex (Linux) or a mutex + condvar (-Dwait=condvar) until the
 * condition holds, a deadline passes or an interrupt flag is raised.  The
 * wait takes the interrupt flag it honours, nothing else of the caller.
 * The waiter/notifier protocol is in block.h ("Events").  A leaf module.
 */
#ifndef TBQ_EVENT_H
#define TBQ_EVENT_H

#include "tbq.h"
#include "machine.h"

#include <pthread.h>
#include <stdbool.h>

typedef struct TbqEvent
{
  _Atomic uint32_t seq;         /* bumped by every wake-up */
  _Atomic uint32_t waiters;     /* threads between prepare and finish */
  _Atomic uint64_t sleeps;      /* tbq_event_sleep() calls: statistics, and
                                 * the tests' proof that a thread waits */
  /* NULL, or an event every wake of this one also wakes (a copy group's
   * doorbell, group.h).  Set before the event is shared, never changed. */
  struct TbqEvent *also;
#ifndef TBQ_USE_FUTEX
  pthread_mutex_t mutex;
  pthread_cond_t cond;
#endif
} TbqEvent;

void tbq_event_init (TbqEvent * ev);
void tbq_event_clear (TbqEvent * ev);
/* Register as a waiter; returns the key to sleep on. */
uint32_t tbq_event_prepare (TbqEvent * ev);
/* Sleep while seq == key, up to the absolute CLOCK_MONOTONIC `deadline_ns`
 * (< 0: no limit), then unregister.  Spurious returns are allowed.  Counts
 * in `sleeps` before it blocks: a thread seen counted there is registered,
 * so any later wake ends its sleep. */
void tbq_event_sleep (TbqEvent * ev, uint32_t key, int64_t deadline_ns);
/* Unregister without sleeping. */
void tbq_event_cancel (TbqEvent * ev);
/* Wake every waiter unconditionally (and those of `also`). */
void tbq_event_wake (TbqEvent * ev);
/* Forward every wake of `ev` to `to` from now on (before `ev` is shared). */
static inline void
tbq_event_forward (TbqEvent * ev, TbqEvent * to)
{
  ev->also = to;
}

/* Notifier side: the condition was made true by a preceding store.  Wake
 * only if somebody waits; true when it did (a system call). */
void tbq_event_wake_one (TbqEvent * ev);

static inline bool
tbq_event_notify (TbqEvent * ev)
{
  TbqEvent *also = ev->also;
  bool woke = false;

  /* Seq_cst fence: the condition store before the `waiters` loads (Dekker
   * with tbq_event_prepare(), for both events). */
  atomic_thread_fence (memory_order_seq_cst);
  if (atomic_load_explicit (&ev->waiters, memory_order_relaxed) != 0) {
    tbq_event_wake_one (ev);
    woke = true;
  }
  if (also != NULL
      && atomic_load_explicit (&also->waiters, memory_order_relaxed) != 0) {
    tbq_event_wake_one (also);
    woke = true;
  }
  return woke;
}

/* How many times a thread went to sleep on `ev` (any thread). */
static inline uint64_t
tbq_event_sleeps (TbqEvent * ev)
{
  /* Acquire: pairs with the release count in tbq_event_sleep(), so a
   * thread that sees a sleeper counted and then notifies finds it
   * registered (its `waiters` increment happened before). */
  return atomic_load_explicit (&ev->sleeps, memory_order_acquire);
}

/* Nanoseconds of CLOCK_MONOTONIC. */
int64_t tbq_now_ns (void);
/* Absolute deadline for a relative timeout: < 0, or too far away to
 * compute without overflow, is -1 (no limit). */
int64_t tbq_deadline (int64_t timeout_ns);

typedef bool (*TbqReadyFunc) (void *arg);

/* Spin `spins` rounds, then sleep on `ev` until `ready (arg)` (TBQ_OK),
 * the deadline (TBQ_TIMEOUT), or `*interrupted` (TBQ_INTERRUPTED; NULL:
 * never).  `ready` is checked before the interrupt flag. */
TbqStatus tbq_wait (TbqEvent * ev, const _Atomic int *interrupted,
    uint32_t spins, TbqReadyFunc ready, void *arg, int64_t deadline_ns);

#endif /* TBQ_EVENT_H */
