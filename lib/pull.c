/* The reader's waits, and the on-demand pull: a waiting reader that moves
 * published records through the copier itself.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * With TBQ_WAKE_ON_DEMAND a writer does not wake the copier on publish; it
 * wakes the reader, and only while the reader says it is hungry (the
 * handshake is the wake module's).  The reader then runs a copier pass
 * itself (tbq_copier_pull), if the copier is not in one: one thread hop
 * from writer to reader, as with a plain queue.  This room sits above both
 * the copier and the reader, so neither calls the other.
 */
#include "reader.h"

typedef struct
{
  TbqReader *r;
  TbqReadyFunc ready;
  void *arg;
  bool on_demand;
  bool pull;                    /* set: woken to pull, not by `ready` */
  uint32_t pull_key;
} WaitArg;

static bool
wait_ready (void *arg)
{
  WaitArg *a = arg;

  if (a->ready (a->arg))
    return true;
  if (a->on_demand && tbq_wake_pull_asked (a->r->wake, a->pull_key)) {
    a->pull = true;
    return true;
  }
  return false;
}

/* Move what writers published, through the copier; true if records moved.
 * When the copier is in a pass (which may be moving sealed blocks only),
 * or when the sink pool has no free block (growing it is the copier's
 * job), hand the work to the copier, current blocks included (the records
 * we wait for may be there): it publishes and wakes us. */
static bool
reader_pull (TbqReader * r)
{
  bool moved;
  TbqStatus st = tbq_copier_pull (r->copier, &moved);

  if (st == TBQ_BUSY || st == TBQ_NO_SPACE) {
    tbq_wake_request_pickup (r->wake);
    tbq_wake_copier (r->wake);
  }
  return moved;
}

static TbqStatus
reader_wait_until (TbqReader * r, TbqReadyFunc ready, void *arg,
    int64_t deadline)
{
  WaitArg a = { r, ready, arg, r->wake->policy == TBQ_WAKE_ON_DEMAND, false,
    0
  };
  TbqStatus st;

  if (a.on_demand) {
    a.pull_key = tbq_wake_reader_hungry (r->wake);
    /* Published before we said we were hungry: nobody will wake us. */
    if (tbq_copier_has_work_now (r->copier) && reader_pull (r)) {
      st = TBQ_OK;
      goto fed;
    }
  }
  for (;;) {
    a.pull = false;
    st = tbq_wait (&r->wake->reader_ev, r->interrupted, r->spins, wait_ready,
        &a, deadline);
    if (st != TBQ_OK || !a.pull)
      break;
    a.pull_key = tbq_wake_pull_key (r->wake);
    if (reader_pull (r))
      break;
  }
fed:
  if (a.on_demand)
    tbq_wake_reader_fed (r->wake);
  return st;
}

static bool
record_ready (void *arg)
{
  return tbq_reader_ready (arg);
}

TbqStatus
tbq_reader_wait (TbqReader * r, int64_t timeout_ns)
{
  if (r == NULL)
    return TBQ_INVALID_ARGUMENT;
  if (tbq_reader_ready (r))
    return TBQ_OK;
  return reader_wait_until (r, record_ready, r, tbq_deadline (timeout_ns));
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
tbq_reader_sleep (TbqReader * r, uint32_t key, int64_t timeout_ns)
{
  SleepArg a;

  if (r == NULL)
    return TBQ_INVALID_ARGUMENT;
  a.r = r;
  a.key = key;
  return reader_wait_until (r, seq_moved, &a, tbq_deadline (timeout_ns));
}
