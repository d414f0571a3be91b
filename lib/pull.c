/* The reader's waits: the on-demand pull (a waiting reader that moves
 * published records through the copier itself) and coalescing (a reader
 * that naps while records arrive densely).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * With TBQ_WAKE_ON_DEMAND a writer does not wake the copier on publish; it
 * wakes the reader, and only while the reader says it is hungry (the
 * handshake is the wake module's).  The reader then runs a copier pass
 * itself (tbq_copier_pull), if the copier is not in one: one thread hop
 * from writer to reader, as with a plain queue.  With a coalescing bound
 * the reader may instead nap (the policy is coalesce.h's): it says it is
 * napping, so publishes make no system call, sleeps until the nap's
 * deadline, then pulls everything published meanwhile.  A flush, an
 * interrupt, a kick or the copier publishing records end a nap early.
 * This room sits above both the copier and the reader, so neither calls
 * the other.  With several readers one of them at a time waits here, on
 * the cursor's behalf (readers.c); this room knows nothing of it: the
 * pull and coalescing state below is the waiting reader's while it waits.
 */
#include "reader.h"

typedef struct
{
  TbqReader *r;
  TbqReadyFunc ready;
  void *arg;
  bool pull;                    /* set: woken to pull, not by `ready` */
  uint32_t pull_key;
} WaitArg;

static bool
wait_ready (void *arg)
{
  WaitArg *a = arg;

  if (a->ready (a->arg))
    return true;
  if (tbq_wake_pull_asked (a->r->wake, a->pull_key)) {
    a->pull = true;
    return true;
  }
  return false;
}

/* Move what writers published, through the copier; true if records moved.
 * When the copier is in a pass (which may be moving sealed blocks only),
 * or when the sink pool has no free block (growing it is the copier's
 * job), hand the work to the copier, current blocks included (the records
 * we wait for may be there): it publishes and wakes us.  A pull that ran
 * took everything published before it began: the policy's "fed" time. */
static bool
reader_pull (TbqReader * r)
{
  int64_t began = r->coalesce.bound_ns != 0 ? tbq_now_ns () : 0;
  bool moved;
  TbqStatus st;

  /* Every pull request made up to here is answered by this pull. */
  r->pull_seen = tbq_wake_pull_key (r->wake);
  st = tbq_copier_pull (r->copier, &moved);
  if (st == TBQ_OK && r->coalesce.bound_ns != 0)
    tbq_coalesce_fed (&r->coalesce, began);
  if (st == TBQ_BUSY || st == TBQ_NO_SPACE) {
    tbq_wake_request_pickup (r->wake);
    tbq_wake_copier (r->wake);
  }
  return moved;
}

/* How to wait: always per record without a bound (no clock read).  A
 * bound changed since the last plan (tbq_reader_set_coalesce) applies
 * from here, with a fresh arrival estimate. */
static void
reader_plan (TbqReader * r, TbqCoalescePlan * plan)
{
  /* Relaxed: see tbq_cursor_set_coalesce. */
  int64_t bound = atomic_load_explicit (&r->coalesce_bound,
      memory_order_relaxed);

  if (bound != r->coalesce.bound_ns)
    tbq_coalesce_init (&r->coalesce, bound);
  if (r->coalesce.bound_ns == 0) {
    plan->mode = TBQ_COALESCE_WAKE;
    plan->deadline_ns = -1;
    plan->take_first = true;
    return;
  }
  tbq_coalesce_plan (&r->coalesce, tbq_now_ns (),
      atomic_load_explicit (&r->records_out, memory_order_relaxed), plan);
}

/* One wait as the plan says: TBQ_OK when records moved or `ready` holds,
 * TBQ_TIMEOUT at `until`, TBQ_INTERRUPTED.  Pull requests are answered
 * on the way. */
