/* libtbq internals: the coalescing policy, how a waiting reader wants to
 * be woken.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * With on-demand wake a reader that runs dry either asks to be woken per
 * published record (WAKE: the writer's publish wakes it, one system call
 * per record while it sleeps) or naps (NAP: the writer makes no system
 * call; the reader sleeps until a deadline, then takes everything
 * published).  Like a NIC's adaptive interrupt moderation: it naps while
 * records arrive densely enough that at least two are expected within the
 * bound, and asks to be woken per record again after an empty nap or a gap
 * longer than the bound, so a lone record after a silence is delivered at
 * once.
 *
 * The bound.  A nap's deadline is never later than the moment the reader
 * last took records plus the bound, and never later than the nap's start
 * plus the bound.  Every record taken by that pull was published before
 * it, so a record published afterwards waits for the next deadline at
 * most: coalescing delays no record by more than the bound (a reader that
 * is still busy with earlier records is a backlog, not a nap).  Urgent
 * deliveries (tbq_writer_flush()) and interrupts end a nap at once (the
 * wake module's).
 *
 * Pure: the time and the count of records taken come in as arguments, the
 * mode and the deadline go out; it reads no clock and touches nothing
 * shared, so a test can drive it with any arrival pattern.  The reader
 * calls it (pull.c); its state is the reader's.
 */
#ifndef TBQ_COALESCE_H
#define TBQ_COALESCE_H

#include "tbq.h"

#include <stdbool.h>

typedef enum
{
  TBQ_COALESCE_WAKE = 0,        /* woken per published record */
  TBQ_COALESCE_NAP = 1,         /* asleep until the deadline, not woken per record */
} TbqCoalesceMode;

typedef struct
{
  int64_t bound_ns;             /* 0: always WAKE */
  TbqCoalesceMode mode;
  int64_t gap_ns;               /* moving average of the gap between records */
  int64_t mark_ns;              /* when records taken were last counted */
  uint64_t mark_taken;          /* records taken then (a running total) */
  int64_t fed_ns;               /* when the reader last took records */
  bool started;
} TbqCoalesce;

/* How to wait (tbq_coalesce_plan()). */
typedef struct
{
  TbqCoalesceMode mode;
  /* NAP: when to take what was published meanwhile; never later than
   * now + bound.  WAKE: -1 (no deadline of the policy's own). */
  int64_t deadline_ns;
  /* Take what is published before sleeping: always in WAKE mode, and in
   * NAP mode when the last pull is a bound or more ago. */
  bool take_first;
} TbqCoalescePlan;

void tbq_coalesce_init (TbqCoalesce * c, int64_t bound_ns);

/* The reader ran dry at `now_ns` having taken `taken` records in all (a
 * running total, records of any kind): how it waits.  Updates the
 * arrival estimate. */
void tbq_coalesce_plan (TbqCoalesce * c, int64_t now_ns, uint64_t taken,
    TbqCoalescePlan * plan);

/* The reader took records (its wait returned with records) at `now_ns`. */
void tbq_coalesce_fed (TbqCoalesce * c, int64_t now_ns);

/* A nap reached its deadline and nothing had been published: traffic
 * thinned, be woken per record again. */
void tbq_coalesce_nap_empty (TbqCoalesce * c);

#endif /* TBQ_COALESCE_H */
