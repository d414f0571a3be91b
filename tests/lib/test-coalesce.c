/* The coalescing policy (lib/coalesce.c), driven with simulated arrivals
 * and a simulated clock: no thread, no wall clock.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A simulated reader follows the plans the policy makes, as pull.c does:
 * WAKE, it is woken by the next arrival (or pulls what is there); NAP, it
 * pulls at the deadline (or at once with take_first), and an empty nap is
 * reported.  Taking records costs it a little simulated time per record,
 * so that records also arrive while it is busy.  Every plan's deadline and
 * every record's wait (from its arrival to the pull that takes it) are
 * checked against the bound, at rates from 10 Hz to 1 MHz.
 */
#include "coalesce.h"
#include "tap.h"

#include <inttypes.h>
#include <stdio.h>

#define US ((int64_t) 1000)
#define MS ((int64_t) 1000000)
#define SEC ((int64_t) 1000000000)

/* Arrival times, increasing. */
typedef struct
{
  const int64_t *at;
  uint64_t n;
} Arrivals;

typedef struct
{
  uint64_t records;
  uint64_t plans;
  uint64_t naps;                /* plans in NAP mode */
  uint64_t empty_naps;
  uint64_t wakes;               /* wake-ups by an arrival (WAKE mode) */
  int64_t max_wait;             /* longest arrival -> pull */
  /* The mode of the plan that preceded each record's pull. */
  TbqCoalesceMode *mode_before;
} SimResult;

/* Take every arrival up to `t` (the pull); returns how many.  A record's
 * wait counts from its arrival, or from `free_at` (when the reader was
 * done with the records before it) if that is later: time the reader
 * spends taking records is a backlog, not coalescing. */
static uint64_t
sim_pull (const Arrivals * a, uint64_t * next, int64_t t, int64_t free_at,
    SimResult * res, TbqCoalesceMode mode)
{
  uint64_t n = 0;

  while (*next < a->n && a->at[*next] <= t) {
    int64_t from = a->at[*next] > free_at ? a->at[*next] : free_at;
    int64_t wait = t - from;

    if (wait > res->max_wait)
      res->max_wait = wait;
    res->mode_before[*next] = mode;
    (*next)++;
    n++;
  }
  return n;
}

/* Run the reader over the arrivals with `bound`; `cost` per record taken.
 * Checks every plan's deadline against its `now`. */
static void
simulate (const Arrivals * a, int64_t bound, int64_t cost, SimResult * res)
{
  TbqCoalesce c;
  uint64_t next = 0, taken = 0;
  int64_t t = a->at[0] - 1;

  tbq_coalesce_init (&c, bound);
  memset (res, 0, sizeof *res);
  res->mode_before = calloc (a->n, sizeof *res->mode_before);
  CHECK (res->mode_before != NULL);
  while (next < a->n) {
    TbqCoalescePlan p;
    uint64_t n = 0;
    int64_t free_at = t;

    tbq_coalesce_plan (&c, t, taken, &p);
    res->plans++;
    if (p.mode == TBQ_COALESCE_NAP) {
      res->naps++;
      /* The promise: never beyond the bound from the nap's start. */
      CHECK (p.deadline_ns <= t + bound);
      CHECK (p.deadline_ns > t || (p.take_first && p.deadline_ns == t + bound));
    } else {
      CHECK_EQ (p.deadline_ns, (uint64_t) - 1);
      CHECK (p.take_first);
    }
    if (p.take_first) {
      n = sim_pull (a, &next, t, free_at, res, p.mode);
      if (n > 0)
        tbq_coalesce_fed (&c, t);
    }
    if (n == 0 && p.mode == TBQ_COALESCE_NAP) {
      /* At the deadline: counted from the arrival itself (every record
       * there arrived after the last pull). */
      t = p.deadline_ns;
      n = sim_pull (a, &next, t, INT64_MIN, res, p.mode);
      tbq_coalesce_fed (&c, t);
      if (n == 0) {
        res->empty_naps++;
        tbq_coalesce_nap_empty (&c);
      }
    }
    if (n == 0 && next < a->n) {
      /* Woken by the next publish. */
      if (a->at[next] > t)
        t = a->at[next];
      res->wakes++;
      n = sim_pull (a, &next, t, free_at, res, TBQ_COALESCE_WAKE);
      tbq_coalesce_fed (&c, t);
    }
    taken += n;
    res->records += n;
    t += (int64_t) n *cost;
  }
  CHECK_EQ (res->records, a->n);
}

/* `n` arrivals every `period`, starting at 1 s, with up to `jitter` ns of
 * pseudo-random delay each (a fixed seed). */
static int64_t *
periodic (uint64_t n, int64_t period, int64_t jitter)
{
  int64_t *at = calloc (n, sizeof *at);
  uint64_t i, x = 0x9e3779b97f4a7c15ull;

  CHECK (at != NULL);
  for (i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    at[i] = SEC + (int64_t) i *period + (jitter ? (int64_t) (x % jitter) : 0);
    if (i > 0 && at[i] <= at[i - 1])
      at[i] = at[i - 1] + 1;
  }
  return at;
}

