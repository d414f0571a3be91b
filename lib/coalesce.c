/* The coalescing policy: the arrival estimate, the mode and the nap
 * deadline.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The estimate is a moving average (weight 1/4) of the gap between
 * records: each plan divides the time since the last counted plan by the
 * records taken since.  It is capped at the bound, so that a silence
 * costs at most a few dense gaps before naps start again.  See
 * coalesce.h for what the policy promises.
 */
#include "coalesce.h"

/* A new gap sample moves the average by 1/2^EWMA_SHIFT of the difference. */
#define EWMA_SHIFT 2

void
tbq_coalesce_init (TbqCoalesce * c, int64_t bound_ns)
{
  c->bound_ns = bound_ns > 0 ? bound_ns : 0;
  if (c->bound_ns > TBQ_COALESCE_MAX_NS)
    c->bound_ns = TBQ_COALESCE_MAX_NS;
  c->mode = TBQ_COALESCE_WAKE;
  c->gap_ns = c->bound_ns;
  c->mark_ns = 0;
  c->mark_taken = 0;
  c->fed_ns = 0;
  c->started = false;
}

/* Records were taken since the mark: a gap sample. */
static void
coalesce_sample (TbqCoalesce * c, int64_t now_ns, uint64_t n)
{
  int64_t dt = now_ns > c->mark_ns ? now_ns - c->mark_ns : 0;
  int64_t sample = (int64_t) ((uint64_t) dt / n);

  if (sample > c->bound_ns)
    /* A gap longer than the bound: traffic is sparse now. */
    c->gap_ns = c->bound_ns;
  else
    c->gap_ns += (sample - c->gap_ns) / (1 << EWMA_SHIFT);
  c->mark_ns = now_ns;
}

void
tbq_coalesce_plan (TbqCoalesce * c, int64_t now_ns, uint64_t taken,
    TbqCoalescePlan * plan)
{
  plan->mode = TBQ_COALESCE_WAKE;
  plan->deadline_ns = -1;
  plan->take_first = true;
  if (c->bound_ns == 0)
    return;
  if (!c->started) {
    c->started = true;
    c->mark_ns = c->fed_ns = now_ns;
  } else if (taken != c->mark_taken) {
    coalesce_sample (c, now_ns, taken - c->mark_taken);
  } else if (now_ns - c->mark_ns > c->bound_ns) {
    /* Nothing for longer than the bound. */
    c->gap_ns = c->bound_ns;
  }
  c->mark_taken = taken;
  /* Nap while at least two records are expected within the bound. */
  c->mode = c->gap_ns <= c->bound_ns / 2 ? TBQ_COALESCE_NAP
      : TBQ_COALESCE_WAKE;
  if (c->mode == TBQ_COALESCE_WAKE)
    return;
  plan->mode = TBQ_COALESCE_NAP;
  if (c->fed_ns > now_ns)
    c->fed_ns = now_ns;
  /* No overflow: both times are a monotonic clock's, the bound at most
   * TBQ_COALESCE_MAX_NS. */
  if (now_ns - c->fed_ns < c->bound_ns) {
    /* Records published since the last pull were published after it. */
    plan->deadline_ns = c->fed_ns + c->bound_ns;
    plan->take_first = false;
  } else {
    plan->deadline_ns = now_ns + c->bound_ns;
  }
}

void
tbq_coalesce_fed (TbqCoalesce * c, int64_t now_ns)
{
  c->fed_ns = now_ns;
}

void
tbq_coalesce_nap_empty (TbqCoalesce * c)
{
  c->gap_ns = c->bound_ns;
  c->mode = TBQ_COALESCE_WAKE;
}
