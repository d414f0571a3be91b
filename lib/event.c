/* The event count: the futex wait, the condvar wait, the clock.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * See event.h for the interface and block.h ("Events") for the protocol.
 */
#include "event.h"

#include <errno.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#ifdef TBQ_USE_FUTEX
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#define NS_PER_SEC 1000000000

int64_t
tbq_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

int64_t
tbq_clock_ns (void)
{
  return tbq_now_ns ();
}

int
tbq_cond_init_monotonic (pthread_cond_t * cond)
{
  pthread_condattr_t attr;
  int ret;

  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  ret = pthread_cond_init (cond, &attr);
  pthread_condattr_destroy (&attr);
  return ret;
}

bool
tbq_cond_wait_until (pthread_cond_t * cond, pthread_mutex_t * mutex,
    int64_t deadline_ns)
{
  struct timespec abs;

  if (deadline_ns < 0) {
    pthread_cond_wait (cond, mutex);
    return false;
  }
  abs.tv_sec = (time_t) (deadline_ns / NS_PER_SEC);
  abs.tv_nsec = (long) (deadline_ns % NS_PER_SEC);
  return pthread_cond_timedwait (cond, mutex, &abs) == ETIMEDOUT;
}

int64_t
tbq_deadline (int64_t timeout_ns)
{
  int64_t now;

  if (timeout_ns < 0)
    return -1;
  now = tbq_now_ns ();
  /* A deadline that does not fit is no limit: centuries away anyway. */
  if (timeout_ns > INT64_MAX - now)
    return -1;
  return now + timeout_ns;
}

void
tbq_event_init (TbqEvent * ev)
{
  atomic_init (&ev->seq, 0);
  atomic_init (&ev->waiters, 0);
  atomic_init (&ev->sleeps, 0);
  ev->also = NULL;
#ifndef TBQ_USE_FUTEX
  pthread_mutex_init (&ev->mutex, NULL);
  tbq_cond_init_monotonic (&ev->cond);
#endif
}

void
tbq_event_clear (TbqEvent * ev)
{
#ifndef TBQ_USE_FUTEX
  pthread_mutex_destroy (&ev->mutex);
  pthread_cond_destroy (&ev->cond);
#else
  (void) ev;
#endif
}

uint32_t
tbq_event_prepare (TbqEvent * ev)
{
  /* Acquire: the caller's condition re-check cannot move above this load,
   * so a wake after the re-check moves `seq` past the key; and the
   * waker's stores before its bump are visible once we read the bump. */
  uint32_t key = atomic_load_explicit (&ev->seq, memory_order_acquire);

  atomic_fetch_add_explicit (&ev->waiters, 1, memory_order_relaxed);
  /* Seq_cst fence: the `waiters` increment before the condition re-check
   * (Dekker with tbq_event_notify()). */
  atomic_thread_fence (memory_order_seq_cst);
  return key;
}

void
tbq_event_cancel (TbqEvent * ev)
{
  /* Relaxed: a stale non-zero count costs a notifier one needless wake. */
  atomic_fetch_sub_explicit (&ev->waiters, 1, memory_order_relaxed);
}

#ifdef TBQ_USE_FUTEX
static void
event_block (TbqEvent * ev, uint32_t key, int64_t deadline_ns)
{
  struct timespec rel, *relp = NULL;

  if (deadline_ns >= 0) {
    int64_t left = deadline_ns - tbq_now_ns ();

    if (left <= 0)
      return;
    rel.tv_sec = (time_t) (left / NS_PER_SEC);
    rel.tv_nsec = (long) (left % NS_PER_SEC);
    relp = &rel;
  }
  /* Returns at once if seq moved since the key was read. */
  syscall (SYS_futex, (uint32_t *) & ev->seq, FUTEX_WAIT_PRIVATE, key, relp,
      NULL, 0);
}
#else
static void
event_block (TbqEvent * ev, uint32_t key, int64_t deadline_ns)
{
  pthread_mutex_lock (&ev->mutex);
  /* Relaxed: the mutex orders it against tbq_event_wake(). */
  while (atomic_load_explicit (&ev->seq, memory_order_relaxed) == key)
    if (tbq_cond_wait_until (&ev->cond, &ev->mutex, deadline_ns))
      break;
  pthread_mutex_unlock (&ev->mutex);
}
#endif

void
tbq_event_sleep (TbqEvent * ev, uint32_t key, int64_t deadline_ns)
{
  /* Release: after the registration (tbq_event_sleeps()). */
  atomic_fetch_add_explicit (&ev->sleeps, 1, memory_order_release);
  event_block (ev, key, deadline_ns);
  tbq_event_cancel (ev);
}

void
tbq_event_wake (TbqEvent * ev)
{
  tbq_event_wake_one (ev);
  if (ev->also != NULL)
    tbq_event_wake_one (ev->also);
}

/* This event's waiters only. */
void
tbq_event_wake_one (TbqEvent * ev)
{
#ifdef TBQ_USE_FUTEX
  /* Release: a waiter whose key load reads this bump sees what the waker
   * stored before it. */
  atomic_fetch_add_explicit (&ev->seq, 1, memory_order_release);
  syscall (SYS_futex, (uint32_t *) & ev->seq, FUTEX_WAKE_PRIVATE, INT_MAX,
      NULL, NULL, 0);
#else
  pthread_mutex_lock (&ev->mutex);
  /* Release: as above (waiters read the key outside the mutex). */
  atomic_fetch_add_explicit (&ev->seq, 1, memory_order_release);
  pthread_cond_broadcast (&ev->cond);
  pthread_mutex_unlock (&ev->mutex);
#endif
}

static inline bool
raised (const _Atomic int *flag)
{
  /* Relaxed: the flag is raised before an unconditional wake (block.h). */
  return flag != NULL && atomic_load_explicit (flag, memory_order_relaxed);
}

TbqStatus
tbq_wait (TbqEvent * ev, const _Atomic int *interrupted, uint32_t spins,
    TbqReadyFunc ready, void *arg, int64_t deadline_ns)
{
  uint32_t i;

  for (i = 0; i < spins; i++) {
    if (ready (arg))
      return TBQ_OK;
    if (raised (interrupted))
      return TBQ_INTERRUPTED;
    tbq_cpu_relax ();
  }
  for (;;) {
    uint32_t key = tbq_event_prepare (ev);
    TbqStatus st = TBQ_OK;

    if (ready (arg))
      st = TBQ_OK;
    else if (raised (interrupted))
      st = TBQ_INTERRUPTED;
    else if (deadline_ns >= 0 && tbq_now_ns () >= deadline_ns)
      st = TBQ_TIMEOUT;
    else {
      tbq_event_sleep (ev, key, deadline_ns);
      continue;
    }
    tbq_event_cancel (ev);
    return st;
  }
}
