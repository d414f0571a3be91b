/* Event counts: spin, then futex (Linux) or condvar (elsewhere).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-private.h"

#include <errno.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#ifdef TBQ_USE_FUTEX
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif

int64_t
tbq_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
tbq_deadline (int64_t timeout_ns)
{
  if (timeout_ns < 0)
    return -1;
  if (timeout_ns > INT64_MAX / 2)
    return -1;
  return tbq_now_ns () + timeout_ns;
}

void
tbq_event_init (TbqEvent * ev)
{
  atomic_init (&ev->seq, 0);
  atomic_init (&ev->waiters, 0);
#ifndef TBQ_USE_FUTEX
  pthread_condattr_t attr;

  pthread_mutex_init (&ev->mutex, NULL);
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&ev->cond, &attr);
  pthread_condattr_destroy (&attr);
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

#ifdef TBQ_USE_FUTEX
static int membarrier_state;    /* 0 unknown, 1 available, -1 not */

bool
tbq_membarrier_available (void)
{
  int s = __atomic_load_n (&membarrier_state, __ATOMIC_ACQUIRE);

  if (s == 0) {
    long mask = syscall (__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

    s = -1;
    if (mask > 0 && (mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED)
        && syscall (__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
            0, 0) == 0)
      s = 1;
    __atomic_store_n (&membarrier_state, s, __ATOMIC_RELEASE);
  }
  return s > 0;
}

void
tbq_asym_barrier (void)
{
  /* Every running thread of this process executes a full barrier before this
   * returns: pairs with the writer's compiler-only barrier. */
  syscall (__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}
#else
bool
tbq_membarrier_available (void)
{
  return false;
}

void
tbq_asym_barrier (void)
{
  atomic_thread_fence (memory_order_seq_cst);
}
#endif

uint32_t
tbq_event_prepare (TbqEvent * ev, bool asym)
{
  uint32_t key = atomic_load_explicit (&ev->seq, memory_order_acquire);

  atomic_fetch_add_explicit (&ev->waiters, 1, memory_order_seq_cst);
  /* Order the `waiters` increment before the caller's condition re-check. */
  if (asym)
    tbq_asym_barrier ();
  else
    atomic_thread_fence (memory_order_seq_cst);
  return key;
}

void
tbq_event_cancel (TbqEvent * ev)
{
  atomic_fetch_sub_explicit (&ev->waiters, 1, memory_order_relaxed);
}

void
tbq_event_sleep (TbqEvent * ev, uint32_t key, int64_t deadline_ns)
{
#ifdef TBQ_USE_FUTEX
  struct timespec rel, *relp = NULL;

  if (deadline_ns >= 0) {
    int64_t left = deadline_ns - tbq_now_ns ();

    if (left <= 0)
      goto done;
    rel.tv_sec = left / 1000000000;
    rel.tv_nsec = left % 1000000000;
    relp = &rel;
  }
  /* Returns at once if seq moved since the key was read. */
  syscall (SYS_futex, (uint32_t *) & ev->seq, FUTEX_WAIT_PRIVATE, key, relp,
      NULL, 0);
done:
#else
  pthread_mutex_lock (&ev->mutex);
  while (atomic_load_explicit (&ev->seq, memory_order_relaxed) == key) {
    if (deadline_ns < 0) {
      pthread_cond_wait (&ev->cond, &ev->mutex);
    } else {
      struct timespec abs;

      abs.tv_sec = deadline_ns / 1000000000;
      abs.tv_nsec = deadline_ns % 1000000000;
      if (pthread_cond_timedwait (&ev->cond, &ev->mutex, &abs) == ETIMEDOUT)
        break;
    }
  }
  pthread_mutex_unlock (&ev->mutex);
#endif
  atomic_fetch_sub_explicit (&ev->waiters, 1, memory_order_relaxed);
}

void
tbq_event_wake (TbqEvent * ev)
{
#ifdef TBQ_USE_FUTEX
  atomic_fetch_add_explicit (&ev->seq, 1, memory_order_release);
  syscall (SYS_futex, (uint32_t *) & ev->seq, FUTEX_WAKE_PRIVATE, INT_MAX,
      NULL, NULL, 0);
#else
  pthread_mutex_lock (&ev->mutex);
  atomic_fetch_add_explicit (&ev->seq, 1, memory_order_release);
  pthread_cond_broadcast (&ev->cond);
  pthread_mutex_unlock (&ev->mutex);
#endif
}

TbqStatus
tbq_wait (TbqQueue * q, TbqEvent * ev, bool asym, uint32_t spins,
    TbqReadyFunc ready, void *arg, int64_t deadline_ns)
{
  uint32_t i;

  for (i = 0; i < spins; i++) {
    if (ready (arg))
      return TBQ_OK;
    if (atomic_load_explicit (&q->interrupted, memory_order_relaxed))
      return TBQ_INTERRUPTED;
    tbq_cpu_relax ();
  }

  for (;;) {
    uint32_t key = tbq_event_prepare (ev, asym);

    if (ready (arg)) {
      tbq_event_cancel (ev);
      return TBQ_OK;
    }
    if (atomic_load_explicit (&q->interrupted, memory_order_acquire)) {
      tbq_event_cancel (ev);
      return TBQ_INTERRUPTED;
    }
    if (deadline_ns >= 0 && tbq_now_ns () >= deadline_ns) {
      tbq_event_cancel (ev);
      return TBQ_TIMEOUT;
    }
    tbq_event_sleep (ev, key, deadline_ns);
  }
}