static const int64_t rates_hz[] = { 10, 100, 1000, 10000, 100000, 1000000 };

/* At every rate and bound: no deadline beyond the bound (checked in
 * simulate), and no record waits longer than the bound for its pull. */
static void
no_record_waits_longer_than_the_bound_from_10_hz_to_1_mhz (void)
{
  static const int64_t bounds[] = { 1 * US, 100 * US, 1 * MS, 20 * MS };
  size_t ri, bi;
  int jitter;

  for (ri = 0; ri < sizeof rates_hz / sizeof rates_hz[0]; ri++)
    for (bi = 0; bi < sizeof bounds / sizeof bounds[0]; bi++)
      for (jitter = 0; jitter < 2; jitter++) {
        int64_t period = SEC / rates_hz[ri];
        uint64_t n = rates_hz[ri] >= 1000 ? 20000 : 200;
        Arrivals a = { periodic (n, period, jitter ? period : 0), n };
        SimResult res;

        /* The reader keeps up: taking a record costs a tenth of a gap. */
        simulate (&a, bounds[bi], period / 10, &res);
        if (res.max_wait > bounds[bi])
          printf ("# %" PRId64 " Hz, bound %" PRId64 " ns: a record waited %"
              PRId64 " ns\n", rates_hz[ri], bounds[bi], res.max_wait);
        CHECK (res.max_wait <= bounds[bi]);
        free (res.mode_before);
        free ((void *) a.at);
      }
}

/* Dense traffic naps: far fewer wake-ups than records, once at least two
 * records are expected within the bound. */
static void
dense_arrivals_nap_and_sparse_ones_are_woken_per_record (void)
{
  const int64_t bound = 1 * MS;
  size_t ri;

  for (ri = 0; ri < sizeof rates_hz / sizeof rates_hz[0]; ri++) {
    int64_t period = SEC / rates_hz[ri];
    uint64_t n = rates_hz[ri] >= 1000 ? 20000 : 200;
    Arrivals a = { periodic (n, period, 0), n };
    SimResult res;

    simulate (&a, bound, period / 10, &res);
    printf ("# %" PRId64 " Hz: %" PRIu64 " records, %" PRIu64 " plans, %"
        PRIu64 " naps, %" PRIu64 " wake-ups\n", rates_hz[ri], res.records,
        res.plans, res.naps, res.wakes);
    if (2 * period <= bound) {
      /* At most a handful of records before the first nap. */
      CHECK (res.wakes <= 8);
      CHECK (res.naps > 0);
      CHECK (res.records >= res.plans);
    } else {
      /* 1 kHz and slower with a 1 ms bound: every record wakes the
       * reader, as without coalescing. */
      CHECK_EQ (res.naps, 0);
      CHECK_EQ (res.wakes, n);
    }
    free (res.mode_before);
    free ((void *) a.at);
  }
}

/* After a silence, a lone record finds the reader woken per record: it is
 * taken the moment it arrives. */
static void
a_lone_record_after_a_silence_is_taken_at_once (void)
{
  const int64_t bound = 1 * MS;
  const uint64_t dense = 10000;
  int64_t *at = periodic (dense + 3, 10 * US, 0);
  Arrivals a = { at, dense + 3 };
  SimResult res;
  uint64_t k;

  /* 100 kHz for 0.1 s, then three records 2 s apart. */
  for (k = 0; k < 3; k++)
    at[dense + k] = at[dense - 1] + (int64_t) (k + 1) * 2 * SEC;
  simulate (&a, bound, 1 * US, &res);
  CHECK (res.naps > 0);
  /* The dense part ends with an empty nap. */
  CHECK (res.empty_naps >= 1);
  for (k = 0; k < 3; k++)
    CHECK_EQ (res.mode_before[dense + k], TBQ_COALESCE_WAKE);
  free (res.mode_before);
  free (at);
}

