/* libtbq internals: the copier.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The copier moves published records from every registered writer's source
 * blocks into the sink pool, returns each source block as soon as it is
 * consumed, and frees closed writers.  It runs as steps in a host's task,
 * as a loop in a host's thread, or on a thread of the library's own.  Its
 * state is owned by whoever holds `busy` (block.h): the copier, or a
 * waiting reader pulling (pull.c, the room above).
 */
#ifndef TBQ_COPIER_H
#define TBQ_COPIER_H

#include "spill.h"
#include "writer.h"

#include <pthread.h>

typedef struct TbqCopier TbqCopier;

struct TbqCopier
{
  /* What the copier reaches; set up once. */
  TbqRegistry *registry;
  TbqWake *wake;
  TbqPool *sink;
  TbqExtents *extents;          /* their idle cache is trimmed here too */
  const _Atomic int *interrupted;
  uint32_t spins;               /* busy-wait rounds before sleeping */
  TbqSpill *spill;              /* NULL, or set once before the copier runs */
  /* A copy group's member (group.h): its threads run the passes, which
   * never wait for sink space (a full sink pool is TBQ_NO_SPACE, and the
   * group serves the others).  `group_serving` is the group's flag. */
  bool grouped;
  const _Atomic int *group_serving;

  /* Owned by whoever holds `busy`.  The counters are read by stats. */
  _Alignas (TBQ_CACHELINE) TbqBlock *sink_cur;
  unsigned char *spos;          /* where the next copied byte goes */
  unsigned char *send;          /* end of sink_cur's data area */
  uint32_t spub_off;            /* last offset stored to sink_cur->published */
  TbqPickup pickup;
  _Atomic uint64_t bytes_copied;
  _Atomic uint64_t passes;
  _Atomic uint64_t wakeups;
  _Atomic uint64_t sink_pressure_waits;
  _Atomic int busy;
  /* Grouped: the last pass stopped at a full sink pool (relaxed: the
   * group's readiness check only). */
  _Atomic int sink_blocked;
  /* Grouped: this wait for a sink block is counted in
   * sink_pressure_waits (once per wait, however many passes find the
   * pool full or unable to grow); cleared when a block is taken. */
  bool sink_wait_counted;

  /* The library's copier thread (tbq_queue_start()). */
  _Alignas (TBQ_CACHELINE) pthread_t thread;
  _Atomic int thread_running;
  _Atomic int stop;
};

/* Takes the first sink block: one reference for the copier, one for the
 * reader, which starts there (`*first`). */
TbqStatus tbq_copier_init (TbqCopier * c, TbqRegistry * registry,
    TbqWake * wake, TbqPool * sink, TbqExtents * extents,
    const _Atomic int *interrupted, uint32_t spins, TbqBlock ** first);
/* Drops the copier's reference to its sink block. */
void tbq_copier_fini (TbqCopier * c);

/* A host's step (tbq_copier_step()): TBQ_BUSY while the library's thread
 * exists.  TBQ_NO_MEMORY when the sink pool could not grow (the next step
 * waits for the reader instead). */
TbqStatus tbq_copier_host_step (TbqCopier * c, int64_t timeout_ns);
/* Steps until interrupted (tbq_copier_run()). */
TbqStatus tbq_copier_host_run (TbqCopier * c);
TbqStatus tbq_copier_thread_start (TbqCopier * c);
void tbq_copier_thread_stop (TbqCopier * c);

/* A waiting reader moves published records itself: TBQ_BUSY while the
 * copier is in a pass, TBQ_NO_SPACE when it needs a sink block that is not
 * free (growing is the copier's), TBQ_INTERRUPTED, else TBQ_OK with
 * *moved set when records moved. */
TbqStatus tbq_copier_pull (TbqCopier * c, bool *moved);
/* Any thread: whether a pass would move records now. */
bool tbq_copier_has_work_now (TbqCopier * c);
/* Any thread: whether the library's copier thread runs, the queue is not
 * interrupted, and some writer published records it has not moved yet. */
bool tbq_copier_thread_owes (TbqCopier * c);

/* A copy group's thread (group.c): one pass owning the copier, which
 * never waits.  TBQ_BUSY when another thread or a pulling reader holds it,
 * TBQ_INTERRUPTED while the queue is interrupted, TBQ_NO_SPACE when the
 * sink pool (or the group's cap) is full, else the pass's status. */
TbqStatus tbq_copier_group_pass (TbqCopier * c, bool *moved);
/* Any thread, as the group's wait condition: whether a pass would do
 * something now (the registry's lock is taken: another group thread may
 * be freeing a writer). */
bool tbq_copier_group_ready (TbqCopier * c);
/* Any thread, after an interrupt: returns once no pass runs; none starts
 * before the queue is resumed. */
void tbq_copier_wait_idle (TbqCopier * c);

/* Publish what was copied last (before a discard, with the copier
 * stopped). */
void tbq_copier_publish_sink (TbqCopier * c);
/* Interrupt: wake a copier waiting for sink space. */
void tbq_copier_wake (TbqCopier * c);
/* The copier's counters and the sink pool's into `st`. */
void tbq_copier_stats (TbqCopier * c, TbqStats * st);

#endif /* TBQ_COPIER_H */