static TbqStatus
reader_wait_planned (TbqReader * r, WaitArg * a, const TbqCoalescePlan * plan,
    int64_t until)
{
  bool nap = plan->mode == TBQ_COALESCE_NAP;
  TbqStatus st;

  a->pull_key = tbq_wake_reader_waits (r->wake, nap ? TBQ_READER_NAPPING
      : TBQ_READER_HUNGRY);
  /* Published before we said how to be woken: nobody will wake us for it.
   * A napping reader takes it at its deadline, unless a flush asked for it
   * since the last pull. */
  if ((plan->take_first || tbq_wake_pull_asked (r->wake, r->pull_seen))
      && tbq_copier_has_work_now (r->copier) && reader_pull (r))
    return TBQ_OK;
  if (nap) {
    /* Release: a thread that sees the nap counted (acquire, statistics)
     * and then publishes sees the reader napping. */
    atomic_store_explicit (&r->naps, atomic_load_explicit (&r->naps,
            memory_order_relaxed) + 1, memory_order_release);
  }
  for (;;) {
    a->pull = false;
    /* A napping reader does not spin: it means to sleep. */
    st = tbq_wait (&r->wake->reader_ev, r->interrupted, nap ? 0 : r->spins,
        wait_ready, a, until);
    if (st != TBQ_OK || !a->pull)
      break;
    a->pull_key = tbq_wake_pull_key (r->wake);
    if (reader_pull (r))
      break;
  }
  if (nap && st != TBQ_TIMEOUT)
    tbq_count (&r->naps_woken, 1);
  return st;
}

/* With on-demand wake: plan, wait, and at a nap's deadline pull what was
 * published; an empty nap goes back to being woken per record. */
static TbqStatus
reader_wait_on_demand (TbqReader * r, TbqReadyFunc ready, void *arg,
    int64_t deadline)
{
  WaitArg a = { r, ready, arg, false, 0 };
  TbqCoalescePlan plan;
  TbqStatus st;

  reader_plan (r, &plan);
  for (;;) {
    int64_t until = deadline;

    if (plan.mode == TBQ_COALESCE_NAP
        && (deadline < 0 || plan.deadline_ns < deadline))
      until = plan.deadline_ns;
    st = reader_wait_planned (r, &a, &plan, until);
    if (st != TBQ_TIMEOUT || plan.mode != TBQ_COALESCE_NAP)
      break;
    /* The nap (or the caller's wait) is over: take what was published. */
    if (reader_pull (r) || ready (arg)) {
      st = TBQ_OK;
      break;
    }
    if (until != plan.deadline_ns)
      break;                    /* the caller's deadline */
    tbq_coalesce_nap_empty (&r->coalesce);
    plan.mode = TBQ_COALESCE_WAKE;
    plan.deadline_ns = -1;
    plan.take_first = true;
  }
  tbq_wake_reader_busy (r->wake);
  return st;
}

TbqStatus
tbq_cursor_wait_until (TbqReader * r, TbqReadyFunc ready, void *arg,
    int64_t deadline)
{
  if (r->wake->policy != TBQ_WAKE_ON_DEMAND)
    return tbq_wait (&r->wake->reader_ev, r->interrupted, r->spins, ready,
        arg, deadline);
  return reader_wait_on_demand (r, ready, arg, deadline);
}

TbqStatus
tbq_cursor_set_coalesce (TbqReader * r, int64_t bound_ns)
{
  if ((bound_ns != 0 && (bound_ns < TBQ_COALESCE_MIN_NS
              || bound_ns > TBQ_COALESCE_MAX_NS
              || r->wake->policy != TBQ_WAKE_ON_DEMAND)))
    return TBQ_INVALID_ARGUMENT;
  /* Relaxed: one value, which publishes nothing else.  The caller orders
   * it before the waits it means (a kick, or a lock its reader's thread
   * takes before waiting); a wait that does not see it yet plans with the
   * old bound, which is bounded too. */
  atomic_store_explicit (&r->coalesce_bound, bound_ns, memory_order_relaxed);
  return TBQ_OK;
}

void
tbq_reader_restart_waits (TbqReader * r)
{
  tbq_coalesce_init (&r->coalesce, r->coalesce.bound_ns);
  r->pull_seen = tbq_wake_pull_key (r->wake);
}

static bool
record_ready (void *arg)
{
  return tbq_reader_ready (arg);
}

TbqStatus
tbq_cursor_wait (TbqReader * r, int64_t timeout_ns)
{
  if (tbq_reader_ready (r))
    return TBQ_OK;
  return tbq_cursor_wait_until (r, record_ready, r, tbq_deadline (timeout_ns));
}

typedef struct
{
  TbqReader *r;
  uint32_t key;
} SleepArg;

static bool
seq_moved (void *arg)
{
  SleepArg *a = arg;

  return tbq_reader_seq_moved (a->r, a->key);
}

TbqStatus
tbq_cursor_sleep (TbqReader * r, uint32_t key, int64_t timeout_ns)
{
  SleepArg a;

  a.r = r;
  a.key = key;
  return tbq_cursor_wait_until (r, seq_moved, &a, tbq_deadline (timeout_ns));
}