/* The transitions, step by step. */
static void
mode_follows_the_arrival_rate (void)
{
  const int64_t bound = 1 * MS;
  TbqCoalesce c;
  TbqCoalescePlan p;
  int64_t t = 5 * SEC;
  uint64_t taken = 0;
  int i;

  tbq_coalesce_init (&c, bound);
  tbq_coalesce_plan (&c, t, taken, &p);
  /* Nothing known yet: woken per record. */
  CHECK_EQ (p.mode, TBQ_COALESCE_WAKE);
  CHECK (p.take_first);
  /* Records 10 us apart: a few are enough to nap. */
  for (i = 0; i < 8 && p.mode == TBQ_COALESCE_WAKE; i++) {
    t += 10 * US;
    tbq_coalesce_fed (&c, t);
    tbq_coalesce_plan (&c, t, ++taken, &p);
  }
  CHECK_EQ (p.mode, TBQ_COALESCE_NAP);
  CHECK (i >= 2);
  /* Fed just now: the nap ends a bound after that pull, nothing first. */
  CHECK_EQ (p.deadline_ns, t + bound);
  CHECK (!p.take_first);
  /* Planning again later: the deadline still counts from the last pull. */
  tbq_coalesce_plan (&c, t + 300 * US, taken, &p);
  CHECK_EQ (p.mode, TBQ_COALESCE_NAP);
  CHECK_EQ (p.deadline_ns, t + bound);
  CHECK (!p.take_first);
  /* A bound after the last pull: take what is there, then nap a bound. */
  tbq_coalesce_plan (&c, t + 2 * bound / 3 + bound / 2, taken + 50, &p);
  CHECK_EQ (p.mode, TBQ_COALESCE_NAP);
  CHECK (p.take_first);
  CHECK_EQ (p.deadline_ns, t + 2 * bound / 3 + bound / 2 + bound);
  taken += 50;
  /* An empty nap: woken per record again. */
  tbq_coalesce_nap_empty (&c);
  t += 3 * bound;
  tbq_coalesce_plan (&c, t, taken, &p);
  CHECK_EQ (p.mode, TBQ_COALESCE_WAKE);
  CHECK_EQ (p.deadline_ns, (uint64_t) - 1);
  /* One record after a gap longer than the bound: still woken per record. */
  t += 5 * bound;
  tbq_coalesce_fed (&c, t);
  tbq_coalesce_plan (&c, t, ++taken, &p);
  CHECK_EQ (p.mode, TBQ_COALESCE_WAKE);
}

/* `n` records taken `gap` apart, each right after the last pull. */
static void
feed (TbqCoalesce * c, int64_t * t, uint64_t * taken, int64_t gap, int n,
    TbqCoalescePlan * p)
{
  int i;

  for (i = 0; i < n; i++) {
    *t += gap;
    tbq_coalesce_fed (c, *t);
    tbq_coalesce_plan (c, *t, ++*taken, p);
  }
}

/* A gap longer than the bound ends napping even when the average says
 * dense. */
static void
a_gap_longer_than_the_bound_ends_napping (void)
{
  const int64_t bound = 1 * MS;
  TbqCoalesce c;
  TbqCoalescePlan p;
  int64_t t = SEC;
  uint64_t taken = 0;

  tbq_coalesce_init (&c, bound);
  feed (&c, &t, &taken, 5 * US, 20, &p);
  CHECK_EQ (p.mode, TBQ_COALESCE_NAP);
  /* Nothing taken for longer than the bound (a kick, a caller's timeout). */
  t += bound + 1;
  tbq_coalesce_plan (&c, t, taken, &p);
  CHECK_EQ (p.mode, TBQ_COALESCE_WAKE);
  /* Dense again: naps again after a few records. */
  feed (&c, &t, &taken, 5 * US, 20, &p);
  CHECK_EQ (p.mode, TBQ_COALESCE_NAP);
  t += 2 * bound;
  tbq_coalesce_fed (&c, t);
  tbq_coalesce_plan (&c, t, ++taken, &p);
  CHECK_EQ (p.mode, TBQ_COALESCE_WAKE);
}

/* Bound 0: always woken per record, whatever the rate. */
static void
bound_zero_never_naps (void)
{
  TbqCoalesce c;
  TbqCoalescePlan p;
  uint64_t i;

  tbq_coalesce_init (&c, 0);
  for (i = 0; i < 1000; i++) {
    tbq_coalesce_fed (&c, (int64_t) i);
    tbq_coalesce_plan (&c, (int64_t) i, i, &p);
    CHECK_EQ (p.mode, TBQ_COALESCE_WAKE);
    CHECK (p.take_first);
  }
}

/* A clock that seems to go back (a "fed" time after `now`) still gives a
 * deadline within the bound. */
static void
deadline_stays_within_the_bound_of_now (void)
{
  const int64_t bound = 1 * MS;
  TbqCoalesce c;
  TbqCoalescePlan p;
  int64_t t = SEC;
  uint64_t taken = 0;

  tbq_coalesce_init (&c, bound);
  feed (&c, &t, &taken, 5 * US, 20, &p);
  CHECK_EQ (p.mode, TBQ_COALESCE_NAP);
  tbq_coalesce_fed (&c, t + 10 * MS);
  tbq_coalesce_plan (&c, t, taken, &p);
  CHECK (p.deadline_ns <= t + bound);
}

TAP_MAIN (TAP_TEST (no_record_waits_longer_than_the_bound_from_10_hz_to_1_mhz),
    TAP_TEST (dense_arrivals_nap_and_sparse_ones_are_woken_per_record),
    TAP_TEST (a_lone_record_after_a_silence_is_taken_at_once),
    TAP_TEST (mode_follows_the_arrival_rate),
    TAP_TEST (a_gap_longer_than_the_bound_ends_napping),
    TAP_TEST (bound_zero_never_naps),
    TAP_TEST (deadline_stays_within_the_bound_of_now))
